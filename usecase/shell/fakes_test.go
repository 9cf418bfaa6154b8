package shell

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

// syncBuffer is a buffer safe for one writer and polling readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// fakeShell is the shell side: the test writes its output through out and
// reads what was typed into it from typed.
type fakeShell struct {
	r     *io.PipeReader
	out   *io.PipeWriter
	typed syncBuffer

	mu      sync.Mutex
	resizes []Size
	failing int // resizes still to fail
}

func newFakeShell() *fakeShell {
	r, w := io.Pipe()
	return &fakeShell{r: r, out: w}
}

func (f *fakeShell) Read(p []byte) (int, error)  { return f.r.Read(p) }
func (f *fakeShell) Write(p []byte) (int, error) { return f.typed.Write(p) }
func (f *fakeShell) Close() error                { return f.r.Close() }
func (f *fakeShell) Resize(_ context.Context, rows, cols uint) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing > 0 {
		f.failing--
		return io.ErrClosedPipe
	}
	f.resizes = append(f.resizes, Size{rows, cols})
	return nil
}

// print writes shell output; it returns once the session has read it.
func (f *fakeShell) print(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(f.out, s); err != nil {
		t.Fatalf("shell output: %v", err)
	}
}

// fakeTerminal is the learner's terminal: keys typed through keys, the
// screen in screen.
type fakeTerminal struct {
	r        *io.PipeReader
	keys     *io.PipeWriter
	screen   syncBuffer
	restored int
	mu       sync.Mutex
	sizes    chan Size
}

func newFakeTerminal() *fakeTerminal {
	r, w := io.Pipe()
	return &fakeTerminal{r: r, keys: w, sizes: make(chan Size, 4)}
}

func (f *fakeTerminal) Read(p []byte) (int, error)  { return f.r.Read(p) }
func (f *fakeTerminal) Write(p []byte) (int, error) { return f.screen.Write(p) }
func (f *fakeTerminal) WatchSize(ctx context.Context, resized func(rows, cols uint)) {
	for {
		select {
		case <-ctx.Done():
			return
		case sz := <-f.sizes:
			resized(sz.Rows, sz.Cols)
		}
	}
}

func (f *fakeTerminal) Restore() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.restored++
}

// fakeProgress keeps progress in memory and records every call.
type fakeProgress struct {
	lab *lab.Lab

	mu      sync.Mutex
	current int // index of the current step; len(steps) when done
	passed  map[string]bool
	records []string // "id:pass" / "id:fail"
	reads   int      // calls of State
	// since, when set, gives the current step's checks their audit windows.
	since []time.Time
}

func (f *fakeProgress) State() (State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.stateLocked(), nil
}

// stateReads is how many times the progress was read.
func (f *fakeProgress) stateReads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func (f *fakeProgress) stateLocked() State {
	st := State{Passed: map[string]bool{}}
	for k, v := range f.passed {
		st.Passed[k] = v
	}
	if f.current < len(f.lab.Steps) {
		st.Current = &f.lab.Steps[f.current]
		st.Step.Since = f.since
	}
	return st
}

func (f *fakeProgress) Record(_ context.Context, step string, results []checks.Result) (State, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !checks.StepPassed(results) {
		f.records = append(f.records, step+":fail")
		return f.stateLocked(), false, nil
	}
	if f.current >= len(f.lab.Steps) || f.lab.Steps[f.current].ID != step {
		return f.stateLocked(), false, nil // completed meanwhile
	}
	f.records = append(f.records, step+":pass")
	if f.passed == nil {
		f.passed = map[string]bool{}
	}
	f.passed[step] = true
	f.current++
	return f.stateLocked(), true, nil
}

func (f *fakeProgress) recorded() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.records...)
}

// fakeChecker answers rounds from a script of results: pass or fail per
// call (the last entry repeats). gate, when set, blocks each round until a
// value arrives or the round's context ends.
type fakeChecker struct {
	mu     sync.Mutex
	script []bool
	calls  []string // the first check's name of each round
	rounds []checks.Round
	gate   chan struct{}
	called chan int
}

func newFakeChecker(script ...bool) *fakeChecker {
	return &fakeChecker{script: script, called: make(chan int, 100)}
}

func (f *fakeChecker) check(ctx context.Context, round checks.Round) ([]checks.Result, error) {
	cs := round.Checks
	f.mu.Lock()
	n := len(f.calls)
	f.calls = append(f.calls, cs[0].Name)
	f.rounds = append(f.rounds, round)
	pass := f.script[min(n, len(f.script)-1)]
	gate := f.gate
	f.mu.Unlock()
	f.called <- n + 1
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	r := checks.Result{Name: cs[0].Name, Status: checks.Pass, Points: 1}
	if !pass {
		r.Status, r.Message = checks.Fail, "expected a file, found nothing"
	}
	return []checks.Result{r}, nil
}

// asked is every round the checker was asked, in order.
func (f *fakeChecker) asked() []checks.Round {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]checks.Round(nil), f.rounds...)
}

func (f *fakeChecker) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// waitCall waits for the checker's call number n.
func (f *fakeChecker) waitCall(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case got := <-f.called:
			if got >= n {
				return
			}
		case <-deadline:
			t.Fatalf("checker call %d never came (had %d)", n, f.count())
		}
	}
}

func testLab() *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "demo", Title: "Demo lab"},
		Steps: []lab.Step{
			{ID: "one", Title: "First things", Instructions: "Create the file.\nThen commit it.",
				Hints:  []string{"Use touch.", "Use git commit."},
				Checks: []lab.Check{{Name: "one-file"}}},
			{ID: "two", Title: "Second things", Instructions: "Deploy 日本語 안녕.",
				Checks: []lab.Check{{Name: "two-deploy"}}},
		},
	}
}

// harness runs a session over fakes.
type harness struct {
	shell   *fakeShell
	term    *fakeTerminal
	prog    *fakeProgress
	checker *fakeChecker
	done    chan error
	cancel  context.CancelFunc
}

func start(t *testing.T, checker *fakeChecker, tweak func(*Config)) *harness {
	t.Helper()
	l := testLab()
	h := &harness{
		shell: newFakeShell(), term: newFakeTerminal(), prog: &fakeProgress{lab: l},
		checker: checker, done: make(chan error, 1),
	}
	cfg := Config{
		Lab: l, Shell: h.shell, Terminal: h.term, Check: checker.check, Progress: h.prog,
		Debounce: 20 * time.Millisecond, Recheck: 20 * time.Millisecond, Quiet: 20 * time.Millisecond,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- s.Run(ctx) }()
	t.Cleanup(func() {
		h.shell.out.Close()
		h.term.keys.Close()
		cancel()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			t.Error("session did not end")
		}
	})
	return h
}

// waitScreen waits until the terminal shows want.
func (h *harness) waitScreen(t *testing.T, want string) string {
	t.Helper()
	return waitFor(t, "screen", &h.term.screen, want)
}

// waitTyped waits until the shell received want as input.
func (h *harness) waitTyped(t *testing.T, want string) string {
	t.Helper()
	return waitFor(t, "shell input", &h.shell.typed, want)
}

func waitFor(t *testing.T, what string, b *syncBuffer, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := b.String()
		if strings.Contains(s, want) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never showed %q; it has:\n%q", what, want, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
