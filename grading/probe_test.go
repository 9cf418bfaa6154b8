package grading

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// probeWorld is a fake lab for probes: it logs every step of a probe in
// order (setup, run, round, restore) and answers each like the lab says.
type probeWorld struct {
	log []string
	// setupCode, runCode and restoreCode are the scripts' exit codes.
	setupCode, runCode, restoreCode int
	// runHangs makes the run wait until its context ends.
	runHangs bool
	// runOutput is what the run prints.
	runOutput string
	// status answers a check by name (pass when unset); probeStarts
	// records each round's probe start (zero without one).
	status      map[string]checks.Status
	probeStarts []time.Time
	restoreCtx  error
	// breakCode and mendCode are the exit codes of the broken world's
	// setup ("break") and restore ("mend"); brokenRunCode is the run's
	// while the world is broken, brokenHangs makes that run hang.
	breakCode, mendCode, brokenRunCode int
	brokenHangs                        bool
	broken                             bool
	// broken500 is the second world's state ("break500", "mend500"),
	// and run500Code the run's exit code in it.
	broken500  bool
	run500Code int
	// brokenRunTakes is how long the clock moves during the broken run.
	brokenRunTakes time.Duration
	advance        func(time.Duration)
}

func (w *probeWorld) RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error) {
	w.log = append(w.log, "admin:"+script)
	switch script {
	case "setup":
		fmt.Fprintln(out, "setup said no")
		return w.setupCode, nil
	case "restore":
		w.restoreCtx = ctx.Err()
		return w.restoreCode, nil
	case "break":
		w.broken = true
		return w.breakCode, nil
	case "mend":
		w.broken = false
		return w.mendCode, nil
	case "break500":
		w.broken500 = true
	case "mend500":
		w.broken500 = false
	}
	return 0, nil
}

func (w *probeWorld) RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	w.log = append(w.log, "run:"+script)
	if w.broken500 {
		io.WriteString(stdout, "web answered HTTP 500\n")
		return w.run500Code, nil
	}
	if w.broken {
		io.WriteString(stdout, "web answered nothing\n")
		if w.advance != nil {
			w.advance(w.brokenRunTakes)
		}
		if w.brokenHangs {
			<-ctx.Done()
			return -1, ctx.Err()
		}
		return w.brokenRunCode, nil
	}
	io.WriteString(stdout, w.runOutput)
	if w.runHangs {
		<-ctx.Done()
		return -1, ctx.Err()
	}
	return w.runCode, nil
}

func (w *probeWorld) RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	cs := r.Checks
	w.log = append(w.log, "round")
	w.probeStarts = append(w.probeStarts, r.ProbeStart)
	var rs []checks.Result
	for _, c := range cs {
		st := w.status[c.Name]
		if st == "" {
			st = checks.Pass
		}
		rs = append(rs, checks.Result{Name: c.Name, Status: st})
	}
	return rs, nil
}

func probeStep() *lab.Step {
	return &lab.Step{ID: "sync", Checks: []lab.Check{{Name: "exists"}, {Name: "synced"}},
		Probe: &lab.Probe{Setup: "setup", Run: "/root/sync.sh", Restore: "restore", Timeout: lab.Duration{Duration: time.Minute}}}
}

