package grading

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// fakeChecker answers each check with the status set for its name (pass
// when unset) and records every round it was asked to run.
type fakeChecker struct {
	status map[string]checks.Status
	err    error
	rounds [][]string
	drop   bool // answer one result too few
	// deadlines records how far off each round's deadline was.
	deadlines []time.Duration
	// asked records every round as it was asked.
	asked []checks.Round
	// cells are what a check of this name found of its cells, when it is a
	// matrix check.
	cells map[string]map[string]checks.CellAnswer
}

func (f *fakeChecker) RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	cs := r.Checks
	f.asked = append(f.asked, r)
	if d, ok := ctx.Deadline(); ok {
		f.deadlines = append(f.deadlines, time.Until(d))
	} else {
		f.deadlines = append(f.deadlines, -1)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	f.rounds = append(f.rounds, names)
	if f.err != nil {
		return nil, f.err
	}
	var rs []checks.Result
	for _, c := range cs {
		st := f.status[c.Name]
		if st == "" {
			st = checks.Pass
		}
		r := checks.Result{Name: c.Name, Status: st, Points: c.Points, Optional: c.Optional, Cells: f.cells[c.Name]}
		if st != checks.Pass {
			r.Message = "expected something for " + c.Name + ", found nothing"
		}
		rs = append(rs, r)
	}
	if f.drop {
		rs = rs[:len(rs)-1]
	}
	return rs, nil
}

func testLab() *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "lab1", Title: "Lab one"},
		Steps: []lab.Step{
			{ID: "one", Title: "First", Checks: []lab.Check{{Name: "a", Points: 1}, {Name: "b", Points: 2}}},
			{ID: "two", Title: "Second", Checks: []lab.Check{{Name: "a", Points: 1}, {Name: "extra", Points: 1, Optional: true}}},
		},
	}
}

func newGrader(t *testing.T, c Checker) (*Grader, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	clock := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	return &Grader{
		Lab:     testLab(),
		Digest:  "sha256:d1",
		Store:   progress.NewStore(t.TempDir()),
		Checker: c,
		Catalog: msg.New(msg.English),
		Out:     &out,
		Err:     &bytes.Buffer{},
		Now:     func() time.Time { clock = clock.Add(time.Second); return clock },
	}, &out
}

func TestCheckAdvancesOnPass(t *testing.T) {
	fc := &fakeChecker{status: map[string]checks.Status{"b": checks.Fail}}
	s, out := newGrader(t, fc)
	ctx := context.Background()

	v, err := s.Check(ctx, "")
	if err != nil || v != Failed {
		t.Fatalf("Check = %v, %v; want failed", v, err)
	}
	if !strings.Contains(out.String(), "✗ b") || !strings.Contains(out.String(), "expected something for b") || !strings.Contains(out.String(), "Step not done yet: First (1 of 2") {
		t.Errorf("output:\n%s", out)
	}
	p, _ := s.Store.Load("lab1")
	if p.Attempts["one"] != 1 || p.IsPassed("one") {
		t.Errorf("after a failed check: %+v", p)
	}

	fc.status = nil
	out.Reset()
	v, err = s.Check(ctx, "")
	if err != nil || v != Passed {
		t.Fatalf("Check = %v, %v; want passed", v, err)
	}
	if !strings.Contains(out.String(), "Step passed: First") || !strings.Contains(out.String(), "Next, step 2/2: Second") {
		t.Errorf("output:\n%s", out)
	}
	p, _ = s.Store.Load("lab1")
	if p.Current != "two" || p.Attempts["one"] != 2 || !p.IsPassed("one") || p.Digest != "sha256:d1" {
		t.Errorf("after passing: %+v", p)
	}
	// Only the current step's checks ran, one round each time.
	if len(fc.rounds) != 2 || strings.Join(fc.rounds[1], ",") != "a,b" {
		t.Errorf("rounds %v", fc.rounds)
	}

	// An optional check that fails does not hold the step back.
	fc.status = map[string]checks.Status{"extra": checks.Fail}
	out.Reset()
	v, _ = s.Check(ctx, "")
	if v != Passed || !strings.Contains(out.String(), "All 2 steps are done") {
		t.Errorf("last step: %v\n%s", v, out)
	}
	out.Reset()
	v, _ = s.Check(ctx, "")
	if v != Passed || !strings.Contains(out.String(), "All 2 steps are done") || len(fc.rounds) != 3 {
		t.Errorf("checking a finished lab: %v, %d rounds\n%s", v, len(fc.rounds), out)
	}
}

