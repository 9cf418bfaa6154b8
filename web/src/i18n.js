// labctl's own words on the page, in English and Japanese. The lab's texts
// come from the server in the lab's language; these are the page's buttons,
// states and messages.

const words = {
  en: {
    skipToTerminal: 'Skip to the terminal',
    steps: 'Steps',
    grade: 'Grade',
    gradeButton: 'Grade the lab',
    grading: 'Grading…',
    reportJSON: 'JSON report',
    reportJUnit: 'JUnit report',
    why: 'Why this step',
    labWhy: 'Why this lab matters',
    copy: 'Copy',
    copied: 'Copied',
    copyRefused: 'The browser refused to copy',
    runInTerminal: 'Run in the terminal',
    codeRefused: 'Not offered: this block holds {0}, a character the page does not show but the terminal would get. Tell the lab\'s author.',
    codeMarkup: 'Not offered: this block holds markup, which the page may show otherwise than it would be typed.',
    runRefusedTab: 'Not run: this block holds a tab (U+0009), on which the shell would complete the word and type more than is shown. Copy it instead.',
    solution: 'Solution',
    solutionButton: 'Show the solution',
    solutionConfirm: 'Show this step\'s solution? The grade will say that you looked at it.',
    hintButton: 'Show a hint',
    checkButton: 'Check this step',
    checking: 'Checking…',
    workspace: 'Terminals and previews',
    terminals: 'Terminals',
    previews: 'Previews',
    newTerminal: 'New terminal',
    terminalHelp: 'Shift+Tab leaves the terminal. Ctrl+Shift+C copies, Ctrl+Shift+V pastes.',
    terminalN: 'Terminal {0}',
    terminalLabel: 'Terminal {0}: a shell in the lab sandbox',
    passed: 'passed',
    current: 'current step',
    todo: 'not yet',
    stepN: 'Step {0}',
    stepPassed: 'Step {0} passed: {1}',
    allDone: 'All {0} steps are done. Grade the lab to see your score.',
    noHints: 'This step has no hints.',
    noMoreHints: 'That was the last hint for this step.',
    hintN: 'Hint {0}/{1}',
    pass: 'passed',
    fail: 'failed',
    error: 'could not run',
    likelyMistake: 'This looks like a known mistake: {0}',
    checkPassed: 'Step passed: {0}',
    checkNotPassed: '{0}: {1} of {2} required checks do not pass.',
    score: 'Score: {0} / {1} ({2})',
    gradePassed: 'passed',
    gradeNotPassed: 'not passed',
    reconnecting: 'Connection lost; reconnecting in {0} s…',
    connected: 'Connected.',
    shellEnded: 'The shell ended (exit code {0}). Press Enter to start a new one.',
    requestFailed: 'The request failed: {0}',
    serverGone: 'labctl ui does not answer. Is it still running?',
    forbidden: 'Open the URL that labctl ui printed.',
    previewOf: 'Preview of {0}',
    language: 'Language',
  },
  ja: {
    skipToTerminal: 'ターミナルへ移動',
    steps: 'ステップ',
    grade: '採点',
    gradeButton: 'ラボを採点する',
    grading: '採点中…',
    reportJSON: 'JSON レポート',
    reportJUnit: 'JUnit レポート',
    why: 'このステップの意味',
    labWhy: 'なぜ重要なのか',
    copy: 'コピー',
    copied: 'コピーしました',
    copyRefused: 'ブラウザーがコピーを拒否しました',
    runInTerminal: 'ターミナルで実行',
    codeRefused: '使用できません: このブロックには {0} が含まれています。ページには表示されませんが、ターミナルには送られる文字です。ラボの作者に知らせてください。',
    codeMarkup: '使用できません: このブロックにはマークアップが含まれており、表示と入力される内容が異なる可能性があります。',
    runRefusedTab: '実行できません: このブロックにはタブ (U+0009) が含まれています。シェルが単語を補完し、表示されていない文字まで入力されます。コピーして使ってください。',
    solution: '解答',
    solutionButton: '解答を表示',
    solutionConfirm: 'このステップの解答を表示しますか?解答を見たことは成績に記録されます。',
    hintButton: 'ヒントを見る',
    checkButton: 'このステップを確認',
    checking: '確認中…',
    workspace: 'ターミナルとプレビュー',
    terminals: 'ターミナル',
    previews: 'プレビュー',
    newTerminal: '新しいターミナル',
    terminalHelp: 'Shift+Tab でターミナルから出ます。Ctrl+Shift+C でコピー、Ctrl+Shift+V で貼り付け。',
    terminalN: 'ターミナル {0}',
    terminalLabel: 'ターミナル {0}: ラボのサンドボックスのシェル',
    passed: '完了',
    current: '現在のステップ',
    todo: '未着手',
    stepN: 'ステップ {0}',
    stepPassed: 'ステップ {0} 完了: {1}',
    allDone: '全 {0} ステップが完了しました。採点して得点を確認できます。',
    noHints: 'このステップにヒントはありません。',
    noMoreHints: 'ヒントはこれで全部です。',
    hintN: 'ヒント {0}/{1}',
    pass: '合格',
    fail: '不合格',
    error: '実行できず',
    likelyMistake: 'よくある間違いのようです: {0}',
    checkPassed: 'ステップ完了: {0}',
    checkNotPassed: '{0}: 必須チェック {2} 件中 {1} 件が通っていません。',
    score: '得点: {0} / {1}（{2}）',
    gradePassed: '合格',
    gradeNotPassed: '不合格',
    reconnecting: '接続が切れました。{0} 秒後に再接続します…',
    connected: '接続しました。',
    shellEnded: 'シェルが終了しました（終了コード {0}）。Enter で新しいシェルを開きます。',
    requestFailed: 'リクエストに失敗しました: {0}',
    serverGone: 'labctl ui が応答しません。まだ動いていますか?',
    forbidden: 'labctl ui が表示した URL を開いてください。',
    previewOf: '{0} のプレビュー',
    language: '言語',
  },
};

// pickLanguage chooses the page's language: the lab's own language when the
// browser accepts it, else the browser's first language the page knows, else
// the lab's language, else English.
export function pickLanguage(labLang, browserLangs) {
  const base = (tag) => String(tag || '').toLowerCase().split('-')[0];
  const known = (l) => Object.prototype.hasOwnProperty.call(words, l);
  const accepted = (browserLangs || []).map(base);
  const lab = base(labLang);
  if (known(lab) && accepted.includes(lab)) return lab;
  const first = accepted.find(known);
  if (first) return first;
  return known(lab) ? lab : 'en';
}

let current = words.en;

export function setLanguage(lang) {
  current = words[lang] || words.en;
  document.documentElement.lang = words[lang] ? lang : 'en';
  for (const el of document.querySelectorAll('[data-i18n]')) {
    el.textContent = t(el.dataset.i18n);
  }
  for (const el of document.querySelectorAll('[data-i18n-label]')) {
    el.setAttribute('aria-label', t(el.dataset.i18nLabel));
  }
}

// t returns the word for key with {0}, {1}, … replaced by args.
export function t(key, ...args) {
  const s = current[key] ?? words.en[key] ?? key;
  return s.replace(/\{(\d)\}/g, (m, i) => (args[i] === undefined ? m : String(args[i])));
}
