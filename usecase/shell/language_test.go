package shell

import (
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/internal/msg"
)

// TestSetLab: a session switched to the same lab in another language shows
// the current step, read from a progress that reads the lab as written, in
// that language with labctl's words in it; a lab without steps is refused.
func TestSetLab(t *testing.T) {
	s, err := New(Config{Lab: testLab(), Shell: newFakeShell(), Terminal: newFakeTerminal(),
		Check: newFakeChecker(false).check, Progress: &fakeProgress{lab: testLab()}, Debounce: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	other := testLab()
	other.Steps = nil
	if err := s.SetLab(other, nil); err == nil {
		t.Error("a lab without steps was taken")
	}
	ja := testLab()
	ja.Metadata.Language = "ja"
	ja.Steps[0].Title = "最初の手順"
	if err := s.SetLab(ja, msg.New(msg.Japanese)); err != nil {
		t.Fatal(err)
	}
	st, err := s.state()
	if err != nil {
		t.Fatal(err)
	}
	got := s.welcome(st)
	if want := msg.New(msg.Japanese).ShellStep; !strings.Contains(got, "最初の手順") || !strings.Contains(got, strings.SplitN(want, " ", 2)[0]) {
		t.Errorf("after SetLanguage the step reads:\n%s", got)
	}
}
