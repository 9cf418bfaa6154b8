package progress

import (
	"slices"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

// gitopsSteps is the GitOps lab's shape in /root/repo: step commit works
// in the repository, step apply does not (it only says the repository is
// not where its output goes), step change counts its new commits (since:
// step), step drift works in it again, step revert counts its own.
func gitopsSteps() *lab.Lab {
	min := 1
	since := lab.Check{Name: "on-top", Git: &lab.GitCheck{Repo: "/root/repo", Since: lab.SinceStep, Commits: &lab.Range{Min: &min}}}
	since2 := since
	since2.Name = "on-top-again"
	return &lab.Lab{Steps: []lab.Step{
		{ID: "commit", Checks: []lab.Check{{Name: "tracked", Git: &lab.GitCheck{Repo: "/root/repo", Tracked: []string{"a"}}}}},
		{ID: "apply", Checks: []lab.Check{{Name: "out", File: &lab.FileCheck{Path: "/root/out", NotInside: "/root/repo"}}, apply}},
		{ID: "change", Checks: []lab.Check{since}},
		{ID: "drift", Checks: []lab.Check{{Name: "ref", Kube: &lab.KubeCheck{Kind: "Deployment", Name: "web",
			Field: &lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: &lab.Value{Ref: "git:/root/repo@HEAD:a#x"}}}}}}},
		{ID: "revert", Checks: []lab.Check{since2}},
	}}
}

// The start of step change in the repository is where it was as step
// apply, which does no work there, began: a commit the learner made for
// change before labctl saw apply pass counts, and one made while commit
// was current does not.
func TestStepHeadsCountFromTheStartOfTheRun(t *testing.T) {
	l := gitopsSteps()
	change := l.Steps[2].Checks
	p := New("l")
	p.Current = "change"
	p.SetHead("apply", "/root/repo", "c1")
	p.SetHead("change", "/root/repo", "c2")
	if got, want := p.StepHeads(l, change), []string{"c1"}; !slices.Equal(got, want) {
		t.Errorf("change's start %q, want %q: where the repository was as apply began", got, want)
	}
	// Without apply's, change's own.
	delete(p.Heads, "apply")
	if got, want := p.StepHeads(l, change), []string{"c2"}; !slices.Equal(got, want) {
		t.Errorf("change's start without apply's %q, want %q", got, want)
	}
	// Step commit works in the repository: its start never counts for
	// change.
	p.SetHead("commit", "/root/repo", "c0")
	if got, want := p.StepHeads(l, change), []string{"c2"}; !slices.Equal(got, want) {
		t.Errorf("change's start with commit's noted %q, want %q", got, want)
	}
	// A command that names the repository works in it.
	l.Steps[1].Checks = append(l.Steps[1].Checks, lab.Check{Name: "log", Command: &lab.CommandCheck{Run: []string{"git", "-C", "/root/repo", "log"}}})
	p.SetHead("apply", "/root/repo", "c1")
	if got, want := p.StepHeads(l, change), []string{"c2"}; !slices.Equal(got, want) {
		t.Errorf("change's start after a step with a command in the repository %q, want %q", got, want)
	}
	// Step drift reads the repository (a ref): revert counts from its own
	// start only.
	p.Current = "revert"
	p.SetHead("drift", "/root/repo", "c3")
	p.SetHead("revert", "/root/repo", "c4")
	if got, want := p.StepHeads(l, l.Steps[4].Checks), []string{"c4"}; !slices.Equal(got, want) {
		t.Errorf("revert's start %q, want %q", got, want)
	}
}

