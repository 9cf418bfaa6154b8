package progress

import (
	"slices"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

// Two audit checks and a file check.
var (
	scale = lab.Check{Name: "scaled", Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Resource: "deployments", Subresource: "scale"}}}
	apply = lab.Check{Name: "applied", Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Verbs: []string{"apply"}, Resource: "deployments"}}}
	file  = lab.Check{Name: "note", File: &lab.FileCheck{Path: "/root/n"}}
)

func TestAuditWindowsFollowTheSteps(t *testing.T) {
	l := &lab.Lab{Steps: []lab.Step{
		{ID: "one", Checks: []lab.Check{file, apply}},
		{ID: "two", Checks: []lab.Check{scale}},
		{ID: "three", Checks: []lab.Check{apply}},
	}}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var none *Progress
	if got := none.AuditWindows(l, []lab.Check{apply}); got != nil {
		t.Errorf("no progress gives windows %v; want the whole log", got)
	}
	p := New("l")
	if got := p.AuditWindows(l, []lab.Check{file, apply, scale}); got != nil {
		t.Errorf("a new progress gives windows %v; want the whole log", got)
	}
	if _, err := p.Record(l, "one", true, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Record(l, "two", true, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	all := append(append(append([]lab.Check(nil), l.Steps[0].Checks...), l.Steps[1].Checks...), l.Steps[2].Checks...)
	got := p.AuditWindows(l, all)
	// apply is in steps one and three: the current step three's window.
	want := []time.Time{{}, t0.Add(time.Minute), t0, t0.Add(time.Minute)}
	if len(got) != len(want) {
		t.Fatalf("windows %v", got)
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("check %d (%s): window %v, want %v", i, all[i].Name, got[i], want[i])
		}
	}
}

// The audit checks of steps whose start the progress did not see (an
// invited learner's, in the instructor's record) are given their step to
// mark; a step seen to begin, and every other check, are not.
func TestMarkStepsNameTheStepsNotSeenToBegin(t *testing.T) {
	l := &lab.Lab{Steps: []lab.Step{
		{ID: "one", Checks: []lab.Check{file, apply}},
		{ID: "two", Checks: []lab.Check{scale}},
	}}
	all := []lab.Check{file, apply, scale}
	var none *Progress
	if got := none.MarkSteps(l, all); got != nil {
		t.Errorf("no progress: %q", got)
	}
	p := New("l")
	p.RestartAt(time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
	if got, want := p.MarkSteps(l, all), []string{"", "one", "two"}; !slices.Equal(got, want) {
		t.Errorf("nothing seen: %q, want %q", got, want)
	}
	if _, err := p.Record(l, "one", true, time.Date(2026, 11, 30, 10, 5, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if got, want := p.MarkSteps(l, all), []string{"", "one", ""}; !slices.Equal(got, want) {
		t.Errorf("step two seen to begin: %q, want %q", got, want)
	}
	if got := p.MarkSteps(l, []lab.Check{file, scale}); got != nil {
		t.Errorf("no check to mark: %q", got)
	}
}
