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
	})
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
