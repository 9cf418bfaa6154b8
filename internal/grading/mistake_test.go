package grading

import (
	"context"
	"strings"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

// TestCheckNamesTheLikelyMistake: `labctl check` says which declared
// mistake the failing checks are exactly, with the lab's explanation, and
// says nothing of mistakes when the failures match none.
func TestCheckNamesTheLikelyMistake(t *testing.T) {
	fc := &fakeChecker{status: map[string]checks.Status{"b": checks.Fail}}
	s, out := newGrader(t, fc)
	s.Lab.Steps[0].Mistakes = []lab.Mistake{
		{Name: "only-a", Description: "forgot a", Fails: []string{"a"}, Explain: "Do a."},
		{Name: "only-b", Description: "forgot b", Fails: []string{"b"}, Explain: "b is needed because\nof c."},
	}
	if v, err := s.Check(context.Background(), ""); err != nil || v != Failed {
		t.Fatalf("Check = %v, %v; want failed", v, err)
	}
	want := "  This looks like a known mistake: forgot b\n    b is needed because\n    of c.\n"
	if !strings.Contains(out.String(), want) || strings.Contains(out.String(), "forgot a") {
		t.Errorf("output lacks %q or names the other mistake:\n%s", want, out)
	}

	fc.status = map[string]checks.Status{"a": checks.Fail, "b": checks.Fail}
	out.Reset()
	if _, err := s.Check(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "known mistake") {
		t.Errorf("a and b failing match no mistake exactly, yet:\n%s", out)
	}
}
