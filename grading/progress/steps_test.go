package progress

import (
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

func threeSteps() *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "lab1"},
		Steps:    []lab.Step{{ID: "one"}, {ID: "two"}, {ID: "three"}},
	}
}

func stepID(s *lab.Step) string {
	if s == nil {
		return "<done>"
	}
	return s.ID
}

func TestRecordAdvancesThroughTheLab(t *testing.T) {
	l := threeSteps()
	p := New("lab1")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

	if s, done := p.CurrentStep(l); stepID(s) != "one" || done {
		t.Fatalf("fresh: current %s done %v, want one", stepID(s), done)
	}
	out, err := p.Record(l, "one", false, now)
	if err != nil {
		t.Fatal(err)
	}
	if out.Passed || out.Advanced || stepID(out.Next) != "one" || out.Done {
		t.Errorf("failed round: %+v", out)
	}
	out, _ = p.Record(l, "one", true, now)
	if !out.Passed || !out.Advanced || stepID(out.Next) != "two" || out.Done {
		t.Errorf("passing round: %+v", out)
	}
	if p.Attempts["one"] != 2 || !p.Passed["one"].Equal(now) {
		t.Errorf("attempts %v passed %v", p.Attempts, p.Passed)
	}
	p.Record(l, "two", true, now.Add(time.Minute))
	out, _ = p.Record(l, "three", true, now.Add(2*time.Minute))
	if !out.Done || out.Next != nil || !p.Done(l) {
		t.Errorf("last step: %+v, want done", out)
	}
	if s, done := p.CurrentStep(l); s != nil || !done {
		t.Errorf("after the last step: current %s done %v", stepID(s), done)
	}
}

func TestRecordOtherStepDoesNotMoveBackwards(t *testing.T) {
	l := threeSteps()
	p := New("lab1")
	now := time.Now()
	p.Record(l, "one", true, now)
	p.Record(l, "two", true, now)
	// Re-checking an earlier step neither moves the learner nor resets its time.
	first := p.Passed["one"]
	out, _ := p.Record(l, "one", true, now.Add(time.Hour))
	if out.Advanced || stepID(out.Next) != "three" {
		t.Errorf("re-check of an earlier step: %+v", out)
	}
	if !p.Passed["one"].Equal(first) {
		t.Errorf("first pass time changed")
	}
	// A failing earlier step is counted but keeps its pass.
	out, _ = p.Record(l, "one", false, now)
	if out.Passed || !p.IsPassed("one") || p.Attempts["one"] != 3 {
		t.Errorf("failing re-check: %+v, attempts %d", out, p.Attempts["one"])
	}
}

func TestRecordSkipsPassedStepsAndReturnsToLeftBehind(t *testing.T) {
	l := threeSteps()
	p := New("lab1")
	now := time.Now()
	// "three" passed ahead of time while on "one".
	out, _ := p.Record(l, "three", true, now)
	if out.Advanced || stepID(out.Next) != "one" {
		t.Errorf("passing a later step: %+v", out)
	}
	out, _ = p.Record(l, "one", true, now)
	if stepID(out.Next) != "two" {
		t.Errorf("next after one = %s, want two", stepID(out.Next))
	}
	out, _ = p.Record(l, "two", true, now)
	if !out.Done {
		t.Errorf("two was the last unpassed step: %+v", out)
	}

	// The current step is the last; an earlier step was left behind.
	p = New("lab1")
	p.Current = "three"
	out, _ = p.Record(l, "three", true, now)
	if out.Done || stepID(out.Next) != "one" {
		t.Errorf("left-behind step: %+v, want one", out)
	}
}

func TestRecordUnknownStep(t *testing.T) {
	p := New("lab1")
	_, err := p.Record(threeSteps(), "four", true, time.Now())
	if err == nil || !strings.Contains(err.Error(), `"four"`) || !strings.Contains(err.Error(), "one two three") {
		t.Errorf("err = %v, want it to name the step and list the lab's steps", err)
	}
	if len(p.Attempts) != 0 {
		t.Errorf("an unknown step must not be counted: %v", p.Attempts)
	}
}