func TestCheckErrorIsNotTheLearnersFault(t *testing.T) {
	fc := &fakeChecker{status: map[string]checks.Status{"a": checks.Error, "b": checks.Fail}}
	s, out := newGrader(t, fc)
	v, err := s.Check(context.Background(), "one")
	if err != nil || v != Errored {
		t.Fatalf("Check = %v, %v; want errored", v, err)
	}
	// A check that could not run is one that does not pass: the step is
	// not passed, and the count says so, as the shell's lab check says.
	if !strings.Contains(out.String(), "! a") || !strings.Contains(out.String(), "not your fault") || !strings.Contains(out.String(), "(2 of 2 required checks do not pass)") {
		t.Errorf("output:\n%s", out)
	}
	p, _ := s.Store.Load("lab1")
	if p.Attempts["one"] != 0 {
		t.Errorf("a round that could not run must not count as an attempt: %v", p.Attempts)
	}

	fc.err = errors.New("the sandbox is not running")
	v, err = s.Check(context.Background(), "one")
	if v != Errored || !IsEnvironmentError(err) || !strings.Contains(err.Error(), "not your fault") || !strings.Contains(err.Error(), "sandbox is not running") {
		t.Errorf("round failure: %v, %v", v, err)
	}
	fc.err = nil
	fc.drop = true
	if _, err := s.Check(context.Background(), "one"); !IsEnvironmentError(err) || !strings.Contains(err.Error(), "1 results for 2 checks") {
		t.Errorf("short answer: %v", err)
	}
}

func TestCheckNamedStep(t *testing.T) {
	s, _ := newGrader(t, &fakeChecker{})
	if v, err := s.Check(context.Background(), "two"); err != nil || v != Passed {
		t.Fatalf("Check two = %v, %v", v, err)
	}
	p, _ := s.Store.Load("lab1")
	if p.Current != "" || !p.IsPassed("two") {
		t.Errorf("checking a later step must not move the learner: %+v", p)
	}
	if s, _ := p.CurrentStep(testLab()); s.ID != "one" {
		t.Errorf("current %s, want one", s.ID)
	}
	_, err := s.Check(context.Background(), "three")
	if err == nil || !strings.Contains(err.Error(), `no step "three"`) {
		t.Errorf("unknown step: %v", err)
	}
}

