package labctl_test

import (
	"strings"
	"testing"

	labctl "github.com/labctl/labctl"
	"github.com/labctl/labctl/lab"
)

// TestEveryMistakeHasAWayBack: a learner told "this looks like a known
// mistake" is told what to do now, and labctl test proves it. Each mistake of
// the GitOps lab and of debug-rollout has a recover script (labctl test runs
// the mistake, then the way back, then requires every check of the step to
// pass), or, where the API server's record of what was done keeps a check
// failing for the rest of the step, its explanation sends the learner to
// `labctl reset --to STEP` in every language the lab has.
func TestEveryMistakeHasAWayBack(t *testing.T) {
	gitops, err := lab.Parse("lab.yaml", labctl.DefaultLab())
	if err != nil {
		t.Fatal(err)
	}
	rollout, err := lab.Load("labs/debug-rollout/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []*lab.Lab{gitops, rollout} {
		for i, s := range l.Steps {
			for j, m := range s.Mistakes {
				if strings.TrimSpace(m.Recover) != "" {
					continue
				}
				reset := "labctl reset --to " + s.ID
				for _, lang := range l.Languages() {
					explain := l.In(lang).Steps[i].Mistakes[j].Explain
					if !strings.Contains(explain, reset) {
						t.Errorf("%s, step %s, mistake %s: no recover script, and its explanation in %s does not name %q: %q",
							l.Metadata.Name, s.ID, m.Name, lang, reset, explain)
					}
				}
			}
		}
	}
}
