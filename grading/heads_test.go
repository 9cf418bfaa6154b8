package grading

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/lab"
)

// headChecker answers ReportHead checks with where it says each
// repository is, and counts its rounds.
type headChecker struct {
	at     map[string]string
	rounds int
	err    error
}

func (h *headChecker) RunChecks(_ context.Context, r checks.Round) ([]checks.Result, error) {
	h.rounds++
	if h.err != nil {
		return nil, h.err
	}
	out := make([]checks.Result, len(r.Checks))
	for i, c := range r.Checks {
		out[i] = checks.Result{Name: c.Name, Status: checks.Error, Message: "not a head check"}
		if c.Git != nil && c.Git.ReportHead {
			out[i] = checks.Result{Name: c.Name, Status: checks.Pass, Message: h.at[c.Git.Repo]}
		}
	}
	return out, nil
}

// TestNoteStart: as a step begins, the host notes where the repositories
// its checks count commits from are, in the learner's progress; the
// checks of that step then get it by position, and other checks nothing.
// EnsureStart notes only what is missing; a round that fails notes
// nothing.
func TestNoteStart(t *testing.T) {
	min := 1
	since := lab.Check{Name: "new", Git: &lab.GitCheck{Repo: "/root/repo", Since: lab.SinceStep, Commits: &lab.Range{Min: &min}}}
	l := &lab.Lab{Metadata: lab.Metadata{Name: "heads"}, Steps: []lab.Step{
		{ID: "one", Checks: []lab.Check{{Name: "f", File: &lab.FileCheck{Path: "/root/f"}}}},
		{ID: "two", Checks: []lab.Check{{Name: "f", File: &lab.FileCheck{Path: "/root/f"}}, since}},
	}}
	store := progress.NewStore(t.TempDir())
	ctx := context.Background()
	hc := &headChecker{at: map[string]string{"/root/repo": "abc"}}

	// Step one does no work in the repository: step two's commits count
	// from where it was as step one began.
	if err := NoteStart(ctx, hc, store, l, &l.Steps[0]); err != nil || hc.rounds != 1 {
		t.Fatalf("a step before a since check: %v, %d rounds; want one", err, hc.rounds)
	}
	if pr, _ := store.Load("heads"); pr.Heads["one"]["/root/repo"] != "abc" {
		t.Fatalf("heads %v, want one's repo at abc", pr.Heads)
	}
	hc.rounds = 0
	if err := NoteStart(ctx, hc, store, l, &l.Steps[1]); err != nil {
		t.Fatal(err)
	}
	pr, err := store.Load("heads")
	if err != nil {
		t.Fatal(err)
	}
	if got := Windows(l, pr, l.Steps[1].Checks).Heads; !reflect.DeepEqual(got, []string{"", "abc"}) {
		t.Errorf("heads of step two's checks = %q, want the since check's only", got)
	}
	if got := Windows(l, pr, l.Steps[0].Checks).Heads; got != nil {
		t.Errorf("heads of step one's checks = %q, want nil", got)
	}

	hc.at["/root/repo"] = "def"
	if noted, err := EnsureStart(ctx, hc, store, l, pr, &l.Steps[1]); noted || err != nil || hc.rounds != 1 {
		t.Errorf("EnsureStart of a noted step: %v, %v, %d rounds; want nothing done", noted, err, hc.rounds)
	}
	// A reading from before another labctl noted the start: what that one
	// noted stays (it may have been before a setup that commits).
	pr.Restart()
	if _, err := EnsureStart(ctx, hc, store, l, pr, &l.Steps[1]); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.Load("heads"); got.Heads["two"]["/root/repo"] != "abc" {
		t.Errorf("heads %v, want two's repo still at abc", got.Heads)
	}
	if err := store.Update(ctx, "heads", func(p *progress.Progress) error { p.Heads = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	if noted, err := EnsureStart(ctx, hc, store, l, pr, &l.Steps[1]); !noted || err != nil {
		t.Errorf("EnsureStart of a step not noted: %v, %v; want noted", noted, err)
	}
	if pr, _ = store.Load("heads"); pr.Heads["two"]["/root/repo"] != "def" {
		t.Errorf("heads %v, want two's repo at def", pr.Heads)
	}
	// A repository that is not there is not noted: the next check looks again.
	hc.at["/root/repo"] = checks.HeadAbsent
	if err := store.Update(ctx, "heads", func(p *progress.Progress) error { p.Heads = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := NoteStart(ctx, hc, store, l, &l.Steps[1]); err != nil {
		t.Fatal(err)
	}
	if pr, _ = store.Load("heads"); pr.HasHeads("two", []string{"/root/repo"}) {
		t.Errorf("an absent repository was noted: %v", pr.Heads)
	}

	hc.err = errors.New("no grader")
	if err := NoteStart(ctx, hc, store, l, &l.Steps[1]); err == nil {
		t.Error("a failed round noted a start")
	}
	// A step that becomes current again is noted afresh.
	pr.MarkStarted("two", pr.StepStart("two"))
	if pr.HasHeads("two", []string{"/root/repo"}) {
		t.Error("MarkStarted kept the step's old heads")
	}
}

// A step checked before it is the learner's current one cannot pass its
// checks that count commits since it began: the round says it has not.
func TestCheckOfAStepNotBegunCountsNoCommit(t *testing.T) {
	fc := &fakeChecker{}
	s, _ := newGrader(t, fc)
	min := 1
	since := lab.Check{Name: "new", Git: &lab.GitCheck{Repo: "/root/repo", Since: lab.SinceStep, Commits: &lab.Range{Min: &min}}}
	s.Lab.Steps[1].Checks = append(s.Lab.Steps[1].Checks, since)
	if _, err := s.Check(context.Background(), s.Lab.Steps[1].ID); err != nil {
		t.Fatal(err)
	}
	last := fc.asked[len(fc.asked)-1]
	if len(last.Heads) != len(last.Checks) || last.Heads[len(last.Heads)-1] != checks.HeadNotBegun {
		t.Errorf("heads %q of the checks of a step not begun, want %q for the since check", last.Heads, checks.HeadNotBegun)
	}
}
