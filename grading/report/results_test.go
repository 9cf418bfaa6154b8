package report

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

func TestStatusLooks(t *testing.T) {
	for s, want := range map[checks.Status]Look{
		checks.Pass:  {"✓", "32", "pass"},
		checks.Fail:  {"✗", "31", "fail"},
		checks.Error: {"!", "33", "error"},
		"weird":      {"!", "33", "error"},
	} {
		if got := StatusLook(s); got != want || Mark(s) != want.Mark {
			t.Errorf("%q looks %+v, want %+v", s, got, want)
		}
	}
}

func TestResultLineColour(t *testing.T) {
	c := msg.New(msg.English)
	rs := []checks.Result{{Name: "a", Status: checks.Pass}, {Name: "b", Status: checks.Fail, Message: "m"}, {Name: "c", Status: checks.Error}}
	for i, want := range []string{"\x1b[32m✓\x1b[0m a", "\x1b[31m✗\x1b[0m b", "\x1b[33m!\x1b[0m c"} {
		if got := ResultLine(rs[i], c, true); got != want {
			t.Errorf("coloured %q, want %q", got, want)
		}
		if got := ResultLine(rs[i], c, false); strings.Contains(got, "\x1b") {
			t.Errorf("colour without a terminal: %q", got)
		}
	}
	r := checks.Result{Name: "n\x1b[2J", Description: "d", Status: checks.Fail, Optional: true, Message: "one\ntwo\x07\n"}
	if got := ResultLine(r, c, false); got != `✗ n\x1b[2J: d (optional)` {
		t.Errorf("line %q", got)
	}
	if got := ResultMessage(r, "  "); got != "  one\n  two\\x07\n" {
		t.Errorf("message %q", got)
	}
	if ResultMessage(checks.Result{Status: checks.Pass, Message: "m"}, "") != "" {
		t.Error("a passing check's message is shown")
	}
}

// A check that could not run leaves the step not passed and counts among
// the checks that do not pass, with the line that says it is not the
// learner's fault.
func TestStepResultsCountsChecksThatCouldNotRun(t *testing.T) {
	c := msg.New(msg.English)
	step := &lab.Step{ID: "one", Title: "First"}
	got := StepResults(step, []checks.Result{
		{Name: "a", Status: checks.Error, Message: "no API server"},
		{Name: "b", Status: checks.Fail, Message: "expected b"},
		{Name: "c", Status: checks.Pass},
		{Name: "d", Status: checks.Fail, Optional: true},
	}, nil, c, false)
	want := "  ! a\n      no API server\n  ✗ b\n      expected b\n  ✓ c\n  ✗ d (optional)\n" +
		"1 check(s) could not run. This is not your fault: the lab environment has a problem. Run `labctl status`, repair it with `labctl up`, then check again.\n" +
		"Step not done yet: First (2 of 3 required checks do not pass)\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := StepResults(step, []checks.Result{{Name: "c", Status: checks.Pass}}, nil, c, false); got != "  ✓ c\n" {
		t.Errorf("a passed step: %q", got)
	}
}
