package shell

import (
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
)

// TestResultsEscapeLearnerText: a message quoting a file named with ESC [1A
// and a commit message with an OSC title sequence, BEL and CR reaches the
// learner's terminal escaped.
func TestResultsEscapeLearnerText(t *testing.T) {
	s, err := New(Config{Lab: testLab(), Shell: newFakeShell(), Terminal: newFakeTerminal(),
		Check: newFakeChecker(false).check, Progress: &fakeProgress{lab: testLab()}, Debounce: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	step := testLab().Steps[0]
	out := s.resultsText(step, []checks.Result{
		{Name: "file", Status: checks.Fail, Points: 1, Message: "expected /root/a\x1b[1Ab to exist, found nothing there"},
		{Name: "message", Status: checks.Fail, Points: 1, Message: "found x\x1b]0;pwned\x07\rALL PASSED"},
	}, nil)
	for _, raw := range []string{"\x1b[1A", "\x1b]", "\x07", "\r"} {
		if strings.Contains(out, raw) {
			t.Errorf("the shell shows the raw sequence %q:\n%q", raw, out)
		}
	}
	for _, shown := range []string{`/root/a\x1b[1Ab`, `x\x1b]0;pwned\x07\x0dALL PASSED`} {
		if !strings.Contains(out, shown) {
			t.Errorf("the shell does not show %s escaped:\n%q", shown, out)
		}
	}
}

// TestLabTextIsEscaped: an OSC 52 sequence (which writes the terminal's
// clipboard) in the lab's title, a step's title, instructions and a check's
// description reaches the learner's terminal as visible text.
func TestLabTextIsEscaped(t *testing.T) {
	const osc52 = "\x1b]52;c;cHduZWQ=\x07"
	l := testLab()
	l.Metadata.Title = "Demo" + osc52
	l.Metadata.Goal = "Goal " + osc52
	l.Steps[0].Title = "First" + osc52
	l.Steps[0].Instructions = "Do it " + osc52 + "\n\n- `code " + osc52 + "`"
	s, err := New(Config{Lab: l, Shell: newFakeShell(), Terminal: newFakeTerminal(), Color: true,
		Check: newFakeChecker(false).check, Progress: &fakeProgress{lab: l}, Debounce: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	step := l.Steps[0]
	out := s.stepText("heading", step) + s.statusText(State{Current: &step}) +
		s.resultsText(step, []checks.Result{{Name: "c", Description: "desc" + osc52, Status: checks.Fail, Points: 1}}, nil)
	const shown = `\x1b]52;c;cHduZWQ=\x07`
	if strings.Contains(out, "\x1b]") || strings.Contains(out, "\x07") {
		t.Errorf("the shell shows a raw OSC sequence:\n%q", out)
	}
	for _, want := range []string{"Demo" + shown, "Goal " + shown, "  Do it " + shown, "code " + shown, "First" + shown, "desc" + shown} {
		if !strings.Contains(out, want) {
			t.Errorf("the shell does not show %q:\n%q", want, out)
		}
	}
}
