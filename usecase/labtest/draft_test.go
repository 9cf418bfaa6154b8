package labtest

import (
	"context"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/mutant"
	"github.com/labctl/labctl/lab"
)

// draftEnv lists the same objects for --draft as for --mutate.
type draftEnv struct{ *objEnv }

func (e draftEnv) DraftSnapshot(ctx context.Context) ([]map[string]any, error) {
	return e.Snapshot(ctx)
}

// RunChecks fails a placeholder (a command check) and judges the rest as
// objEnv does.
func (e draftEnv) RunChecks(ctx context.Context, round checks.Round) ([]checks.Result, error) {
	return placeholdersFail(ctx, e.objEnv, round)
}

func placeholdersFail(ctx context.Context, e *objEnv, round checks.Round) ([]checks.Result, error) {
	var typed []lab.Check
	for _, c := range round.Checks {
		if c.Command == nil {
			typed = append(typed, c)
		}
	}
	rest := round
	rest.Checks = typed
	rs, err := e.RunChecks(ctx, rest)
	if err != nil {
		return nil, err
	}
	out := make([]checks.Result, 0, len(round.Checks))
	for _, c := range round.Checks {
		if c.Command != nil {
			out = append(out, checks.Result{Name: c.Name, Status: checks.Fail, Message: "placeholder"})
			continue
		}
		out = append(out, rs[0])
		rs = rs[1:]
	}
	return out, nil
}

// listless cannot list the lab's objects.
type listless struct{ *objEnv }

func (e listless) RunChecks(ctx context.Context, round checks.Round) ([]checks.Result, error) {
	return placeholdersFail(ctx, e.objEnv, round)
}

// --draft hands over the lab's objects before and after the solve of each
// step whose checks are all placeholders, and of no other step; the
// placeholder's failure is reported as always.
func TestDraftSeesWhatThePlaceholderStepsSolveMade(t *testing.T) {
	l := roleLab(strictCheck)
	l.Steps[0].Checks = []lab.Check{{Name: "write-this-check", Command: &lab.CommandCheck{Run: []string{"false"}}}}
	typed := roleLab(strictCheck).Steps[0]
	typed.ID = "typed"
	typed.Solve = "true"
	l.Steps = append(l.Steps, typed)
	env := draftEnv{newObjEnv()}
	got := map[string][2][]map[string]any{}
	rep, err := Run(context.Background(), env, Options{Lab: l, Store: progress.NewStore(t.TempDir()), Pause: time.Millisecond,
		Draft: func(s *lab.Step, start, end []map[string]any) { got[s.ID] = [2][]map[string]any{start, end} }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed {
		t.Error("a lab with a placeholder check passed")
	}
	if _, ok := got["typed"]; ok || len(got) != 1 {
		t.Fatalf("drafted steps %v, want rbac only", got)
	}
	start, end := got["rbac"][0], got["rbac"][1]
	if len(start) != 0 || len(end) != 1 || mutant.Kind(end[0]) != "Role" || mutant.Name(end[0]) != "deployer" {
		t.Errorf("rbac: start %v, end %v; want nothing, then the Role deployer", start, end)
	}
}

// An environment that cannot list the objects is a failed phase, not a
// silent draft of nothing.
func TestDraftNeedsAnEnvironmentThatLists(t *testing.T) {
	l := roleLab(strictCheck)
	l.Steps[0].Checks = []lab.Check{{Name: "write-this-check", Command: &lab.CommandCheck{Run: []string{"false"}}}}
	called := false
	rep, err := Run(context.Background(), listless{newObjEnv()}, Options{Lab: l, Store: progress.NewStore(t.TempDir()), Pause: time.Millisecond,
		Draft: func(*lab.Step, []map[string]any, []map[string]any) { called = true }})
	if err != nil {
		t.Fatal(err)
	}
	if called {
		t.Error("Draft was called without a listing")
	}
	found := false
	for _, f := range rep.Failures() {
		if f.Message == "this environment cannot list the lab's objects, so no check can be drafted" {
			found = true
		}
	}
	if !found {
		t.Errorf("failures %v, want one saying the objects cannot be listed", rep.Failures())
	}
}
