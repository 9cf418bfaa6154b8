package labctl_test

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/lab"
)

// requireCompleteStep fails unless s has what a shipped lab's step needs
// for labctl test to prove it: a solve script, at least one mistake and one
// alternative, and an explanation for every mistake.
func requireCompleteStep(t *testing.T, s lab.Step) {
	t.Helper()
	if strings.TrimSpace(s.Solve) == "" || len(s.Mistakes) == 0 || len(s.Alternatives) == 0 {
		t.Errorf("step %s needs a solve script, at least one mistake and one alternative", s.ID)
	}
	for _, m := range s.Mistakes {
		if strings.TrimSpace(m.Explain) == "" {
			t.Errorf("step %s mistake %s has no explain", s.ID, m.Name)
		}
	}
}