// A step that only holds the cluster to the repository's files (a git
// check whose field is compared with a kube: reference) does no work in
// the repository: the next step's commits made while it was current count
// for the next step, as when it had no check of the repository at all.
func TestStepHoldingTheClusterToTheRepoDoesNoWorkInIt(t *testing.T) {
	l := gitopsSteps()
	exists := true
	asRepo := lab.Check{Name: "as-repo", Git: &lab.GitCheck{Repo: "/root/repo", Exists: &exists, Field: &lab.GitFieldAssert{File: "a",
		FieldAssert: lab.FieldAssert{Path: "spec", Assert: lab.Assert{StoredAs: &lab.Value{Ref: "kube:apps/v1/Deployment/ns/web#spec"}}}}}}
	l.Steps[1].Checks = append(l.Steps[1].Checks, asRepo)
	p := New("l")
	p.Current = "change"
	p.SetHead("apply", "/root/repo", "c1")
	p.SetHead("change", "/root/repo", "c2")
	if got, want := p.StepHeads(l, l.Steps[2].Checks), []string{"c1"}; !slices.Equal(got, want) {
		t.Errorf("change's start after a step that holds the cluster to the repository %q, want %q", got, want)
	}
	// Compared with a literal, or asking for anything more of the
	// repository, the check is work in it.
	for _, edit := range []func(g *lab.GitCheck){
		func(g *lab.GitCheck) { g.Field.StoredAs = &lab.Value{Literal: map[string]any{"replicas": 3}} },
		func(g *lab.GitCheck) { clean := true; g.Clean = &clean },
		func(g *lab.GitCheck) { g.Message = &lab.MessageAssert{Matches: "x"} },
		func(g *lab.GitCheck) { absent := false; g.Exists = &absent },
	} {
		c := asRepo
		g := *asRepo.Git
		f := *g.Field
		g.Field = &f
		edit(&g)
		c.Git = &g
		l.Steps[1].Checks[len(l.Steps[1].Checks)-1] = c
		if got, want := p.StepHeads(l, l.Steps[2].Checks), []string{"c2"}; !slices.Equal(got, want) {
			t.Errorf("change's start after a step whose git check %+v asks more %q, want %q", g, got, want)
		}
	}
}

// The host notes, as a step begins, the repositories of the later steps
// whose run begins with it.
func TestStartRepos(t *testing.T) {
	l := gitopsSteps()
	for id, want := range map[string][]string{"commit": nil, "apply": {"/root/repo"}, "change": {"/root/repo"}, "drift": nil, "revert": {"/root/repo"}, "gone": nil} {
		if got := StartRepos(l, id); !slices.Equal(got, want) {
			t.Errorf("StartRepos(%s) = %q, want %q", id, got, want)
		}
	}
}

// A head noted late is given as such; one noted as the step began, or a
// step that becomes current again, forgets it.
func TestLateHeads(t *testing.T) {
	l := gitopsSteps()
	change := l.Steps[2].Checks
	p := New("l")
	p.Current = "change"
	p.SetLateHead("change", "/root/repo", "c2")
	if got, late := p.StepStarts(l, change); !slices.Equal(got, []string{"c2"}) || !slices.Equal(late, []bool{true}) {
		t.Errorf("a late start %q, late %v; want c2, late", got, late)
	}
	// An earlier step of the run, seen to begin, bounds the step's work.
	p.SetHead("apply", "/root/repo", "c1")
	if got, late := p.StepStarts(l, change); !slices.Equal(got, []string{"c1"}) || late[0] {
		t.Errorf("a late start after apply's %q, late %v; want c1, not late", got, late)
	}
	delete(p.Heads, "apply")
	p.SetHead("change", "/root/repo", "c3")
	if got, late := p.StepStarts(l, change); !slices.Equal(got, []string{"c3"}) || late[0] {
		t.Errorf("a start noted again as it began %q, late %v; want c3, not late", got, late)
	}
	p.SetLateHead("change", "/root/repo", "c2")
	p.MarkStarted("change", time.Now())
	if len(p.LateHeads["change"]) != 0 || p.HasHeads("change", []string{"/root/repo"}) {
		t.Errorf("a step begun again keeps %v, %v", p.Heads, p.LateHeads)
	}
	p.SetLateHead("change", "/root/repo", "c2")
	p.Restart()
	if p.LateHeads != nil {
		t.Errorf("a restart keeps %v", p.LateHeads)
	}
}
