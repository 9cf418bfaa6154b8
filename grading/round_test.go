package grading

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// labctl check and labctl grade give every round the audit windows of the
// progress they read before it, and the probe's start to the round that
// judges the probe.
func TestRoundsCarryTheAuditWindowsOfTheProgressRead(t *testing.T) {
	fc := &fakeChecker{}
	s, _ := newGrader(t, fc)
	// Final: the grade judges it again after its step passed.
	scaled := lab.Check{Name: "scaled", Points: 1, Final: true, Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Resource: "deployments", Subresource: "scale"}}}
	s.Lab.Steps[1].Checks = append(s.Lab.Steps[1].Checks, scaled)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	if err := s.Store.Update(ctx, s.Lab.Metadata.Name, func(p *progress.Progress) error {
		p.Reconcile(s.Lab, s.Digest)
		_, err := p.Record(s.Lab, "one", true, t0)
		return err
	}); err != nil {
		t.Fatal(err)
	}

	if v, err := s.Check(ctx, ""); err != nil || v != Passed {
		t.Fatalf("Check = %v, %v", v, err)
	}
	// Step two (a, extra, scaled) became current at t0.
	want := checks.Round{Checks: s.Lab.Steps[1].Checks, Windows: checks.Windows{Since: []time.Time{{}, {}, t0}}, Lang: msg.English}
	if got := fc.asked[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("labctl check asked %+v, want %+v", got, want)
	}

	fc.asked = nil
	if _, _, err := s.Grade(ctx); err != nil {
		t.Fatal(err)
	}
	// One round: step one (passed without a kept round) whole, and of
	// step two (kept when labctl check passed it) only its final check,
	// which keeps the step's window (now the lab is done, a check is found
	// in its step by content).
	all := append(append([]lab.Check(nil), s.Lab.Steps[0].Checks...), scaled)
	want = checks.Round{Checks: all, Windows: checks.Windows{Since: []time.Time{{}, {}, t0}}, Lang: msg.English}
	if len(fc.asked) != 1 || !reflect.DeepEqual(fc.asked[0], want) {
		t.Errorf("labctl grade asked %+v, want %+v", fc.asked, want)
	}
}

func TestRunAllWithoutProgressJudgesTheWholeLog(t *testing.T) {
	fc := &fakeChecker{}
	l := testLab()
	l.Steps[0].Checks = append(l.Steps[0].Checks, lab.Check{Name: "audit", Audit: &lab.AuditCheck{}})
	if _, err := RunAll(context.Background(), fc, nil, l, nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(fc.asked) != 1 || fc.asked[0].Since != nil || !fc.asked[0].ProbeStart.IsZero() {
		t.Errorf("asked %+v; want no windows and no probe", fc.asked)
	}
}

// The round that judges a probe's run carries when the probe started, and
// the step's audit windows as given; the round before the probe (its
// needs) carries no start.
func TestProbeRoundCarriesTheProbeStartAndTheWindows(t *testing.T) {
	w := &probeWorld{}
	s := probeStep()
	s.Probe.Needs = []string{"exists"}
	since := []time.Time{{}, time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
	clock := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	rec := &roundRecorder{Checker: w}
	if _, err := RunStep(context.Background(), rec, w, s, checks.Windows{Since: since}, nil, func() time.Time { return clock }); err != nil {
		t.Fatal(err)
	}
	want := []checks.Round{
		{Checks: s.Checks, Windows: checks.Windows{Since: since}},
		{Checks: s.Checks, Windows: checks.Windows{Since: since}, ProbeStart: clock},
	}
	if !reflect.DeepEqual(rec.asked, want) {
		t.Errorf("asked %+v, want %+v", rec.asked, want)
	}
}

// roundRecorder records the rounds a Checker is asked.
type roundRecorder struct {
	Checker
	asked []checks.Round
}

func (r *roundRecorder) RunChecks(ctx context.Context, round checks.Round) ([]checks.Result, error) {
	r.asked = append(r.asked, round)
	return r.Checker.RunChecks(ctx, round)
}

// The instructor's grade of a learner whose steps it did not see begin
// (they worked through an invite) names each audit check's step, so that
// the checker begins its window at the step's mark after the learner's
// start.
func TestGradeNamesTheStepsToMarkItDidNotSeeBegin(t *testing.T) {
	fc := &fakeChecker{}
	s, _ := newGrader(t, fc)
	scaled := lab.Check{Name: "scaled", Points: 1, Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Resource: "deployments", Subresource: "scale"}}}
	s.Lab.Steps[1].Checks = append(s.Lab.Steps[1].Checks, scaled)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	if err := s.Store.Update(ctx, s.Lab.Metadata.Name, func(p *progress.Progress) error {
		p.Reconcile(s.Lab, s.Digest)
		p.RestartAt(t0)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Grade(ctx); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range fc.asked {
		for i, c := range r.Checks {
			if c.Name != "scaled" {
				continue
			}
			found = true
			if len(r.Marks) <= i || r.Marks[i] != "two" || len(r.Since) <= i || !r.Since[i].Equal(t0) {
				t.Errorf("the grade asked %+v for the audit check, want step two to mark after %v", r.Windows, t0)
			}
		}
	}
	if !found {
		t.Fatalf("the grade never asked the audit check: %+v", fc.asked)
	}
}