func TestCheckRefusesCorruptProgress(t *testing.T) {
	s, _ := newGrader(t, &fakeChecker{})
	if err := s.Store.Save(progress.New("lab1")); err != nil {
		t.Fatal(err)
	}
	// Corrupt it by hand.
	if err := writeFile(s.Store.Path(), "{not json"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Check(context.Background(), "")
	var ce *progress.CorruptError
	if !errors.As(err, &ce) {
		t.Errorf("Check on a corrupt file = %v, want *progress.CorruptError", err)
	}
	if b, _ := readFile(s.Store.Path()); b != "{not json" {
		t.Errorf("the corrupt file was overwritten: %q", b)
	}
}

func TestGradeOneRoundSplitPerStep(t *testing.T) {
	fc := &fakeChecker{status: map[string]checks.Status{"b": checks.Fail}}
	s, _ := newGrader(t, fc)
	r, v, err := s.Grade(context.Background())
	if err != nil || v != Failed {
		t.Fatalf("Grade = %v, %v", v, err)
	}
	if len(fc.rounds) != 1 || strings.Join(fc.rounds[0], ",") != "a,b,a,extra" {
		t.Errorf("want one round of every check, got %v", fc.rounds)
	}
	if len(r.Steps) != 2 || len(r.Steps[0].Checks) != 2 || r.Steps[0].Checks[1].Name != "b" || r.Steps[1].Checks[1].Name != "extra" {
		t.Errorf("split: %+v", r.Steps)
	}
	if r.Score != 3 || r.MaxScore != 5 || r.Passed {
		t.Errorf("score %d/%d passed %v; want 3/5 false", r.Score, r.MaxScore, r.Passed)
	}
	p, _ := s.Store.Load("lab1")
	if len(p.Grades) != 1 || p.Grades[0].Score != 3 || p.Grades[0].MaxScore != 5 || p.Grades[0].Digest != "sha256:d1" {
		t.Errorf("grade history %+v", p.Grades)
	}

	fc.status = map[string]checks.Status{"extra": checks.Error}
	if _, v, _ := s.Grade(context.Background()); v != Passed {
		t.Errorf("an optional error must not fail the grade: %v", v)
	}
	fc.status = map[string]checks.Status{"a": checks.Error}
	if _, v, _ := s.Grade(context.Background()); v != Errored {
		t.Errorf("a required error: %v, want errored", v)
	}
	fc.err = errors.New("boom")
	if _, v, err := s.Grade(context.Background()); v != Errored || !IsEnvironmentError(err) {
		t.Errorf("round failure: %v %v", v, err)
	}
	p, _ = s.Store.Load("lab1")
	if len(p.Grades) != 3 {
		t.Errorf("a grade that could not run must not be recorded: %d grades", len(p.Grades))
	}
}

func TestRecord(t *testing.T) {
	store := progress.NewStore(t.TempDir())
	l := testLab()
	now := time.Now()
	pass := []checks.Result{{Name: "a", Status: checks.Pass}, {Name: "b", Status: checks.Pass}}
	record := func(step string, rs []checks.Result) (out progress.Outcome, err error) {
		err = store.Update(context.Background(), l.Metadata.Name, func(p *progress.Progress) (err error) {
			p.Reconcile(l, "sha256:x")
			out, err = Record(p, l, step, rs, now)
			return err
		})
		return out, err
	}
	out, err := record("one", pass)
	if err != nil || !out.Advanced || out.Next.ID != "two" {
		t.Fatalf("Record pass = %+v, %v", out, err)
	}
	errored := []checks.Result{{Name: "a", Status: checks.Error}}
	out, err = record("two", errored)
	if err != nil || out.Passed || out.Next.ID != "two" {
		t.Fatalf("Record error = %+v, %v", out, err)
	}
	p, _ := store.Load("lab1")
	if p.Attempts["two"] != 0 || p.Attempts["one"] != 1 {
		t.Errorf("attempts %v", p.Attempts)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

func TestRoundsHaveADeadline(t *testing.T) {
	fc := &fakeChecker{}
	s, _ := newGrader(t, fc)
	s.Lab.Steps[0].Checks[0].Timeout = lab.Duration{Duration: 3 * time.Minute}
	s.Lab.Steps[0].Checks[0].Final = true // judged again by the grade
	s.Check(context.Background(), "one")
	s.Grade(context.Background())
	if len(fc.deadlines) != 2 {
		t.Fatalf("%d rounds", len(fc.deadlines))
	}
	// Both rounds have a check of 3m: one wave of checks.RoundTimeout.
	want := checks.RoundTimeout(s.Lab.Steps[0].Checks)
	for i := range fc.deadlines {
		if d := fc.deadlines[i]; d <= 0 || d > want || d < want-time.Minute {
			t.Errorf("round %d: deadline in %v, want about %v", i, d, want)
		}
	}
}

// fakeScripts records the scripts it runs; "exit N" exits N.
type fakeScripts struct{ ran []string }

func (f *fakeScripts) RunScript(_ context.Context, script string, stdout, _ io.Writer) (int, error) {
	f.ran = append(f.ran, script)
	io.WriteString(stdout, "output of "+script+"\n")
	var code int
	fmt.Sscanf(script, "exit %d", &code)
	return code, nil
}

func TestCheckRunsTheNextStepsSetup(t *testing.T) {
	fc := &fakeChecker{}
	s, _ := newGrader(t, fc)
	sc := &fakeScripts{}
	s.Scripts = sc
	s.Lab.Steps[0].Setup = "setup-one"
	s.Lab.Steps[1].Setup = "setup-two"
	if v, err := s.Check(context.Background(), ""); v != Passed || err != nil {
		t.Fatalf("Check = %v, %v", v, err)
	}
	if strings.Join(sc.ran, ",") != "setup-two" {
		t.Errorf("ran %v, want only the setup of the step reached", sc.ran)
	}
	// Re-checking a passed step does not run setups again.
	s.Check(context.Background(), "one")
	if len(sc.ran) != 1 {
		t.Errorf("ran %v", sc.ran)
	}

	s2, _ := newGrader(t, fc)
	s2.Scripts = sc
	s2.Lab.Steps[1].Setup = "exit 3"
	v, err := s2.Check(context.Background(), "")
	if v != Errored || err == nil || !strings.Contains(err.Error(), "setup script of step two") || !strings.Contains(err.Error(), "status 3") || !strings.Contains(err.Error(), "output of exit 3") {
		t.Errorf("failing setup: %v, %v", v, err)
	}

	// An invited learner cannot reset their lab: they are told whom to ask.
	s3, _ := newGrader(t, fc)
	s3.Scripts = sc
	s3.Situation = Invited("ada")
	s3.Lab.Steps[1].Setup = "exit 3"
	if _, err := s3.Check(context.Background(), ""); err == nil || !strings.Contains(err.Error(), "ask your instructor to run `labctl class reset ada --to two`") {
		t.Errorf("failing setup of an invited learner: %v", err)
	}
}

// A step that passed keeps the results of the round in which it passed: a
// later change that breaks its checks does not take the step back at the
// grade, which says when it passed. Its final checks are judged again; a
// lab whose step changed, or a reset, judges the step anew.
func TestGradeKeepsPassedSteps(t *testing.T) {
	fc := &fakeChecker{status: map[string]checks.Status{}}
	s, _ := newGrader(t, fc)
	ctx := context.Background()
	if v, err := s.Check(ctx, ""); err != nil || v != Passed {
		t.Fatalf("step one: %v, %v", v, err)
	}
	// Later work breaks what step one checked (a is step two's too).
	fc.status["a"], fc.status["b"] = checks.Fail, checks.Fail
	r, v, err := s.Grade(ctx)
	if err != nil {
		t.Fatal(err)
	}
	one := r.Steps[0]
	if !one.Passed || one.PassedAt == nil || one.Checks[1].Status != checks.Pass {
		t.Errorf("step one at the grade: %+v, want passed, kept", one)
	}
	if v != Failed || r.Steps[1].Passed || r.Steps[1].PassedAt != nil {
		t.Errorf("step two (never passed) at the grade: %+v, verdict %v", r.Steps[1], v)
	}
	if got := fc.rounds[len(fc.rounds)-1]; !slices.Equal(got, []string{"a", "extra"}) {
		t.Errorf("the grade judged %q, want step two's checks only", got)
	}

	// A final check is the lab's end state: judged again.
	s.Lab.Steps[0].Checks[1].Final = true
	if r, _, _ = s.Grade(ctx); r.Steps[0].Passed || r.Steps[0].Checks[1].Status != checks.Fail || r.Steps[0].Checks[0].Status != checks.Pass ||
		r.Steps[0].PassedAt == nil {
		t.Errorf("step one with a failing final check: %+v", r.Steps[0])
	}
	s.Lab.Steps[0].Checks[1].Final = false

	// The step's checks changed since: judged now.
	s.Lab.Steps[0].Checks[1].Name = "b2"
	fc.status["b2"] = checks.Fail
	if r, _, _ = s.Grade(ctx); r.Steps[0].Passed || r.Steps[0].PassedAt != nil {
		t.Errorf("step one after its checks changed: %+v", r.Steps[0])
	}
	s.Lab.Steps[0].Checks[1].Name = "b"

	// A reset forgets the kept rounds.
	if err := s.Store.Update(ctx, s.Lab.Metadata.Name, func(p *progress.Progress) error { p.Restart(); return nil }); err != nil {
		t.Fatal(err)
	}
	if r, _, _ = s.Grade(ctx); r.Steps[0].Passed || r.Steps[0].PassedAt != nil {
		t.Errorf("step one after a reset: %+v", r.Steps[0])
	}
}
