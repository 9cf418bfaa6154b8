// Package msg is the catalogue of learner-facing text labctl prints when
// checking, grading and resetting a lab, in English and Japanese.
//
// The language is chosen by Choose from LABCTL_LANG (labctl's --lang), the
// lab's metadata.language and the user's locale (the first non-empty of
// LC_ALL, LC_MESSAGES and LANG, as POSIX orders them):
//
//   - LABCTL_LANG=ja or en gives that language, whatever the locale;
//   - a locale naming Japanese (ja, ja_JP.UTF-8, …) gives Japanese;
//   - a locale naming another language (en_US.UTF-8, de_DE, …) gives English,
//     the user having said which language they read;
//   - no locale, or the neutral C / POSIX / C.UTF-8, gives the lab's own
//     language: Japanese for a "ja" lab, English otherwise.
//
// Texts the lab author wrote (titles, instructions, check descriptions) are
// shown as written; this catalogue only covers labctl's own words.
package msg

import (
	"strings"
	"time"
)

// Lang is a language this catalogue has texts in.
type Lang string

// The languages of the catalogue.
const (
	English  Lang = "en"
	Japanese Lang = "ja"
)

// Choose picks the language of labctl's messages for a lab written in
// labLanguage (a BCP 47 tag; "" means English); getenv is os.Getenv outside
// tests. See the package documentation for the rules.
func Choose(labLanguage string, getenv func(string) string) Lang {
	if l, ok := Parse(getenv(EnvLang)); ok {
		return l
	}
	locale := ""
	for _, k := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if v := getenv(k); v != "" {
			locale = v
			break
		}
	}
	switch lang := localeLanguage(locale); lang {
	case "", "c", "posix":
		if isJapanese(labLanguage) {
			return Japanese
		}
		return English
	case "ja":
		return Japanese
	default:
		return English
	}
}

// EnvLang names the variable that sets the language of labctl's messages
// over the locale (the --lang flag sets it).
const EnvLang = "LABCTL_LANG"

// Parse reads a language the catalogue has: "ja", "en", or a locale or tag
// naming one (ja_JP.UTF-8, en-US).
func Parse(s string) (Lang, bool) {
	switch localeLanguage(s) {
	case "ja":
		return Japanese, true
	case "en":
		return English, true
	}
	return "", false
}

// localeLanguage is the lower-case language part of a POSIX locale name
// such as ja_JP.UTF-8@modifier, or "c" for C.UTF-8.
func localeLanguage(locale string) string {
	l := strings.ToLower(strings.TrimSpace(locale))
	if i := strings.IndexAny(l, "_.@-"); i >= 0 {
		l = l[:i]
	}
	return l
}

func isJapanese(tag string) bool {
	return localeLanguage(tag) == "ja"
}

// Catalog holds every message in one language. Fields are fmt formats; the
// verbs each takes are named in its comment and are the same in every
// language.
type Catalog struct {
	Lang Lang
	// invited: the words are an invited learner's (ForInvited).
	invited bool
	// Zone is where the learner's clock is: the times a message shows
	// (Clock) are in it; nil is UTC.
	Zone *time.Location

	// Checking: step number, step count, step title.
	Checking string
	// StepPassed: step title.
	StepPassed string
	// StepNotPassed: step title, failed required checks, required checks.
	StepNotPassed string
	// NextStep: step number, step count, step title.
	NextStep string
	// AllDone: step count.
	AllDone string
	// CouldNotRun: number of checks that could not run.
	CouldNotRun string
	// RoundFailed: the error that stopped the checker round (%v).
	RoundFailed string
	// Optional marks an optional check.
	Optional string
	// Score: score, maximum.
	Score string
	// GradePassed: no verbs.
	GradePassed string
	// NodeRoot heads the grade of a lab whose learner was root on its
	// nodes (cluster.nodeAccess): no verbs.
	NodeRoot string
	// KeptFrom follows a step's line in a grade whose results are those of
	// the round in which it passed: the local time it passed.
	KeptFrom string
	// SolutionShown follows a step's line in a grade when the learner asked
	// for the step's solution: the local time they first did.
	SolutionShown string
	// GradeNotPassed: failed required checks.
	GradeNotPassed string
	// HeaderStep, HeaderCheck, HeaderPoints head the grade table.
	HeaderStep   string
	HeaderCheck  string
	HeaderPoints string
	// BackedUp: path of the backup of /root.
	BackedUp string
	// ResetDone: step number, step count, step title.
	ResetDone string
	// UpDone: lab name (%q).
	UpDone string
	// ReportWritten: path of the report file.
	ReportWritten string
	// LikelyMistake: the description of a known mistake of the lab.
	LikelyMistake string

	// The shell's own texts (labctl shell and the in-band lab function).
	// ShellStep: step number, step count, step title.
	ShellStep string
	// ShellHelp: no verbs.
	ShellHelp string
	// Hint: hint number, hint count, the hint.
	Hint string
	// NoHints, NoMoreHints: no verbs.
	NoHints     string
	NoMoreHints string
	// UnknownRequest: the verb asked for (%q).
	UnknownRequest string
	// Progress: lab title, steps done, step count.
	Progress string
	// Goal heads the lab's goal; no verbs.
	Goal string
	// LabWhy heads the lab's own reason (metadata.why); no verbs.
	LabWhy string
	// Why: step title, heading the step's reason.
	Why string
	// NoWhy: step title.
	NoWhy string
	// LabReloaded: the lab file's name, its step count (--watch).
	LabReloaded string
	// LabNotReloaded: the lab file's name, what is wrong (--watch).
	LabNotReloaded string
	// Invited: the learner's name, before the shell of `labctl shell
	// --invite`.
	Invited string
	// InvitedAllDone, InvitedCouldNotRun and InvitedRoundFailed replace
	// AllDone, CouldNotRun and RoundFailed for an invited learner, who
	// neither grades nor repairs the lab (same arguments).
	InvitedAllDone, InvitedCouldNotRun, InvitedRoundFailed string
}

