package lab

import (
	"strings"
	"testing"
)

func TestLikelyMistake(t *testing.T) {
	s := &Step{Mistakes: []Mistake{
		{Name: "one", Fails: []string{"a"}},
		{Name: "two", Fails: []string{"a", "b"}},
		{Name: "three", Fails: []string{"b", "a"}},
		{Name: "four", Fails: []string{"c"}, Evidence: []Check{{Name: "e"}}},
		{Name: "five", Fails: []string{"c"}, Evidence: []Check{{Name: "e"}}},
	}}
	// four's evidence held, five's did not.
	held := func(m *Mistake) bool { return m.Name == "four" }
	tests := []struct {
		failing []string
		errored bool
		want    string
	}{
		{[]string{"a"}, false, "one"},
		{[]string{"b", "a"}, false, "two three"},
		{[]string{"a", "b", "c"}, false, ""},
		{[]string{"b"}, false, ""},
		{nil, false, ""},
		{[]string{"a"}, true, ""},
		{[]string{"c"}, false, "four"},
		{[]string{"c"}, true, ""},
	}
	for _, tt := range tests {
		var names []string
		for _, m := range s.LikelyMistakes(tt.failing, tt.errored, held) {
			names = append(names, m.Name)
		}
		got := strings.Join(names, " ")
		if got != tt.want {
			t.Errorf("LikelyMistakes(%v, %v) = %q, want %q", tt.failing, tt.errored, got, tt.want)
		}
	}
	// Evidence that was not judged names no mistake that needs it.
	if ms := s.LikelyMistakes([]string{"c"}, false, nil); len(ms) != 0 {
		t.Errorf("LikelyMistakes without judged evidence = %d mistakes, want none", len(ms))
	}
	if ms := s.Suspects([]string{"c"}, false); len(ms) != 2 {
		t.Errorf("Suspects(c) = %d mistakes, want four and five", len(ms))
	}
}
