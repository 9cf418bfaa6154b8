package grading

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

func practiceLab() *lab.Lab {
	return &lab.Lab{Steps: []lab.Step{
		{ID: "plain", Checks: []lab.Check{{Name: "f", File: &lab.FileCheck{Path: "/root/a"}}}},
		{ID: "probed", Probe: &lab.Probe{Run: "/root/s.sh"}, Checks: []lab.Check{
			{Name: "report", File: &lab.FileCheck{Path: "/root/r", WrittenDuringProbe: true}},
			{Name: "applied", Audit: &lab.AuditCheck{DuringProbe: true}},
			{Name: "exec", File: &lab.FileCheck{Path: "/root/s.sh"}},
		}},
		{ID: "audited", Checks: []lab.Check{{Name: "by-apply", Audit: &lab.AuditCheck{}}}},
	}}
}

func TestWithoutProbes(t *testing.T) {
	l := practiceLab()
	w := WithoutProbes(l)
	if w.Steps[1].Probe != nil || len(w.Steps[1].Checks) != 1 || w.Steps[1].Checks[0].Name != "exec" {
		t.Errorf("probed step: %+v", w.Steps[1])
	}
	if len(w.Steps[2].Checks) != 1 {
		t.Error("an audit check without a probe is dropped")
	}
	if l.Steps[1].Probe == nil || len(l.Steps[1].Checks) != 3 {
		t.Error("the lab itself changed")
	}
}

func TestPractice(t *testing.T) {
	l := practiceLab()
	p := Practice(l)
	want := map[string]bool{"f": false, "report": true, "applied": true, "exec": false, "by-apply": true}
	for _, s := range p.Steps {
		if s.Probe != nil {
			t.Errorf("step %s keeps its probe", s.ID)
		}
		for _, c := range s.Checks {
			if c.Optional != want[c.Name] {
				t.Errorf("%s optional = %v", c.Name, c.Optional)
			}
		}
	}
	if l.Steps[2].Checks[0].Optional || l.Steps[1].Probe == nil {
		t.Error("the lab itself changed")
	}
}

// roundsRun is a Checker that records its rounds and passes every check.
type roundsRun struct{ rounds []checks.Round }

func (r *roundsRun) RunChecks(_ context.Context, round checks.Round) ([]checks.Result, error) {
	r.rounds = append(r.rounds, round)
	out := make([]checks.Result, len(round.Checks))
	for i, c := range round.Checks {
		out[i] = checks.Result{Name: c.Name, Status: checks.Pass}
	}
	return out, nil
}

func TestPracticeCheckerRunsWhatTheSandboxCanJudgeAndMergesTheRest(t *testing.T) {
	run := &roundsRun{}
	cs := []lab.Check{
		{Name: "audit", Audit: &lab.AuditCheck{}},
		{Name: "file", File: &lab.FileCheck{Path: "/root/a"}},
		{Name: "audit-2", Audit: &lab.AuditCheck{}},
		{Name: "file-2", File: &lab.FileCheck{Path: "/root/b"}},
		{Name: "report", File: &lab.FileCheck{Path: "/root/r", WrittenDuringProbe: true}},
	}
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	got, err := PracticeChecker{run}.RunChecks(context.Background(), checks.Round{Checks: cs, ProbeStart: start, Lang: "ja",
		Windows: checks.Windows{Since: []time.Time{start, {}, start, {}, {}}, Heads: []string{"", "h1", "", "h2", ""}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.rounds) != 1 {
		t.Fatalf("%d rounds, want one", len(run.rounds))
	}
	r := run.rounds[0]
	if len(r.Checks) != 2 || r.Checks[0].Name != "file" || r.Checks[1].Name != "file-2" {
		t.Errorf("the sandbox's checker got %v, want the file checks only", r.Checks)
	}
	if !slices.Equal(r.Heads, []string{"h1", "h2"}) || len(r.Since) != 2 || r.Marks != nil {
		t.Errorf("the sandbox's round got windows %+v, want those of its own checks", r.Windows)
	}
	if !r.ProbeStart.Equal(start) || r.Lang != "ja" {
		t.Errorf("the sandbox's round got probe start %v and language %q", r.ProbeStart, r.Lang)
	}
	want := []struct {
		name   string
		status checks.Status
	}{{"audit", checks.Error}, {"file", checks.Pass}, {"audit-2", checks.Error}, {"file-2", checks.Pass}, {"report", checks.Error}}
	for i, w := range want {
		if got[i].Name != w.name || got[i].Status != w.status {
			t.Errorf("result %d: %s %s, want %s %s", i, got[i].Name, got[i].Status, w.name, w.status)
		}
	}
	if !strings.Contains(got[0].Message, "instructor") {
		t.Errorf("instructor-only message %q", got[0].Message)
	}
	// Only instructor-only checks: nothing reaches the sandbox.
	if got, err := (PracticeChecker{run}).RunChecks(context.Background(), checks.Round{Checks: cs[:1]}); err != nil || len(got) != 1 || len(run.rounds) != 1 {
		t.Errorf("%v, %v, %d rounds", got, err, len(run.rounds))
	}
}

// shortRun answers every round with one result fewer than it was asked.
type shortRun struct{ roundsRun }

func (r *shortRun) RunChecks(ctx context.Context, round checks.Round) ([]checks.Result, error) {
	out, err := r.roundsRun.RunChecks(ctx, round)
	return out[:len(out)-1], err
}

// The sandbox's checker is held to its part of the round: an answer short
// of a result is refused, never filled with the instructor's message.
func TestPracticeCheckerRefusesAShortAnswer(t *testing.T) {
	cs := []lab.Check{
		{Name: "audit", Audit: &lab.AuditCheck{}},
		{Name: "file", File: &lab.FileCheck{Path: "/root/a"}},
		{Name: "file-2", File: &lab.FileCheck{Path: "/root/b"}},
	}
	rs, err := checks.RunRound(context.Background(), checks.Round{Checks: cs}, PracticeChecker{&shortRun{}}.RunChecks)
	if err == nil || !strings.Contains(err.Error(), "1 results for 2 checks") {
		t.Errorf("a short answer: %+v, %v; want it refused", rs, err)
	}
}