// ForInvited returns the catalogue an invited learner's session speaks:
// what they cannot run is asked of their instructor.
func (c *Catalog) ForInvited() *Catalog {
	out := *c
	out.AllDone, out.CouldNotRun, out.RoundFailed = c.InvitedAllDone, c.InvitedCouldNotRun, c.InvitedRoundFailed
	out.invited = true
	return &out
}

// In returns the catalogue c is, in lang: for the same learner (invited or
// not) and clock.
func (c *Catalog) In(lang Lang) *Catalog {
	out := New(lang)
	out.Zone = c.Zone
	if c.invited {
		out = out.ForInvited()
	}
	return out
}

// New returns the catalogue in lang; an unknown language gives English.
func New(lang Lang) *Catalog {
	if lang == Japanese {
		return japanese()
	}
	return english()
}

func english() *Catalog {
	return &Catalog{
		Lang:               English,
		Checking:           "Checking step %d/%d: %s",
		StepPassed:         "Step passed: %s",
		StepNotPassed:      "Step not done yet: %s (%d of %d required checks do not pass)",
		NextStep:           "Next, step %d/%d: %s",
		AllDone:            "All %d steps are done. Run `labctl grade` to see your score.",
		CouldNotRun:        "%d check(s) could not run. This is not your fault: the lab environment has a problem. Run `labctl status`, repair it with `labctl up`, then check again.",
		RoundFailed:        "the checks could not run: %v. This is not your fault: check the lab with `labctl status`, repair it with `labctl up`, then try again.",
		Optional:           "(optional)",
		Score:              "Score: %d/%d",
		GradePassed:        "Every required check passes.",
		NodeRoot:           "The learner was root on the lab's nodes (cluster.nodeAccess), which are privileged containers: root on the machine that ran the lab.",
		KeptFrom:           " (passed at %s; its results then)",
		SolutionShown:      " (solution shown at %s)",
		GradeNotPassed:     "%d required check(s) do not pass.",
		HeaderStep:         "STEP",
		HeaderCheck:        "CHECK",
		HeaderPoints:       "POINTS",
		BackedUp:           "Your /root was saved to %s",
		ResetDone:          "The lab is reset. You are at step %d/%d: %s",
		UpDone:             "Lab %q is up. Start with `labctl shell`.",
		ReportWritten:      "Report written to %s",
		LikelyMistake:      "This looks like a known mistake: %s",
		ShellStep:          "Step %d/%d: %s",
		ShellHelp:          "Your work is checked after every command. `lab check` checks now, `lab hint` gives a hint, `lab step` shows this step again, `lab why` says why it matters, `lab status` shows your progress.",
		Hint:               "Hint %d/%d: %s",
		NoHints:            "This step has no hints.",
		NoMoreHints:        "That was the last hint for this step.",
		UnknownRequest:     "lab: unknown request %q; use lab check|hint|step|why|next|status.",
		Progress:           "%s: %d of %d steps done",
		Goal:               "Goal",
		Why:                "Why this step matters: %s",
		LabWhy:             "Why this lab matters",
		NoWhy:              "The lab says nothing more about why %s matters.",
		LabReloaded:        "%s was edited: reloaded, %d steps.",
		LabNotReloaded:     "%s was edited, but the lab stays as it was: %s",
		Invited:            "Connected to your sandbox as %s. Checks here are feedback; your instructor's `labctl class grade` is your grade.",
		InvitedAllDone:     "All %d steps pass here. Your instructor's `labctl class grade` gives your grade.",
		InvitedCouldNotRun: "%d check(s) could not run. This is not your fault: ask your instructor to repair your lab (`labctl class up`), then check again.",
		InvitedRoundFailed: "the checks could not run: %v. This is not your fault: ask your instructor to repair your lab (`labctl class up`), then try again.",
	}
}

