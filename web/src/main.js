// The page of labctl ui: the lab's steps and texts beside terminals and
// previews. Server HTML (goal, instructions, why, hints) is HTML the server
// rendered from the lab's Markdown and sanitised; every other text from the
// server or the learner's lab is set with textContent.

import './app.css';
import { api, setTextLanguage } from './api.js';
import { pickLanguage, setLanguage, t } from './i18n.js';
import { TerminalSession } from './terminal.js';

const $ = (sel) => document.querySelector(sel);

const page = {
  lab: null,
  state: { current: '', passed: [], done: false },
  known: null, // passed step ids already announced
  selected: '',
  follow: true, // the selection follows the current step until the learner picks one
  hintsShown: new Map(), // step id -> hints revealed
  solutions: new Map(), // step id -> the solution's HTML, once the learner asked
  terminals: new Map(), // id -> TerminalSession
  previews: new Map(), // url -> panel
  nextTerminal: 1,
  labVersion: undefined, // of the lab shown (labctl ui --watch counts its reloads)
  labProblem: '', // what is wrong with the last edit of the lab, shown in the banner
};

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else if (k.startsWith('data-') || k.startsWith('aria-') || k === 'role') e.setAttribute(k, v);
    else e[k] = v;
  }
  e.append(...children);
  return e;
}

// setHTML puts server-sanitised HTML (rendered from the lab's Markdown) into
// a container, in the lab's language.
function setHTML(container, html) {
  container.innerHTML = html || '';
  container.lang = page.lab?.text || '';
  for (const a of container.querySelectorAll('a[href]')) {
    if (!a.getAttribute('href').startsWith('#')) {
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
    }
  }
  addCodeButtons(container);
}

// shellBlock: a code block the learner may run, one in a shell's language
// or in none; a block of YAML, JSON or another language is only copied.
const shellBlock = (code) => !/\blanguage-/.test(code.className) || /\blanguage-(sh|bash|shell|console|zsh)\b/.test(code.className);

// unshownRE matches a character the page does not show but a terminal
// gets: a control character, a format character (bidirectional controls,
// zero-width spaces and joiners, soft hyphen, byte order mark), a line or
// paragraph separator, a variation selector, another default-ignorable
// character (the Hangul fillers) and a lone surrogate. The lab loader
// (lab.FirstUnshown) refuses a lab whose code blocks hold one; the page
// refuses them again.
const unshownRE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Variation_Selector}\p{Default_Ignorable_Code_Point}]/u;