func TestReconcileKeepsProgressByStepID(t *testing.T) {
	now := time.Now()
	p := New("lab1")
	p.Digest = "sha256:old"
	p.Passed = map[string]time.Time{"one": now, "gone": now}
	p.Attempts = map[string]int{"one": 1, "gone": 4, "two": 2}
	p.Current = "gone"

	l := &lab.Lab{Metadata: lab.Metadata{Name: "lab1"}, Steps: []lab.Step{{ID: "zero"}, {ID: "one"}, {ID: "two"}}}
	if !p.Reconcile(l, "sha256:new") {
		t.Fatal("Reconcile reported no change")
	}
	if p.Digest != "sha256:new" || !p.IsPassed("one") || p.IsPassed("gone") || p.Attempts["two"] != 2 || p.Attempts["gone"] != 0 {
		t.Errorf("after reconcile: %+v", p)
	}
	if s, _ := p.CurrentStep(l); stepID(s) != "zero" {
		t.Errorf("current = %s, want the first unpassed step zero", stepID(s))
	}
	if p.Reconcile(l, "sha256:new") {
		t.Errorf("a second reconcile must change nothing")
	}
}

func TestStartAtAndRestart(t *testing.T) {
	l := threeSteps()
	now := time.Now()
	p := New("lab1")
	p.Record(l, "one", true, now)
	p.AddGrade(Grade{Time: now, Score: 1, MaxScore: 3})
	if err := p.StartAt(l, "three", now); err != nil {
		t.Fatal(err)
	}
	if !p.IsPassed("one") || !p.IsPassed("two") || p.IsPassed("three") || len(p.Attempts) != 0 {
		t.Errorf("StartAt three: %+v", p)
	}
	if s, _ := p.CurrentStep(l); stepID(s) != "three" {
		t.Errorf("current %s, want three", stepID(s))
	}
	if err := p.StartAt(l, "nope", now); err == nil {
		t.Errorf("StartAt an unknown step must fail")
	}
	p.Restart()
	if s, _ := p.CurrentStep(l); stepID(s) != "one" || len(p.Passed) != 0 || len(p.Grades) != 1 {
		t.Errorf("after Restart: %+v", p)
	}
}

func TestStepStartFollowsTheLearner(t *testing.T) {
	l := threeSteps()
	t0 := time.Date(2026, 1, 2, 10, 0, 0, 0, time.UTC)
	p := New("lab1")
	if !p.StepStart("one").IsZero() || !p.StepStart("two").IsZero() {
		t.Fatalf("a new progress has window starts: %v", p.Started)
	}
	// Checking a step that is not current starts nothing.
	p.Record(l, "two", true, t0)
	if !p.StepStart("three").IsZero() {
		t.Errorf("passing step two out of turn started three at %v", p.StepStart("three"))
	}
	p.Record(l, "one", false, t0.Add(time.Minute))
	if !p.StepStart("three").IsZero() {
		t.Errorf("a failing round started a step: %v", p.Started)
	}
	// Passing the current step starts the next one not yet passed.
	p.Record(l, "one", true, t0.Add(2*time.Minute))
	if got := p.StepStart("three"); !got.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("three started at %v, want when one passed", got)
	}
	if err := p.StartAt(l, "two", t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := p.StepStart("two"); !got.Equal(t0.Add(3 * time.Minute)) {
		t.Errorf("after StartAt two, two started at %v", got)
	}
	if !p.StepStart("three").IsZero() {
		t.Errorf("StartAt kept a later step's start: %v", p.Started)
	}
	p.RestartAt(t0.Add(4 * time.Minute))
	for _, id := range []string{"one", "two", "three"} {
		if got := p.StepStart(id); !got.Equal(t0.Add(4 * time.Minute)) {
			t.Errorf("after a reset, %s's window starts at %v, want the reset", id, got)
		}
	}
	p.Record(l, "one", true, t0.Add(5*time.Minute))
	if got := p.StepStart("two"); !got.Equal(t0.Add(5 * time.Minute)) {
		t.Errorf("two started at %v after one passed", got)
	}
	if p.Reconcile(&lab.Lab{Steps: l.Steps[:1]}, "d") && p.Started["two"] != (time.Time{}) {
		t.Errorf("reconcile kept a removed step's start")
	}
}
