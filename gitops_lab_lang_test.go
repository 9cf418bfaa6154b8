package labctl_test

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/labctl/labctl"
	"github.com/labctl/labctl/lab"
)

// TestGitOpsLabInEnglish: the GitOps lab, written in Japanese, carries an
// English translation of every text the learner reads, with no Japanese
// left in it, and its English instructions name everything its checks
// read (lint has nothing to say about it).
func TestGitOpsLabInEnglish(t *testing.T) {
	l, err := lab.Parse("lab.yaml", labctl.DefaultLab())
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Languages(); !slices.Equal(got, []string{"ja", "en"}) {
		t.Fatalf("languages %q, want ja and en", got)
	}
	for _, w := range l.Lint() {
		if strings.HasPrefix(w.Path, "translations") {
			t.Errorf("lint: %s", w)
		}
	}
	en := l.In("en")
	texts := map[string]string{"title": en.Metadata.Title, "goal": en.Metadata.Goal, "why": en.Metadata.Why}
	for _, s := range en.Steps {
		texts[s.ID+" title"], texts[s.ID+" instructions"], texts[s.ID+" why"], texts[s.ID+" solution"] = s.Title, s.Instructions, s.Why, s.Solution
		for i, h := range s.Hints {
			texts[s.ID+" hint "+string(rune('0'+i))] = h
		}
		for _, c := range s.Checks {
			texts[s.ID+" check "+c.Name] = c.Description
		}
		for _, m := range s.Mistakes {
			texts[s.ID+" mistake "+m.Name] = m.Explain
		}
	}
	japanese := func(r rune) bool { return unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han) }
	for where, text := range texts {
		if i := strings.IndexFunc(text, japanese); i >= 0 {
			t.Errorf("%s in English holds Japanese: %q", where, text[i:min(len(text), i+40)])
		}
	}
	// The Korean note the drift step asks for stays a Korean note.
	drift := en.Steps[slices.IndexFunc(en.Steps, func(s lab.Step) bool { return s.ID == "drift" })]
	if !strings.Contains(drift.Instructions, "Korean") {
		t.Errorf("the English drift step no longer asks for a Korean note:\n%s", drift.Instructions)
	}
}
