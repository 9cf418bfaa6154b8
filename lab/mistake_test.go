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
	}}
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
	}
	for _, tt := range tests {
		var names []string
		for _, m := range s.LikelyMistakes(tt.failing, tt.errored) {
			names = append(names, m.Name)
		}
		got := strings.Join(names, " ")
		if got != tt.want {
			t.Errorf("LikelyMistakes(%v, %v) = %q, want %q", tt.failing, tt.errored, got, tt.want)
		}
	}
}
