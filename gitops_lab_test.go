package labctl_test

import (
	"slices"
	"testing"

	labctl "github.com/labctl/labctl"
	"github.com/labctl/labctl/checks/checkstest"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/lab"
)

// The GitOps lab's steps 1–3 need no cluster: their file and git checks are
// proven here against the lab's own solve and mistake scripts, run by bash
// in a private mount namespace where /root and /opt are fresh tmpfs mounts
// (checkstest).

func TestGitOpsLabStepsWithoutCluster(t *testing.T) {
	if !checkstest.InMountNamespace(t, "TestGitOpsLabStepsWithoutCluster") {
		return
	}

	l, err := lab.Parse("lab.yaml", labctl.DefaultLab())
	if err != nil {
		t.Fatalf("loading the embedded lab: %v", err)
	}
	fixtures := labctl.DefaultFixtures()
	const noClusterSteps = 3
	if len(l.Steps) < noClusterSteps {
		t.Fatalf("the lab has %d steps, want at least %d", len(l.Steps), noClusterSteps)
	}
	for i, step := range l.Steps[:noClusterSteps] {
		for _, c := range step.Checks {
			if c.Kube != nil || c.Command != nil {
				t.Fatalf("step %s check %s needs a cluster or a command: steps 1–%d must be file and git only", step.ID, c.Name, noClusterSteps)
			}
		}
		t.Run(step.ID, func(t *testing.T) {
			t.Run("fails before solve", func(t *testing.T) {
				checkstest.FreshLab(t, fixtures)
				solveUpTo(t, l, i)
				res := checkstest.RunChecks(t, step.Checks)
				if !step.PassesInitially && len(checkstest.Failed(res)) == 0 {
					t.Fatalf("every check passed before the solve script ran: %v", res)
				}
			})
			for _, m := range step.Mistakes {
				t.Run("mistake "+m.Name, func(t *testing.T) {
					checkstest.FreshLab(t, fixtures)
					solveUpTo(t, l, i)
					checkstest.RunScript(t, m.Name, m.Script)
					res := checkstest.RunChecks(t, step.Checks)
					got := checkstest.Failed(res)
					want := slices.Clone(m.Fails)
					slices.Sort(want)
					if !slices.Equal(got, want) {
						t.Fatalf("after mistake %s, failing checks = %v, want exactly %v\n%s", m.Name, got, want, checkstest.Describe(res))
					}
					// The learner is told this mistake, and no other that
					// fails the same checks: its evidence holds, theirs not.
					held := func(o *lab.Mistake) bool { return len(checkstest.Failed(checkstest.RunChecks(t, o.Evidence))) == 0 }
					var named []string
					for _, o := range step.LikelyMistakes(got, false, held) {
						named = append(named, o.Name)
					}
					if !slices.Equal(named, []string{m.Name}) {
						t.Fatalf("after mistake %s, the learner is told %v, want exactly [%s]\nits evidence:\n%s", m.Name, named, m.Name, checkstest.Describe(checkstest.RunChecks(t, m.Evidence)))
					}
					// Its way back passes the step.
					if m.Recover == "" {
						t.Fatalf("mistake %s has no way back (recover)", m.Name)
					}
					checkstest.RunScript(t, m.Name+" recover", m.Recover)
					if f := checkstest.Failed(checkstest.RunChecks(t, step.Checks)); len(f) > 0 {
						t.Fatalf("after mistake %s and its way back, checks %v do not pass", m.Name, f)
					}
				})
			}
			for _, a := range step.Alternatives {
				t.Run("alternative "+a.Name, func(t *testing.T) {
					checkstest.FreshLab(t, fixtures)
					solveUpTo(t, l, i)
					checkstest.RunScript(t, a.Name, a.Script)
					res := checkstest.RunChecks(t, step.Checks)
					if f := checkstest.Failed(res); len(f) > 0 {
						t.Fatalf("after alternative %s, checks %v did not pass\n%s", a.Name, f, checkstest.Describe(res))
					}
				})
			}
			t.Run("passes after solve", func(t *testing.T) {
				checkstest.FreshLab(t, fixtures)
				solveUpTo(t, l, i+1)
				res := checkstest.RunChecks(t, step.Checks)
				if f := checkstest.Failed(res); len(f) > 0 {
					t.Fatalf("after the solve script, checks %v did not pass\n%s", f, checkstest.Describe(res))
				}
				// Earlier steps stay passed too.
				for _, prev := range l.Steps[:i] {
					if f := checkstest.Failed(checkstest.RunChecks(t, prev.Checks)); len(f) > 0 {
						t.Fatalf("step %s's checks %v no longer pass after step %s", prev.ID, f, step.ID)
					}
				}
			})
		})
	}
}

func solveUpTo(t *testing.T, l *lab.Lab, n int) {
	t.Helper()
	for _, s := range l.Steps[:n] {
		checkstest.RunScript(t, "solve of "+s.ID, s.Solve)
	}
}

// A learner who works ahead of labctl (through labctl exec) makes step
// change-via-commit's commit while step apply is current. Step apply holds
// the cluster to the repository's files and asks for no work in it, so the
// host notes the repository as apply begins, and that commit counts for
// change-via-commit.
func TestGitOpsLabWorkAheadCountsFromApply(t *testing.T) {
	l, err := lab.Parse("lab.yaml", labctl.DefaultLab())
	if err != nil {
		t.Fatalf("loading the embedded lab: %v", err)
	}
	if got := progress.StartRepos(l, "apply"); !slices.Contains(got, "/root/gitops/repo") {
		t.Errorf("as step apply begins the host notes %q, want /root/gitops/repo (change-via-commit counts from there)", got)
	}
}
