package shell

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// session is a Session over fakes that is not running: the test calls its
// rounds itself.
func session(t *testing.T, c *fakeChecker, p *fakeProgress) *Session {
	t.Helper()
	s, err := New(Config{Lab: p.lab, Shell: newFakeShell(), Terminal: newFakeTerminal(), Check: c.check, Progress: p,
		Recheck: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A round after a command reads the progress once: both rounds and the
// completion take what they need from that reading, and each round asks
// the runtime with the audit windows it gave.
func TestAutoRoundReadsProgressOnce(t *testing.T) {
	since := []time.Time{time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	p := &fakeProgress{lab: testLab(), since: since}
	c := newFakeChecker(true, true)
	text, couldNotRun := session(t, c, p).autoRound(context.Background())
	if couldNotRun || !strings.Contains(text, "Step passed: First things") {
		t.Fatalf("autoRound = %q, %t; want the step passed", text, couldNotRun)
	}
	if n := p.stateReads(); n != 1 {
		t.Errorf("the round read the progress %d times, want once", n)
	}
	if got := p.recorded(); !reflect.DeepEqual(got, []string{"one:pass"}) {
		t.Errorf("recorded %v, want [one:pass]", got)
	}
	asked := c.asked()
	if len(asked) != 2 {
		t.Fatalf("%d rounds, want 2 (a confirming round)", len(asked))
	}
	for i, r := range asked {
		want := checks.Round{Checks: p.lab.Steps[0].Checks, Windows: checks.Windows{Since: since}, Lang: msg.English}
		if !reflect.DeepEqual(r, want) {
			t.Errorf("round %d asked %+v, want %+v", i+1, r, want)
		}
	}
}

// A step completed meanwhile (by a request, or in another terminal) gives
// no second banner and records nothing more.
func TestAutoRoundOfAStepCompletedMeanwhileSaysNothing(t *testing.T) {
	p := &fakeProgress{lab: testLab()}
	c := newFakeChecker(true, true)
	c.gate = make(chan struct{})
	s := session(t, c, p)
	done := make(chan string)
	go func() {
		text, _ := s.autoRound(context.Background())
		done <- text
	}()
	c.gate <- struct{}{} // the first round
	c.waitCall(t, 2)
	// Elsewhere, the step passes before the confirming round answers.
	if _, moved, err := p.Record(context.Background(), "one", []checks.Result{{Name: "one-file", Status: checks.Pass}}); err != nil || !moved {
		t.Fatalf("recording elsewhere: %t, %v", moved, err)
	}
	c.gate <- struct{}{}
	if text := <-done; text != "" {
		t.Errorf("a step completed meanwhile showed %q", text)
	}
	if got := p.recorded(); !reflect.DeepEqual(got, []string{"one:pass"}) {
		t.Errorf("recorded %v, want the one pass recorded elsewhere", got)
	}
}

// A request's round also takes the audit windows from the reading of the
// progress that answers it.
func TestRequestedRoundCarriesTheAuditWindows(t *testing.T) {
	since := []time.Time{time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)}
	p := &fakeProgress{lab: testLab(), since: since}
	c := newFakeChecker(false)
	session(t, c, p).reply(context.Background(), VerbCheck)
	if n := p.stateReads(); n != 1 {
		t.Errorf("the request read the progress %d times, want once", n)
	}
	want := []checks.Round{{Checks: p.lab.Steps[0].Checks, Windows: checks.Windows{Since: since}, Lang: msg.English}}
	if got := c.asked(); !reflect.DeepEqual(got, want) {
		t.Errorf("asked %+v, want %+v", got, want)
	}
}

// StoreProgress gives the current step's audit windows from the progress
// file, and a passing round of a step that is no longer current records
// nothing.
func TestStoreProgressGivesTheAuditWindowsAndKeepsACompletedStep(t *testing.T) {
	l := testLab()
	audit := lab.Check{Name: "scaled", Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Resource: "deployments", Subresource: "scale"}}}
	l.Steps[1].Checks = append(l.Steps[1].Checks, audit)
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	store := progress.NewStore(t.TempDir())
	p := &StoreProgress{Store: store, Lab: l, Now: func() time.Time { return t0 }}
	ctx := context.Background()
	if _, moved, err := p.Record(ctx, "one", results(checks.Pass)); err != nil || !moved {
		t.Fatalf("Record: %t, %v", moved, err)
	}
	st, err := p.State()
	if err != nil || st.Current == nil || st.Current.ID != "two" {
		t.Fatalf("State: %+v, %v", st, err)
	}
	if want := []time.Time{{}, t0}; !reflect.DeepEqual(st.Step.Since, want) {
		t.Errorf("audit windows %v, want %v (step two began when step one passed)", st.Step.Since, want)
	}
	// A confirming round of step one, completed meanwhile, answers late.
	after, moved, err := p.Record(ctx, "one", results(checks.Pass))
	if err != nil || moved || after.Current == nil || after.Current.ID != "two" {
		t.Fatalf("a late pass of a completed step: %+v, %t, %v; want nothing recorded", after, moved, err)
	}
	pr, err := store.Load(l.Metadata.Name)
	if err != nil || pr.Attempts["one"] != 1 {
		t.Errorf("attempts %v, %v; want the one round", pr.Attempts, err)
	}
}

// headReporter answers the host's ReportHead rounds with a fixed commit
// per repository.
type headReporter map[string]string

func (h headReporter) RunChecks(_ context.Context, r checks.Round) ([]checks.Result, error) {
	out := make([]checks.Result, len(r.Checks))
	for i, c := range r.Checks {
		out[i] = checks.Result{Name: c.Name, Status: checks.Pass, Message: h[c.Git.Repo]}
	}
	return out, nil
}

// When the learner moves on to a step whose checks count commits since it
// began, StoreProgress notes where its repository is, and the step's
// rounds carry it; a current step not yet noted is noted when read.
func TestStoreProgressNotesWhereAStepBegins(t *testing.T) {
	l := testLab()
	min := 1
	since := lab.Check{Name: "new-commit", Git: &lab.GitCheck{Repo: "/root/repo", Since: lab.SinceStep, Commits: &lab.Range{Min: &min}}}
	l.Steps[1].Checks = append(l.Steps[1].Checks, since)
	store := progress.NewStore(t.TempDir())
	heads := headReporter{"/root/repo": "c0ffee"}
	p := &StoreProgress{Store: store, Lab: l, Checker: heads}
	ctx := context.Background()
	if _, moved, err := p.Record(ctx, "one", results(checks.Pass)); err != nil || !moved {
		t.Fatalf("Record: %t, %v", moved, err)
	}
	st, err := p.State()
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, len(l.Steps[1].Checks))
	want[len(want)-1] = "c0ffee"
	if !reflect.DeepEqual(st.Step.Heads, want) {
		t.Errorf("heads %q, want %q", st.Step.Heads, want)
	}
	// Progress from before the step was noted: read, it is noted now,
	// late (the learner may have made the step's commits already).
	if err := store.Update(ctx, l.Metadata.Name, func(pr *progress.Progress) error { pr.Heads = nil; return nil }); err != nil {
		t.Fatal(err)
	}
	heads["/root/repo"] = "beef"
	if st, err = p.State(); err != nil || st.Step.Heads[len(st.Step.Heads)-1] != checks.HeadLate+" beef" {
		t.Errorf("a step not noted: heads %q, %v; want it noted late at beef", st.Step.Heads, err)
	}
}