func runProbe(t *testing.T, w *probeWorld, s *lab.Step) []checks.Result {
	t.Helper()
	clock := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	w.advance = func(d time.Duration) { clock = clock.Add(d) }
	rs, err := RunStep(context.Background(), w, w, s, checks.Windows{}, msg.New(msg.English), now)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func probeResult(t *testing.T, rs []checks.Result) checks.Result {
	t.Helper()
	last := rs[len(rs)-1]
	if last.Name != lab.ProbeResult {
		t.Fatalf("last result %q, want the probe's", last.Name)
	}
	return last
}

func TestProbeOrder(t *testing.T) {
	w := &probeWorld{runOutput: "applied 2\n"}
	rs := runProbe(t, w, probeStep())
	if got, want := strings.Join(w.log, " "), "admin:setup run:/root/sync.sh round admin:restore"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if len(rs) != 3 || rs[0].Name != "exists" || rs[1].Name != "synced" {
		t.Fatalf("results %+v", rs)
	}
	p := probeResult(t, rs)
	if p.Status != checks.Pass || !strings.Contains(p.Message, "/root/sync.sh exited with status 0 after 1s") ||
		!strings.Contains(p.Message, "applied 2") || p.Duration != time.Second || p.Points != 0 {
		t.Errorf("probe result %+v", p)
	}
	if want := time.Date(2026, 11, 30, 7, 0, 1, 0, time.UTC); !w.probeStarts[0].Equal(want) {
		t.Errorf("the round's probe start %v, want %v (before the setup)", w.probeStarts[0], want)
	}
}

func TestProbeRunFailsIsTheLearners(t *testing.T) {
	w := &probeWorld{runCode: 3, runOutput: "kubectl: not found\n\x1b[2Jgone\n", status: map[string]checks.Status{"synced": checks.Fail}}
	rs := runProbe(t, w, probeStep())
	if got := strings.Join(w.log, " "); !strings.HasSuffix(got, "round admin:restore") {
		t.Errorf("the checks and the restore must follow a failed run: %q", got)
	}
	p := probeResult(t, rs)
	if p.Status != checks.Fail || !strings.Contains(p.Message, "exited with status 3") ||
		!strings.Contains(p.Message, `\x1b[2Jgone`) || strings.Contains(p.Message, "\x1b") {
		t.Errorf("probe result %+v", p)
	}
	if rs[1].Status != checks.Fail {
		t.Errorf("the checks' own results must be kept: %+v", rs[1])
	}
}

func TestProbeTimeoutRestores(t *testing.T) {
	w := &probeWorld{runHangs: true}
	s := probeStep()
	s.Probe.Timeout.Duration = 50 * time.Millisecond
	p := probeResult(t, runProbe(t, w, s))
	if p.Status != checks.Fail || !strings.Contains(p.Message, "did not finish within 50ms") {
		t.Errorf("probe result %+v", p)
	}
	if got := strings.Join(w.log, " "); got != "admin:setup run:/root/sync.sh round admin:restore" {
		t.Errorf("order %q", got)
	}
	if w.restoreCtx != nil {
		t.Errorf("the restore ran with an ended context: %v", w.restoreCtx)
	}
}

func TestProbeSetupFailureIsAnError(t *testing.T) {
	w := &probeWorld{setupCode: 1}
	rs := runProbe(t, w, probeStep())
	if got := strings.Join(w.log, " "); got != "admin:setup admin:restore" {
		t.Errorf("a failed setup must be restored and nothing run: %q", got)
	}
	p := probeResult(t, rs)
	if p.Status != checks.Error || !strings.Contains(p.Message, "exit status 1: setup said no") || !strings.Contains(p.Message, "not your fault") {
		t.Errorf("probe result %+v", p)
	}
	for _, r := range rs[:2] {
		if r.Status != checks.Error {
			t.Errorf("check %s: %s, want error when the setup failed", r.Name, r.Status)
		}
	}
	if checks.Summarize(rs).Verdict() != Errored {
		t.Errorf("a failed setup must not count against the learner")
	}
}

func TestProbeRestoreFailureIsAnError(t *testing.T) {
	w := &probeWorld{restoreCode: 2}
	p := probeResult(t, runProbe(t, w, probeStep()))
	if p.Status != checks.Error || !strings.Contains(p.Message, "could not put the cluster back") {
		t.Errorf("probe result %+v", p)
	}
}

func TestProbeSkippedWhenNeedsFail(t *testing.T) {
	w := &probeWorld{status: map[string]checks.Status{"exists": checks.Fail}}
	s := probeStep()
	s.Probe.Needs = []string{"exists"}
	rs := runProbe(t, w, s)
	if got := strings.Join(w.log, " "); got != "round" {
		t.Errorf("a probe whose needs fail must change nothing: %q", got)
	}
	p := probeResult(t, rs)
	if p.Status != checks.Fail || !strings.Contains(p.Message, "was not run, because these checks must pass first: exists") {
		t.Errorf("probe result %+v", p)
	}
	if !w.probeStarts[0].IsZero() {
		t.Errorf("the round before the probe has a probe start")
	}

	w = &probeWorld{}
	runProbe(t, w, s)
	if got := strings.Join(w.log, " "); got != "round admin:setup run:/root/sync.sh round admin:restore" {
		t.Errorf("needs met: %q", got)
	}
}

func TestProbeInterruptedStillRestores(t *testing.T) {
	w := &probeWorld{runHangs: true}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	_, err := RunStep(ctx, w, w, probeStep(), checks.Windows{}, nil, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if got := strings.Join(w.log, " "); got != "admin:setup run:/root/sync.sh admin:restore" {
		t.Errorf("order %q", got)
	}
	if w.restoreCtx != nil {
		t.Errorf("the restore ran with an ended context: %v", w.restoreCtx)
	}
}

func TestProbeWithoutProber(t *testing.T) {
	w := &probeWorld{}
	rs, err := RunStep(context.Background(), w, nil, probeStep(), checks.Windows{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := probeResult(t, rs); p.Status != checks.Error {
		t.Errorf("probe result %+v", p)
	}
	if got := strings.Join(w.log, " "); got != "round" {
		t.Errorf("order %q", got)
	}
}

func TestRunAllProbesEachProbeStep(t *testing.T) {
	w := &probeWorld{}
	l := &lab.Lab{Steps: []lab.Step{{ID: "a", Checks: []lab.Check{{Name: "x"}}}, *probeStep(), {ID: "c", Checks: []lab.Check{{Name: "y"}}}}}
	out, err := RunAll(context.Background(), w, w, l, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.log, " "); got != "round admin:setup run:/root/sync.sh round admin:restore" {
		t.Errorf("order %q", got)
	}
	if len(out["a"]) != 1 || len(out["c"]) != 1 || len(out["sync"]) != 3 || out["c"][0].Name != "y" {
		t.Errorf("results %+v", out)
	}
}

func TestLastOutputIsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", 500))
	}
	got := lastOutput(b.String())
	lines := strings.Split(got, "\n")
	if len(lines) != probeLines || !strings.HasPrefix(lines[0], "line 20 ") || !strings.HasPrefix(lines[9], "line 29 ") {
		t.Errorf("lines %d, first %.10q", len(lines), lines[0])
	}
	for _, l := range lines {
		if len(l) > probeLineBytes+len("…") {
			t.Errorf("line of %d bytes", len(l))
		}
	}
	tb := &tailBuffer{max: 8}
	io.WriteString(tb, "0123456789abc")
	if tb.String() != "56789abc" {
		t.Errorf("tail %q", tb.String())
	}
}

// endingWorld is a probeWorld whose Prober keeps what setup leaves for
// restore, and logs when it forgets it.
type endingWorld struct{ probeWorld }

func (w *endingWorld) EndProbe(ctx context.Context) error {
	w.log = append(w.log, "end")
	return ctx.Err()
}

// What a probe's setup leaves for its restore is forgotten once the probe
// is over: after the restore, whether the setup failed, the step has no
// restore, or the caller's context ended.
func TestProbeEndsAfterRestore(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    *endingWorld
		step func(*lab.Step)
		want string
	}{
		{"passes", &endingWorld{}, nil, "admin:setup run:/root/sync.sh round admin:restore end"},
		{"setup fails", &endingWorld{probeWorld{setupCode: 1}}, nil, "admin:setup admin:restore end"},
		{"no restore", &endingWorld{}, func(s *lab.Step) { s.Probe.Restore = "" }, "admin:setup run:/root/sync.sh round end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := probeStep()
			if tc.step != nil {
				tc.step(s)
			}
			clock := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
			now := func() time.Time { clock = clock.Add(time.Second); return clock }
			if _, err := RunStep(context.Background(), tc.w, tc.w, s, checks.Windows{}, msg.New(msg.English), now); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(tc.w.log, " "); got != tc.want {
				t.Errorf("order %q, want %q", got, tc.want)
			}
		})
	}
	w := &endingWorld{probeWorld{runHangs: true}}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if _, err := RunStep(ctx, w, w, probeStep(), checks.Windows{}, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if got, want := strings.Join(w.log, " "), "admin:setup run:/root/sync.sh admin:restore end"; got != want {
		t.Errorf("interrupted: order %q, want %q", got, want)
	}
}

// A step with a probe that passed keeps its round, the probe's result
// included: the grade runs neither the probe nor the checks again, unless
// the step has a final check, and then the probe's result is of now too.
func TestGradeKeepsAPassedProbeStep(t *testing.T) {
	w := &probeWorld{}
	s, _ := newGrader(t, w)
	s.Lab.Steps = []lab.Step{*probeStep()}
	ctx := context.Background()
	if v, err := s.Check(ctx, "sync"); err != nil || v != Passed {
		t.Fatalf("check: %v, %v (%q)", v, err, w.log)
	}
	w.log, w.runCode = nil, 1 // the script broke since
	r, v, err := s.Grade(ctx)
	if err != nil || v != Passed || r.Steps[0].PassedAt == nil || len(r.Steps[0].Checks) != 3 || len(w.log) != 0 {
		t.Errorf("grade of a kept probe step: %v, %v, %+v, ran %q", v, err, r.Steps[0], w.log)
	}
	s.Lab.Steps[0].Checks[1].Final = true
	r, v, _ = s.Grade(ctx)
	if v != Failed || !slices.Contains(w.log, "run:/root/sync.sh") || r.Steps[0].Checks[2].Status != checks.Fail || r.Steps[0].PassedAt == nil {
		t.Errorf("grade with a final check: %v, %+v, ran %q", v, r.Steps[0], w.log)
	}
}

func brokenStep() *lab.Step {
	s := probeStep()
	s.Probe.Broken = lab.BrokenWorlds{{Description: "web has no Pod to answer", Setup: "break", Restore: "mend"}}
	return s
}

// TestProbeBrokenWorld: the run meets the broken world first, must exit
// non-zero there, and the checks judge only the run that follows.
func TestProbeBrokenWorld(t *testing.T) {
	t.Run("a run that fails while broken passes", func(t *testing.T) {
		w := &probeWorld{brokenRunCode: 1, brokenRunTakes: time.Minute}
		rs := runProbe(t, w, brokenStep())
		want := "admin:break run:/root/sync.sh admin:mend admin:setup run:/root/sync.sh round admin:restore"
		if got := strings.Join(w.log, " "); got != want {
			t.Errorf("order %q, want %q", got, want)
		}
		p := probeResult(t, rs)
		if p.Status != checks.Pass || !strings.Contains(p.Message, "first, in a broken world (web has no Pod to answer), /root/sync.sh exited with status 1, as it must") {
			t.Errorf("probe result %+v", p)
		}
		// The round's probe start is the second run's: a file the first
		// run wrote is not written during the probe.
		if want := time.Date(2026, 11, 30, 7, 1, 1, 0, time.UTC); !w.probeStarts[0].Equal(want) {
			t.Errorf("the round's probe start %v, want %v (after the broken world)", w.probeStarts[0], want)
		}
	})
	t.Run("a run that passes while broken fails", func(t *testing.T) {
		w := &probeWorld{brokenRunCode: 0}
		rs := runProbe(t, w, brokenStep())
		p := probeResult(t, rs)
		if p.Status != checks.Fail || !strings.Contains(p.Message, "first, in a broken world (web has no Pod to answer), /root/sync.sh exited with status 0: it must exit non-zero there") ||
			!strings.Contains(p.Message, "web answered nothing") {
			t.Errorf("probe result %+v", p)
		}
		if got := strings.Join(w.log, " "); !strings.HasSuffix(got, "round admin:restore") {
			t.Errorf("the checks did not judge the second run: %q", got)
		}
		if rs[0].Status != checks.Pass || rs[1].Status != checks.Pass {
			t.Errorf("the checks' own results %+v", rs[:2])
		}
	})
	t.Run("a run that hangs while broken fails", func(t *testing.T) {
		w := &probeWorld{brokenHangs: true}
		s := brokenStep()
		s.Probe.Timeout.Duration = 10 * time.Millisecond
		p := probeResult(t, runProbe(t, w, s))
		if p.Status != checks.Fail || !strings.Contains(p.Message, "did not finish within 10ms and was stopped") || !strings.Contains(p.Message, "web answered nothing") {
			t.Errorf("probe result %+v", p)
		}
		if got := strings.Join(w.log, " "); !strings.Contains(got, "admin:mend admin:setup") {
			t.Errorf("the broken world was not mended: %q", got)
		}
	})
	t.Run("a failing main run stays failed", func(t *testing.T) {
		w := &probeWorld{brokenRunCode: 1, runCode: 2}
		p := probeResult(t, runProbe(t, w, brokenStep()))
		if p.Status != checks.Fail || !strings.Contains(p.Message, "exited with status 2") {
			t.Errorf("probe result %+v", p)
		}
	})
	t.Run("every broken world in turn, each a run that must fail", func(t *testing.T) {
		s := brokenStep()
		s.Probe.Broken = append(s.Probe.Broken, lab.BrokenWorld{Description: "web answers HTTP 500", Setup: "break500", Restore: "mend500"})
		w := &probeWorld{brokenRunCode: 7, run500Code: 0}
		rs := runProbe(t, w, s)
		want := "admin:break run:/root/sync.sh admin:mend admin:break500 run:/root/sync.sh admin:mend500 admin:setup run:/root/sync.sh round admin:restore"
		if got := strings.Join(w.log, " "); got != want {
			t.Errorf("order %q, want %q", got, want)
		}
		p := probeResult(t, rs)
		if p.Status != checks.Fail ||
			!strings.Contains(p.Message, "first, in a broken world (web has no Pod to answer), /root/sync.sh exited with status 7, as it must") ||
			!strings.Contains(p.Message, "first, in a broken world (web answers HTTP 500), /root/sync.sh exited with status 0: it must exit non-zero there") ||
			!strings.Contains(p.Message, "web answered HTTP 500") {
			t.Errorf("a run that exits 0 in the second world: probe result %+v", p)
		}
		w = &probeWorld{brokenRunCode: 7, run500Code: 22}
		if p := probeResult(t, runProbe(t, w, s)); p.Status != checks.Pass || !strings.Contains(p.Message, "(web answers HTTP 500), /root/sync.sh exited with status 22, as it must") {
			t.Errorf("a run that fails in both worlds: probe result %+v", p)
		}
	})
	t.Run("a negated run's world is one where its command must succeed", func(t *testing.T) {
		s := brokenStep()
		s.Probe.Run = "! /root/sync.sh"
		s.Probe.Broken[0].Description = "web answers as it should"
		// The negation exits 1 when the command exits 0, as it must.
		w := &probeWorld{brokenRunCode: 1}
		if p := probeResult(t, runProbe(t, w, s)); p.Status != checks.Pass ||
			!strings.Contains(p.Message, "first, where it must succeed (web answers as it should), /root/sync.sh exited with status 0, as it must") {
			t.Errorf("a command that succeeds where it must: probe result %+v", p)
		}
		// The negation exits 0: the command failed where it must not.
		w = &probeWorld{brokenRunCode: 0}
		if p := probeResult(t, runProbe(t, w, s)); p.Status != checks.Fail ||
			!strings.Contains(p.Message, "first, where it must succeed (web answers as it should), /root/sync.sh exited with a non-zero status: it must exit 0 there") {
			t.Errorf("a command that always fails: probe result %+v", p)
		}
	})
	t.Run("the lab's broken setup failing is an error, mended, with no check run", func(t *testing.T) {
		w := &probeWorld{breakCode: 1}
		rs := runProbe(t, w, brokenStep())
		if got, want := strings.Join(w.log, " "), "admin:break admin:mend"; got != want {
			t.Errorf("order %q, want %q", got, want)
		}
		p := probeResult(t, rs)
		if p.Status != checks.Error || !strings.Contains(p.Message, "This is not your fault") {
			t.Errorf("probe result %+v", p)
		}
		if rs[0].Status != checks.Error {
			t.Errorf("a check ran after the broken setup failed: %+v", rs[0])
		}
	})
	t.Run("the lab's broken restore failing is an error, and nothing more runs", func(t *testing.T) {
		w := &probeWorld{brokenRunCode: 1, mendCode: 1}
		rs := runProbe(t, w, brokenStep())
		if got, want := strings.Join(w.log, " "), "admin:break run:/root/sync.sh admin:mend"; got != want {
			t.Errorf("order %q, want %q", got, want)
		}
		if p := probeResult(t, rs); p.Status != checks.Error || !strings.Contains(p.Message, "could not put the cluster back") {
			t.Errorf("probe result %+v", p)
		}
	})
}

// lockingWorld is a probeWorld whose probes take a lock, as provision's
// Live does.
type lockingWorld struct {
	probeWorld
	lockErr error
}

func (w *lockingWorld) LockProbe(ctx context.Context) (func(), error) {
	w.log = append(w.log, "lock")
	if w.lockErr != nil {
		return nil, w.lockErr
	}
	return func() { w.log = append(w.log, "unlock") }, nil
}

// TestProbeHoldsTheLabsProbeLock: the lock is held from the first script
// of the probe (the broken world's) to its restore; a lock that stays
// taken is an error of the lab's, with no script run.
func TestProbeHoldsTheLabsProbeLock(t *testing.T) {
	w := &lockingWorld{probeWorld: probeWorld{brokenRunCode: 1}}
	rs, err := RunStep(context.Background(), w, w, brokenStep(), checks.Windows{}, msg.New(msg.English), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "lock admin:break run:/root/sync.sh admin:mend admin:setup run:/root/sync.sh round admin:restore unlock"
	if got := strings.Join(w.log, " "); got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if p := probeResult(t, rs); p.Status != checks.Pass {
		t.Errorf("probe result %+v", p)
	}

	w = &lockingWorld{lockErr: errors.New("held for 5m0s")}
	rs, err = RunStep(context.Background(), w, w, brokenStep(), checks.Windows{}, msg.New(msg.English), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.log, " "); got != "lock" {
		t.Errorf("ran %q without the lock", got)
	}
	if p := probeResult(t, rs); p.Status != checks.Error || !strings.Contains(p.Message, "held for 5m0s") || !strings.Contains(p.Message, "not your fault") {
		t.Errorf("probe result %+v", p)
	}
}
