package lab

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// translatedLab is lintLab with a Japanese text for every field a
// translation covers, and placeholders: %s for the translations block.
const translatedLab = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: words
  language: ja
  title: 題
  goal: /srv/goal を使う
  why: 理由
steps:
  - id: first
    title: 最初
    instructions: /root/repo を作る
    why: なぜ
    solution: 答え
    hints: [ヒント一, ヒント二]
    checks:
      - name: repo
        description: リポジトリがある
        git: {repo: /root/repo}
      - name: other
        description: ほか
        file: {path: /root/repo/README.md}
    solve: git init /root/repo
    mistakes:
      - name: none
        script: "true"
        fails: [repo]
        explain: 説明
  - id: second
    title: 二番目
    instructions: 何もしない
    checks:
      - name: ok
        command: {run: ["true"]}
    solve: "true"
    mistakes:
      - name: none
        script: "true"
        fails: [ok]
%s`

func parseTranslated(t *testing.T, translations string) (*Lab, error) {
	t.Helper()
	return Parse("lab.yaml", []byte(strings.Replace(translatedLab, "%s", translations, 1)))
}

const englishWords = `translations:
  en:
    title: Title
    goal: Use /srv/goal
    why: Reason
    steps:
      first:
        title: First
        instructions: Make /root/repo with README.md
        why: Why
        solution: Answer
        hints: [Hint one]
        checks: {repo: A repository exists}
        mistakes: {none: Explained}
`

func TestInReplacesTheLearnersTexts(t *testing.T) {
	l, err := parseTranslated(t, englishWords)
	if err != nil {
		t.Fatal(err)
	}
	en := l.In("en")
	if en == l {
		t.Fatal("In(en) returned the lab as written")
	}
	s := en.Steps[0]
	got := []string{en.Metadata.Language, en.Metadata.Title, en.Metadata.Goal, en.Metadata.Why, s.Title, s.Instructions, s.Why, s.Solution,
		s.Hints[0], s.Hints[1], s.Checks[0].Description, s.Checks[1].Description, s.Mistakes[0].Explain, en.Steps[1].Title}
	want := []string{"en", "Title", "Use /srv/goal", "Reason", "First", "Make /root/repo with README.md", "Why", "Answer",
		"Hint one", "ヒント二", "A repository exists", "ほか", "Explained", "二番目"}
	if !slices.Equal(got, want) {
		t.Errorf("texts in en:\n got %q\nwant %q", got, want)
	}
	// The lab as written is untouched, and so are names and scripts.
	if l.Metadata.Title != "題" || l.Steps[0].Hints[0] != "ヒント一" || l.Steps[0].Checks[0].Description != "リポジトリがある" || l.Steps[0].Mistakes[0].Explain != "説明" {
		t.Errorf("In changed the lab as written: %+v", l.Steps[0])
	}
	if s.Checks[0].Name != "repo" || s.Solve != l.Steps[0].Solve || s.Mistakes[0].Script != "true" {
		t.Errorf("In changed more than texts: %+v", s)
	}
	if en.In("ja") != l || en.In("en").Metadata.Title != "Title" || !slices.Equal(en.Languages(), []string{"ja", "en"}) {
		t.Error("In of a translated lab should start from the lab as written")
	}
	if l.In("ja") != l || l.In("fr") != l {
		t.Error("In of the lab's own language or of one it lacks should return the lab as written")
	}
}

func TestTextLanguage(t *testing.T) {
	l, err := parseTranslated(t, englishWords+"  en-GB:\n    title: Title\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		wants []string
		want  string
	}{
		{nil, "ja"},
		{[]string{"en"}, "en"},
		{[]string{"EN_gb.UTF-8"}, "en-GB"},
		{[]string{"en-US"}, "en"},
		{[]string{"en_US.UTF-8"}, "en"},
		{[]string{"fr", "ja_JP.UTF-8"}, "ja"},
		{[]string{"", "C.UTF-8", "en"}, "en"},
		{[]string{"ko"}, "ja"},
	} {
		if got := l.TextLanguage(tc.wants...); got != tc.want {
			t.Errorf("TextLanguage(%q) = %q, want %q", tc.wants, got, tc.want)
		}
	}
}

func TestTranslationsValidate(t *testing.T) {
	for _, tc := range []struct {
		name, translations string
		want               []string // paths of the errors
	}{
		{"a step the lab lacks", "translations:\n  en:\n    steps:\n      third: {title: Third}\n", []string{"translations.en.steps.third"}},
		{"a check the step lacks", "translations:\n  en:\n    steps:\n      first: {checks: {nope: x}}\n", []string{"translations.en.steps.first.checks.nope"}},
		{"a mistake the step lacks", "translations:\n  en:\n    steps:\n      first: {mistakes: {nope: x}}\n", []string{"translations.en.steps.first.mistakes.nope"}},
		{"a mistake without explain", "translations:\n  en:\n    steps:\n      second: {mistakes: {none: x}}\n", []string{"translations.en.steps.second.mistakes.none"}},
		{"more hints", "translations:\n  en:\n    steps:\n      first: {hints: [a, b, c]}\n", []string{"translations.en.steps.first.hints"}},
		{"a broken world the probe lacks", "translations:\n  en:\n    steps:\n      first: {broken: x}\n", []string{"translations.en.steps.first.broken"}},
		{"the lab's own language", "translations:\n  ja:\n    title: x\n", []string{"translations.ja"}},
		{"not a language tag", "translations:\n  english!:\n    title: x\n", []string{"translations.english!"}},
		{"an unknown field", "translations:\n  en:\n    titel: x\n", []string{"translations.en.titel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseTranslated(t, tc.translations)
			var errs Errors
			if err == nil || !errors.As(err, &errs) {
				t.Fatalf("parse: %v, want errors at %q", err, tc.want)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Path)
				if e.Line == 0 {
					t.Errorf("%s: no line", e)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("errors at %q, want %q\n%v", got, tc.want, err)
			}
		})
	}
}

func TestLintTranslations(t *testing.T) {
	l, err := parseTranslated(t, englishWords)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range l.Lint() {
		if strings.HasPrefix(w.Path, "translations") {
			got = append(got, w.Path+": "+w.Msg)
		}
	}
	want := []string{
		"translations.en: no en text for step second: title, instructions (the learner reads it in ja)",
		"translations.en.steps.first: no en text for step first: hints[1], checks.other (the learner reads it in ja)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("translation warnings:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// English instructions that never name what a check reads are warned
	// about as the lab's own are.
	l, err = parseTranslated(t, strings.Replace(englishWords, "Make /root/repo with README.md", "Make a repository", 1))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range l.Lint() {
		if w.Path == "translations.en.steps.first.instructions" {
			n++
			if !strings.Contains(w.Msg, "/root/repo") || w.Line == 0 {
				t.Errorf("warning %v", w)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d warnings about the en instructions of step first, want 2 (repository /root/repo, path README.md)", n)
	}
}
