package checks

import (
	"context"
	"strings"
	"testing"

	"github.com/labctl/labctl/lab"
)

// TestShippedLabChecksRun runs every check of the shipped lab against an
// empty sandbox with no cluster: each must fail (the work is not done) or,
// for what needs the cluster, end in the no-credentials error. Any other
// error means a check the engine cannot evaluate (a bad expression, type,
// reference or path).
func TestShippedLabChecksRun(t *testing.T) {
	l, err := lab.Load("../lab.yaml")
	if err != nil {
		t.Fatalf("loading the shipped lab: %v", err)
	}
	// An empty audit log: the learner has sent nothing yet.
	env := Env{Root: t.TempDir(), Audit: &AuditSource{Dir: auditDir(t, nil)}}
	n := 0
	for _, step := range l.Steps {
		rs := Run(context.Background(), env, step.Checks)
		for i, r := range rs {
			n++
			c := step.Checks[i]
			switch {
			case r.Status == Error && strings.HasSuffix(r.Message, errNoCluster.Error()):
				if c.Kube == nil && !strings.Contains(r.Message, "kube:") {
					t.Errorf("%s/%s: a check without the cluster needs it: %s", step.ID, r.Name, r.Message)
				}
			case r.Status == Error:
				t.Errorf("%s/%s: the engine cannot evaluate it: %s", step.ID, r.Name, r.Message)
			case r.Status == Pass && !absenceOnly(c):
				t.Errorf("%s/%s passes in an empty sandbox", step.ID, r.Name)
			case r.Status == Fail && r.Message == "":
				t.Errorf("%s/%s fails without saying why", step.ID, r.Name)
			}
		}
	}
	if n == 0 {
		t.Fatal("the shipped lab has no checks")
	}
}

// absenceOnly reports whether a check can only require something to be
// absent, which an empty sandbox satisfies.
func absenceOnly(c lab.Check) bool {
	switch {
	case c.File != nil:
		return c.File.Exists != nil && !*c.File.Exists
	case c.Git != nil:
		return c.Git.Exists != nil && !*c.Git.Exists
	case c.Command != nil:
		return true
	case c.Audit != nil:
		return c.Audit.Absent
	}
	return false
}