// marker records the steps it is asked to mark, and the setups run by
// then, as an invite's live lab marks them (checks.StepMarker).
type marker struct {
	headReporter
	marked []string
	last   string
	ran    *[]string
}

func (m *marker) MarkStep(_ context.Context, step string) error {
	if m.last == step {
		return nil // marked already, as the live lab keeps it
	}
	m.last = step
	m.marked = append(m.marked, fmt.Sprintf("%s after %d setups", step, len(*m.ran)))
	return nil
}

// setupRecorder records the scripts it runs.
type setupRecorder struct{ ran *[]string }

func (s setupRecorder) RunScript(_ context.Context, script string, _, _ io.Writer) (int, error) {
	*s.ran = append(*s.ran, script)
	return 0, nil
}

// Where the checker marks steps (an invite), the current step is marked
// when read and a step the learner moves on to is marked before its setup
// runs: the instructor's grade begins its audit window there.
func TestStoreProgressMarksEachStepAsItBegins(t *testing.T) {
	l := testLab()
	l.Steps[1].Setup = "kubectl apply -f step-two.yaml"
	var ran []string
	m := &marker{headReporter: headReporter{}, ran: &ran}
	p := &StoreProgress{Store: progress.NewStore(t.TempDir()), Lab: l, Checker: m, Scripts: setupRecorder{&ran}}
	if _, err := p.State(); err != nil {
		t.Fatal(err)
	}
	if _, moved, err := p.Record(context.Background(), "one", results(checks.Pass)); err != nil || !moved {
		t.Fatalf("Record: %t, %v", moved, err)
	}
	if want := []string{"one after 0 setups", "two after 0 setups"}; !slices.Equal(m.marked, want) || len(ran) != 1 {
		t.Errorf("marked %q with setups %q, want %q and the setup after", m.marked, ran, want)
	}
}