func japanese() *Catalog {
	return &Catalog{
		Lang:               Japanese,
		Checking:           "ステップ %d/%d を確認しています: %s",
		StepPassed:         "ステップ完了: %s",
		StepNotPassed:      "ステップはまだ完了していません: %s (必須チェック %d/%d 件が不合格)",
		NextStep:           "次はステップ %d/%d: %s",
		AllDone:            "全 %d ステップが完了しました。`labctl grade` で得点を確認できます。",
		CouldNotRun:        "%d 件のチェックを実行できませんでした。あなたの作業の問題ではなく、ラボ環境の問題です。`labctl status` で状態を確認し、`labctl up` で修復してから、もう一度確認してください。",
		RoundFailed:        "チェックを実行できませんでした: %v。あなたの作業の問題ではありません。`labctl status` でラボを確認し、`labctl up` で修復してから、もう一度試してください。",
		Optional:           "(任意)",
		Score:              "得点: %d/%d",
		GradePassed:        "必須のチェックはすべて合格です。",
		NodeRoot:           "学習者はラボのノードの root でした(cluster.nodeAccess)。ノードは特権コンテナなので、ラボを動かしたマシンの root でもありました。",
		KeptFrom:           "(%s に合格。そのときの結果)",
		SolutionShown:      "(%s に解答を表示)",
		GradeNotPassed:     "必須のチェック %d 件が不合格です。",
		HeaderStep:         "ステップ",
		HeaderCheck:        "チェック",
		HeaderPoints:       "点数",
		BackedUp:           "/root を %s に保存しました",
		ResetDone:          "ラボをリセットしました。現在はステップ %d/%d: %s",
		UpDone:             "ラボ %q の準備ができました。`labctl shell` で始めてください。",
		ReportWritten:      "レポートを %s に書き出しました",
		LikelyMistake:      "よくある間違いのようです: %s",
		ShellStep:          "ステップ %d/%d: %s",
		ShellHelp:          "コマンドを実行するたびに自動で確認します。`lab check` 今すぐ確認、`lab hint` ヒント、`lab step` 手順をもう一度、`lab why` このステップの意味、`lab status` 進み具合。",
		Hint:               "ヒント %d/%d: %s",
		NoHints:            "このステップにヒントはありません。",
		NoMoreHints:        "ヒントはこれで全部です。",
		UnknownRequest:     "lab: 不明なコマンド %q です。lab check|hint|step|why|next|status を使ってください。",
		Progress:           "%s: %d/%d ステップ完了",
		Goal:               "このラボの目標",
		Why:                "このステップの意味: %s",
		LabWhy:             "なぜ重要なのか",
		NoWhy:              "%s について、ラボに説明はありません。",
		LabReloaded:        "%s が編集されたので読み込み直しました(ステップは %d 個)。",
		LabNotReloaded:     "%s が編集されましたが、ラボは前のままです: %s",
		Invited:            "%s としてあなたのサンドボックスに接続しました。ここでのチェックは練習用のフィードバックです。成績は講師の `labctl class grade` で決まります。",
		InvitedAllDone:     "ここでは全 %d ステップが通っています。成績は講師の `labctl class grade` で決まります。",
		InvitedCouldNotRun: "%d 件のチェックを実行できませんでした。あなたの作業の問題ではありません。講師にラボの修復(`labctl class up`)を頼んでから、もう一度確認してください。",
		InvitedRoundFailed: "チェックを実行できませんでした: %v。あなたの作業の問題ではありません。講師にラボの修復(`labctl class up`)を頼んでから、もう一度試してください。",
	}
}