// unshownChar is the first character of a code block's text that the page
// does not show but the terminal would get, as U+XXXX; '' for none. A tab
// counts in a block to run (the shell completes the word on it), a newline
// never (each line is typed and ended by Enter, as shown).
function unshownChar(text, toRun) {
  for (const ch of text) {
    if (ch === '\n' || (ch === '\t' && !toRun)) continue;
    if (unshownRE.test(ch)) return `U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return '';
}

// addCodeButtons gives each code block a Copy button and, for a shell's
// block, a Run button that types it into the terminal on show, as if the
// learner had typed it: nothing is typed before the learner's click. A
// block holding markup or a character the page does not show is neither
// copied nor run, and a tab keeps a block from being run: its buttons are
// disabled, and a note under them says why.
let refusedNotes = 0;
function addCodeButtons(container) {
  for (const pre of container.querySelectorAll('pre')) {
    const code = pre.querySelector('code') || pre;
    const text = code.textContent.replace(/\n+$/, '');
    const toRun = shellBlock(code);
    // The server renders a block as text alone; markup inside would be
    // text the page might show otherwise than it is typed.
    const markup = code.children.length > 0;
    const hidden = unshownChar(text, false);
    const copy = el('button', { type: 'button', class: 'code-copy', text: t('copy') });
    copy.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(text);
        copy.textContent = t('copied');
      } catch {
        copy.textContent = t('copyRefused');
      }
      setTimeout(() => { copy.textContent = t('copy'); }, 2000);
    });
    const bar = el('div', { class: 'code-actions' }, copy);
    let refused = '';
    if (markup || hidden) {
      refused = markup ? t('codeMarkup') : t('codeRefused', hidden);
      copy.disabled = true;
    }
    if (toRun) {
      const run = el('button', { type: 'button', class: 'code-run', text: t('runInTerminal') });
      if (!refused && unshownChar(text, true)) refused = t('runRefusedTab');
      if (refused) run.disabled = true;
      else run.addEventListener('click', () => typeInTerminal(text));
      bar.append(run);
    }
    pre.after(bar);
    if (refused) {
      const note = el('p', { class: 'code-refused', id: `code-refused-${++refusedNotes}`, text: refused });
      for (const b of bar.querySelectorAll('button:disabled')) b.setAttribute('aria-describedby', note.id);
      bar.after(note);
    }
  }
}

// typeInTerminal types text into the terminal on show (a new one when
// none is), each line ended by Enter, and gives it the focus. It types
// nothing that the page would not show.
function typeInTerminal(text) {
  if (unshownChar(text, true)) return;
  const tab = document.querySelector('#terminal-tabs [role=tab][aria-selected=true]')
    || document.querySelector('#terminal-tabs [role=tab]');
  let session = tab && page.terminals.get(tab.dataset.terminal);
  if (!session) session = addTerminal(true);
  else selectTab(tab, true);
  session.send(session.encoder.encode(text.replace(/\n/g, '\r') + '\r'));
}

function say(text) {
  $('#banner').textContent = text;
}

function stepIndex(id) {
  return page.lab.steps.findIndex((s) => s.id === id);
}

function stepState(id) {
  if (page.state.passed.includes(id)) return 'passed';
  if (id === page.state.current) return 'current';
  return 'todo';
}

const marks = { passed: '✓', current: '→', todo: '○' };

function renderSteps() {
  const list = $('#steps');
  const items = page.lab.steps.map((s, i) => {
    const state = stepState(s.id);
    const button = el('button', {
      type: 'button',
      class: 'step-button',
      'aria-current': s.id === page.selected ? 'step' : 'false',
    },
    el('span', { class: 'mark', 'aria-hidden': 'true', text: marks[state] }),
    el('span', { class: 'step-name', text: `${i + 1}. ${s.title}`, lang: page.lab.text }), ' ',
    el('span', { class: 'state-word', text: t(state) }));
    button.addEventListener('click', () => select(s.id, true));
    return el('li', { 'data-step': s.id, 'data-state': state }, button);
  });
  const focused = document.activeElement?.closest?.('li[data-step]')?.dataset.step;
  list.replaceChildren(...items);
  if (focused) list.querySelector(`li[data-step="${CSS.escape(focused)}"] button`)?.focus();
}

function renderStep() {
  const step = page.lab.steps.find((s) => s.id === page.selected);
  if (!step) return;
  const i = stepIndex(step.id);
  const title = $('#step-title');
  title.textContent = `${t('stepN', i + 1)}: ${step.title}`;
  title.lang = page.lab.text;
  const state = stepState(step.id);
  $('#step-state').textContent = `${marks[state]} ${t(state)}`;
  $('#step-state').dataset.state = state;
  setHTML($('#step-instructions'), step.instructions);
  const why = $('#step-why');
  why.hidden = !step.why;
  setHTML($('#step-why-text'), step.why);
  renderHints(step);
  renderSolution(step);
}

// renderSolution offers a step's solution behind a button; its text comes
// from the server only when the learner asks, and the server records that
// they did (the grade says so).
function renderSolution(step) {
  const html = page.solutions.get(step.id);
  $('#solution').hidden = !step.hasSolution || html !== undefined;
  const box = $('#step-solution');
  box.hidden = html === undefined;
  box.open = html !== undefined;
  setHTML($('#step-solution-text'), html || '');
}

async function showSolution() {
  const step = page.lab.steps.find((s) => s.id === page.selected);
  if (!step?.hasSolution || !window.confirm(t('solutionConfirm'))) return;
  try {
    const answer = await api.solution(step.id);
    page.solutions.set(step.id, answer.html);
  } catch (err) {
    say(err.message);
    return;
  }
  if (page.selected === step.id) renderSolution(step);
}

function renderHints(step) {
  const shown = page.hintsShown.get(step.id) || 0;
  const hints = step.hints || [];
  const list = $('#hints');
  list.replaceChildren(...hints.slice(0, shown).map((h, i) => {
    const body = el('div', { class: 'prose' });
    setHTML(body, h);
    return el('li', {}, el('span', { class: 'hint-number', text: t('hintN', i + 1, hints.length) }), body);
  }));
  // #hint stays enabled: pressing it when no hint is left says so.
}

function select(id, byLearner) {
  if (page.selected !== id) {
    $('#check-results').replaceChildren();
    $('#check-summary').textContent = '';
  }
  page.selected = id;
  if (byLearner) page.follow = id === page.state.current;
  renderSteps();
  renderStep();
}

function showHint() {
  const step = page.lab.steps.find((s) => s.id === page.selected);
  const hints = step?.hints || [];
  const shown = page.hintsShown.get(step.id) || 0;
  if (shown >= hints.length) {
    $('#check-summary').textContent = hints.length ? t('noMoreHints') : t('noHints');
    return;
  }
  page.hintsShown.set(step.id, shown + 1);
  renderHints(step);
  $('#hints').lastElementChild?.setAttribute('tabindex', '-1');
  $('#hints').lastElementChild?.focus();
}

function checkItem(c) {
  // The status and its mark are labctl's (report.StatusLook), the word the page's.
  const status = ['pass', 'fail', 'error'].includes(c.status) ? c.status : 'error';
  const li = el('li', { 'data-check': c.name, 'data-status': status },
    el('span', { class: 'mark', 'aria-hidden': 'true', text: c.mark || '!' }), ' ',
    el('span', { class: 'state-word', text: t(status) }), ' ',
    el('span', { class: 'check-name', text: c.description || c.name, lang: page.lab.text }));
  if (c.message) li.append(el('p', { class: 'message', text: c.message }));
  if (c.mistake) {
    li.append(el('div', { class: 'mistake', lang: page.lab.text },
      el('p', { class: 'mistake-name', text: t('likelyMistake', c.mistake.name) }),
      el('p', { class: 'mistake-explain', text: c.mistake.explain || '' })));
  }
  return li;
}

async function check() {
  const button = $('#check');
  const step = page.selected;
  button.disabled = true;
  $('#check-summary').textContent = t('checking');
  try {
    const res = await api.check(step);
    if (page.selected !== res.step && res.step) select(res.step, false);
    const checks = res.checks || [];
    $('#check-results').replaceChildren(...checks.map(checkItem));
    const s = page.lab.steps[stepIndex(res.step || step)];
    const title = s ? s.title : res.step;
    $('#check-summary').textContent = res.passed
      ? t('checkPassed', title)
      : t('checkNotPassed', title, res.notPassed, res.required);
    await poll();
  } catch (err) {
    $('#check-summary').textContent = err.message;
  } finally {
    button.disabled = false;
  }
}

async function grade() {
  const button = $('#grade');
  button.disabled = true;
  $('#grade-result').textContent = t('grading');
  try {
    const r = await api.grade();
    const verdict = r.passed ? t('gradePassed') : t('gradeNotPassed');
    const text = t('score', r.score, r.maxScore, verdict);
    $('#grade-result').textContent = text;
    $('#grade-result').dataset.passed = String(Boolean(r.passed));
    $('#report-json').hidden = false;
    $('#report-junit').hidden = false;
    say(text);
  } catch (err) {
    $('#grade-result').textContent = err.message;
  } finally {
    button.disabled = false;
  }
}

function applyState(st) {
  const before = page.state;
  page.state = { current: st.current || '', passed: st.passed || [], done: Boolean(st.done) };
  if (page.known === null) {
    page.known = new Set(page.state.passed);
  } else {
    const fresh = page.state.passed.filter((id) => !page.known.has(id));
    page.known = new Set(page.state.passed);
    if (fresh.length) {
      const id = fresh[fresh.length - 1];
      const i = stepIndex(id);
      let text = t('stepPassed', i + 1, i >= 0 ? page.lab.steps[i].title : id);
      if (page.state.done) text += ' ' + t('allDone', page.lab.steps.length);
      say(text);
      refreshPreviews();
    }
  }
  if (page.follow && page.state.current && page.state.current !== page.selected) {
    select(page.state.current, false);
  } else if (!page.selected) {
    select(page.state.current || page.lab.steps[0]?.id || '', false);
  } else if (before.current !== page.state.current || before.passed.join() !== page.state.passed.join()) {
    renderSteps();
    renderStep();
  }
}

let polling = false;
async function poll() {
  if (polling) return;
  polling = true;
  try {
    const st = await api.state();
    if (page.labVersion !== undefined && st.labVersion !== page.labVersion) await reloadLab();
    page.labVersion = st.labVersion;
    applyState(st);
    if (page.pollError || (st.labProblem || '') !== page.labProblem) say(st.labProblem || '');
    page.labProblem = st.labProblem || '';
    page.pollError = false;
  } catch (err) {
    say(err.message);
    page.pollError = true;
  } finally {
    polling = false;
  }
}

// Tabs: terminals and previews share one panel area; one tab is selected.

// Each tablist keeps one tab stop: its selected tab, or its first tab when
// the selected panel belongs to the other tablist.
function setTabStops() {
  for (const list of document.querySelectorAll('.tabbar [role=tablist]')) {
    const tabs = [...list.querySelectorAll('[role=tab]')];
    const stop = tabs.find((b) => b.getAttribute('aria-selected') === 'true') || tabs[0];
    for (const b of tabs) b.tabIndex = b === stop ? 0 : -1;
  }
}

function selectTab(tab, focusPanel) {
  for (const b of document.querySelectorAll('.tabbar [role=tab]')) {
    const on = b === tab;
    b.setAttribute('aria-selected', String(on));
    document.getElementById(b.getAttribute('aria-controls')).hidden = !on;
  }
  setTabStops();
  const panel = document.getElementById(tab.getAttribute('aria-controls'));
  const frame = panel.querySelector('iframe');
  if (frame && !frame.getAttribute('src')) frame.src = tab.dataset.preview;
  const session = page.terminals.get(tab.dataset.terminal);
  if (session) {
    session.refit();
    if (focusPanel) session.focus();
  }
}

function tabKeys(e) {
  const list = e.target.closest('[role=tablist]');
  if (!list || e.target.getAttribute('role') !== 'tab') return;
  const tabs = [...list.querySelectorAll('[role=tab]')];
  const i = tabs.indexOf(e.target);
  let next = -1;
  if (e.key === 'ArrowRight') next = (i + 1) % tabs.length;
  else if (e.key === 'ArrowLeft') next = (i - 1 + tabs.length) % tabs.length;
  else if (e.key === 'Home') next = 0;
  else if (e.key === 'End') next = tabs.length - 1;
  if (next < 0) return;
  e.preventDefault();
  tabs[next].focus();
  selectTab(tabs[next], false);
}

function randomId() {
  const b = new Uint8Array(6);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => (x % 36).toString(36)).join('');
}

// The open terminals' ids live in sessionStorage, so that reloading the page
// attaches the same shells again.
const storeKey = 'labctl-terminals';

function rememberTerminals() {
  try {
    sessionStorage.setItem(storeKey, JSON.stringify([...page.terminals.keys()]));
  } catch {
    // storage refused: a reload then starts new shells
  }
}

function rememberedTerminals() {
  try {
    const ids = JSON.parse(sessionStorage.getItem(storeKey) || '[]');
    return Array.isArray(ids) ? ids.filter((id) => /^[a-z0-9]{1,16}$/.test(id)) : [];
  } catch {
    return [];
  }
}

function addTerminal(focus, known) {
  const n = page.nextTerminal++;
  const id = known || `t${n}${randomId()}`.slice(0, 16);
  const panelId = `panel-${id}`;
  const tab = el('button', {
    type: 'button', role: 'tab', id: `tab-${id}`, 'data-terminal': id,
    'aria-controls': panelId, 'aria-selected': 'false', tabIndex: -1, text: t('terminalN', n),
  });
  const panel = el('div', {
    class: 'terminal', id: panelId, role: 'tabpanel', 'data-terminal': id,
    'aria-label': t('terminalLabel', n), hidden: true,
  });
  tab.addEventListener('click', () => selectTab(tab, true));
  $('#terminal-tabs').append(tab);
  $('#panels').append(panel);
  const session = new TerminalSession(id, panel, {
    onStatus: (_, text) => tab.classList.toggle('offline', text !== ''),
  });
  page.terminals.set(id, session);
  rememberTerminals();
  selectTab(tab, focus);
  return session;
}

async function refreshPreviews() {
  let list;
  try {
    list = await api.previews();
  } catch {
    return; // previews are extra; the banner keeps the page's real errors
  }
  const seen = new Set();
  for (const p of list || []) {
    if (typeof p.url !== 'string' || !p.url.startsWith('/preview/')) continue;
    seen.add(p.url);
    if (page.previews.has(p.url)) continue;
    const key = `${page.previews.size + 1}`;
    const name = `${p.service}:${p.port}`;
    const tab = el('button', {
      type: 'button', role: 'tab', id: `ptab-${key}`, 'data-preview': p.url,
      'aria-controls': `ppanel-${key}`, 'aria-selected': 'false', tabIndex: -1,
      text: name, title: `${p.namespace}/${name}`,
    });
    const frame = el('iframe', {
      title: t('previewOf', `${p.namespace}/${name}`),
      // The learner's app runs in its own opaque origin: it cannot reach
      // this page's API or its cookie.
      sandbox: 'allow-scripts allow-forms allow-popups',
      referrerPolicy: 'no-referrer',
    });
    const panel = el('div', {
      class: 'preview', id: `ppanel-${key}`, role: 'tabpanel', 'data-preview': p.url, hidden: true,
    }, frame);
    tab.addEventListener('click', () => selectTab(tab, true));
    $('#preview-tabs').append(tab);
    $('#panels').append(panel);
    page.previews.set(p.url, panel);
  }
  for (const [url, panel] of page.previews) {
    if (seen.has(url)) continue;
    const tab = document.querySelector(`[role=tab][aria-controls="${panel.id}"]`);
    if (tab?.getAttribute('aria-selected') === 'true') {
      const first = document.querySelector('#terminal-tabs [role=tab]');
      if (first) selectTab(first, false);
    }
    tab?.remove();
    panel.remove();
    page.previews.delete(url);
  }
  setTabStops();
}

// The learner's choice among the lab's languages is kept in the browser,
// for this address of labctl ui.
const languageKey = 'labctl.language';

function storedLanguage() {
  try {
    return localStorage.getItem(languageKey) || '';
  } catch {
    return '';
  }
}

// showLanguages offers the lab's languages when it has more than one; a
// choice reloads the page in it (the terminals re-attach and speak it).
function showLanguages() {
  const langs = page.lab.languages || [];
  const box = $('#lab-language');
  box.hidden = langs.length < 2;
  if (box.hidden) return;
  $('#lab-language-select').replaceChildren(...langs.map((l) => el('option', { value: l.tag, text: l.name, lang: l.tag, selected: l.tag === page.lab.text })));
}

function chooseLanguage() {
  const tag = $('#lab-language-select').value;
  try {
    localStorage.setItem(languageKey, tag);
  } catch {
    // without storage the choice lasts for this page only
  }
  setTextLanguage(tag);
  location.reload();
}

// showLab shows the lab's own texts: its title, goal and why, and its
// languages.
function showLab() {
  page.lab.steps = page.lab.steps || [];
  const title = $('#lab-title');
  title.textContent = page.lab.title || page.lab.name;
  title.lang = page.lab.text;
  document.title = `${page.lab.title || page.lab.name} · labctl`;
  setHTML($('#lab-goal'), page.lab.goal);
  $('#lab-why').hidden = !page.lab.why;
  setHTML($('#lab-why-text'), page.lab.why);
  showLanguages();
}

// reloadLab shows the lab again after its file was edited (labctl ui
// --watch): its texts, steps and solutions as they are now; the learner's
// place is kept.
async function reloadLab() {
  page.lab = await api.lab();
  page.solutions = new Map();
  showLab();
  if (!page.lab.steps.some((s) => s.id === page.selected)) page.selected = '';
  if (page.selected) {
    renderSteps();
    renderStep();
  }
}

async function start() {
  setLanguage(pickLanguage('', navigator.languages || [navigator.language]));
  setTextLanguage(storedLanguage());
  $('#hint').addEventListener('click', showHint);
  $('#solution').addEventListener('click', showSolution);
  $('#check').addEventListener('click', check);
  $('#grade').addEventListener('click', grade);
  $('#new-terminal').addEventListener('click', () => addTerminal(true));
  $('.skip').addEventListener('click', (e) => {
    const tab = document.querySelector('#terminal-tabs [role=tab][aria-selected=true]');
    const session = tab && page.terminals.get(tab.dataset.terminal);
    if (session) {
      e.preventDefault();
      session.focus();
    }
  });
  $('.tabbar').addEventListener('keydown', tabKeys);
  $('#lab-language-select').addEventListener('change', chooseLanguage);
  try {
    page.lab = await api.lab();
  } catch (err) {
    say(err.message);
    return;
  }
  const chosen = storedLanguage() && page.lab.text === storedLanguage();
  setLanguage(pickLanguage(page.lab.lang, chosen ? [page.lab.text] : navigator.languages || [navigator.language]));
  showLab();
  await poll();
  const ids = rememberedTerminals();
  if (ids.length === 0) addTerminal(false);
  for (const id of ids) addTerminal(false, id);
  const first = document.querySelector('#terminal-tabs [role=tab]');
  if (first) selectTab(first, false);
  refreshPreviews();
  setInterval(poll, 500);
  setInterval(refreshPreviews, 10000);
}

if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', start);
} else {
  start();
}
