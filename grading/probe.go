package grading

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
)

// Prober runs a step's probe (lab.Probe): the lab's setup and restore
// scripts with the probe's identity out of the learner's reach, and the
// learner's own command in the sandbox. provision's *Live is the real one.
type Prober interface {
	// RunAdminScript runs a probe's setup or restore script with the
	// probe's identity (admin of the lab's namespaces), never in the
	// sandbox.
	RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error)
	// RunScript runs a command in the sandbox as the learner's shell would.
	RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error)
}

// ProbeEnder is a Prober that keeps what a probe's setup leaves for its
// restore (provision.ProbeDir) between the two scripts; RunStep calls
// EndProbe once the probe is over, restore run or not, to forget it.
type ProbeEnder interface {
	EndProbe(ctx context.Context) error
}

// ProbeLocker is a Prober that runs one probe of its lab at a time, across
// processes (the shell's lab check, labctl check in another terminal, the
// browser view): two probes at once would each change the world the other
// judges, and each restore would put back what the other had changed.
// RunStep holds the lock from the probe's first script to its restore.
type ProbeLocker interface {
	// LockProbe waits for the lab's probe lock and returns its release.
	LockProbe(ctx context.Context) (func(), error)
}

// restoreTimeout bounds a probe's restore, which runs even when the
// caller's context has ended.
const restoreTimeout = time.Minute

// Output bounds of a probe's run as its result shows it.
const (
	probeLines     = 10
	probeLineBytes = 200
	probeKeepBytes = 64 << 10
)

// RunStep runs the checks of step in one checker round and returns a
// result per check, in order. A step with a probe runs through it when p is
// set: the checks its probe needs (one round; when one does not pass the
// probe is skipped and those results are returned), under the lab's probe
// lock when p is a ProbeLocker: the broken world when the probe has one (its
// setup, the run, which must exit non-zero, and its restore), the probe's
// setup with the probe's identity, its run in the sandbox within its
// deadline, the step's checks in one round that knows when that run
// started, and the probe's restore, always, even when the run fails or ctx
// ends. w gives the step's checks their audit windows and step-start
// commits, by position (Windows of the progress the caller read; zero for
// none). The probe's own result, named lab.ProbeResult, follows the checks'
// results: pass, fail when the run exits non-zero, times out or is skipped,
// or exits 0 or times out in the broken world (the learner's work), error
// when a setup or a restore fails or the lock stays taken (the lab's). cat words
// the probe's result; nil means English. now is time.Now outside tests.
func RunStep(ctx context.Context, c Checker, p Prober, step *lab.Step, w checks.Windows, cat *msg.Catalog, now func() time.Time) ([]checks.Result, error) {
	round := checks.Round{Checks: step.Checks, Windows: w, Lang: catalogLang(cat)}
	pr := step.Probe
	if pr == nil {
		return runRound(ctx, c, round)
	}
	if cat == nil {
		cat = msg.New(msg.English)
	}
	if now == nil {
		now = time.Now
	}
	run := strings.TrimSpace(pr.Run)
	res := checks.Result{Name: lab.ProbeResult, Description: cat.Render(msg.T(msg.ProbeDescription, run))}
	if p == nil {
		rs, err := runRound(ctx, c, round)
		if err != nil {
			return nil, err
		}
		res.Status, res.Message = checks.Error, cat.Render(msg.T(msg.ProbeUnavailable, run))
		return append(rs, res), nil
	}
	if len(pr.Needs) > 0 {
		rs, err := runRound(ctx, c, round)
		if err != nil {
			return nil, err
		}
		if missing := notPassed(rs, pr.Needs); len(missing) > 0 {
			res.Status, res.Message = checks.Fail, cat.Render(msg.T(msg.ProbeSkipped, run, strings.Join(missing, ", ")))
			return append(rs, res), nil
		}
	}

	if pl, ok := p.(ProbeLocker); ok {
		unlock, err := pl.LockProbe(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.Status, res.Message = checks.Error, cat.Render(msg.T(msg.ProbeBusy, run, err.Error()))
			return append(notRun(step.Checks, cat.Render(msg.T(msg.ProbeNoSetup))), res), nil
		}
		defer unlock()
	}
	restoreWith := func(script string, end bool) string {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreTimeout)
		defer cancel()
		if pe, ok := p.(ProbeEnder); ok && end {
			// What setup left is forgotten even when restore
			// fails; a failure to forget it leaves notes that the
			// next setup overwrites.
			defer pe.EndProbe(rctx)
		}
		if strings.TrimSpace(script) == "" {
			return ""
		}
		return adminScript(rctx, p, script)
	}
	restore := func() string { return restoreWith(pr.Restore, true) }

	// The broken worlds first, each in turn: only their runs' exit
	// statuses count, and the checks judge the run that follows.
	brokenOK := true
	var broken []string
	for i := range pr.Broken {
		b := &pr.Broken[i]
		ok, said, problem := runBroken(ctx, p, pr, b, cat, func() string { return restoreWith(b.Restore, false) })
		if ctx.Err() != nil {
			restoreWith("", true)
			return nil, ctx.Err()
		}
		if problem != "" {
			restoreWith("", true)
			res.Status, res.Message = checks.Error, problem
			return append(notRun(step.Checks, cat.Render(msg.T(msg.ProbeNoSetup))), res), nil
		}
		brokenOK = brokenOK && ok
		broken = append(broken, said)
	}

	start := now()
	if strings.TrimSpace(pr.Setup) != "" {
		if problem := adminScript(ctx, p, pr.Setup); problem != "" {
			res.Status, res.Message = checks.Error, cat.Render(msg.T(msg.ProbeSetupFailed, run, problem))
			if again := restore(); again != "" {
				res.Message += "\n" + cat.Render(msg.T(msg.ProbeRestoreFailed, run, again))
			}
			return append(notRun(step.Checks, cat.Render(msg.T(msg.ProbeNoSetup))), res), nil
		}
	}

	out := &tailBuffer{max: probeKeepBytes}
	rctx, cancel := context.WithTimeout(ctx, pr.Timeout.Duration)
	code, err := p.RunScript(rctx, pr.Run, out, out)
	timedOut := errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	res.Duration = now().Sub(start)
	took := res.Duration.Round(time.Millisecond).String()
	switch {
	case timedOut:
		res.Status, res.Message = checks.Fail, cat.Render(msg.T(msg.ProbeTimedOut, run, pr.Timeout.Duration))
	case ctx.Err() != nil:
		restore()
		return nil, ctx.Err()
	case err != nil:
		res.Status, res.Message = checks.Error, cat.Render(msg.T(msg.ProbeNotStarted, run, err.Error()))
	case code != 0:
		res.Status, res.Message = checks.Fail, cat.Render(msg.T(msg.ProbeExited, run, code, took))
	default:
		res.Status, res.Message = checks.Pass, cat.Render(msg.T(msg.ProbeRan, run, took))
	}
	if tail := lastOutput(out.String()); tail != "" {
		res.Message += "\n" + cat.Render(msg.T(msg.ProbeOutput, tail))
	}
	if len(broken) > 0 {
		if res.Status == checks.Pass && !brokenOK {
			res.Status = checks.Fail
		}
		res.Message = strings.Join(broken, "\n") + "\n" + res.Message
	}

	round.ProbeStart = start
	rs, err := runRound(ctx, c, round)
	if problem := restore(); problem != "" && err == nil {
		res.Status = checks.Error
		res.Message = cat.Render(msg.T(msg.ProbeRestoreFailed, run, problem)) + "\n" + res.Message
	}
	if err != nil {
		return nil, err
	}
	return append(rs, res), nil
}

// runBroken runs the probe's broken world b: its setup, the run, and its
// restore (restore, always). It returns whether the run exited non-zero as
// it must and what the probe's result says of it, or a problem of the
// lab's (a setup or restore that failed, a run that could not start) that
// makes the probe's result an error.
func runBroken(ctx context.Context, p Prober, pr *lab.Probe, b *lab.BrokenWorld, cat *msg.Catalog, restore func() string) (ok bool, said, problem string) {
	run := strings.TrimSpace(pr.Run)
	what := strings.TrimSpace(b.Description)
	if problem := adminScript(ctx, p, b.Setup); problem != "" {
		problem = cat.Render(msg.T(msg.ProbeSetupFailed, run, problem))
		if again := restore(); again != "" {
			problem += "\n" + cat.Render(msg.T(msg.ProbeRestoreFailed, run, again))
		}
		return false, "", problem
	}
	out := &tailBuffer{max: probeKeepBytes}
	rctx, cancel := context.WithTimeout(ctx, pr.Timeout.Duration)
	code, err := p.RunScript(rctx, pr.Run, out, out)
	timedOut := errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
	cancel()
	// A negated run ("! CMD") must exit non-zero here too, so CMD must
	// exit 0: the messages speak of CMD.
	cmd, negated := pr.Negated()
	switch {
	case timedOut && negated:
		said = cat.Render(msg.T(msg.ProbeSoundTimedOut, cmd, pr.Timeout.Duration, what))
	case timedOut:
		said = cat.Render(msg.T(msg.ProbeBrokenTimedOut, run, pr.Timeout.Duration, what))
	case ctx.Err() != nil:
	case err != nil:
		problem = cat.Render(msg.T(msg.ProbeNotStarted, run, err.Error()))
	case code == 0 && negated:
		said = cat.Render(msg.T(msg.ProbeSoundFailed, cmd, what))
	case code == 0:
		said = cat.Render(msg.T(msg.ProbeBrokenPassed, run, what))
	case negated:
		ok, said = true, cat.Render(msg.T(msg.ProbeSoundPassed, cmd, what))
	default:
		ok, said = true, cat.Render(msg.T(msg.ProbeBrokenFailed, run, what, code))
	}
	if tail := lastOutput(out.String()); tail != "" && said != "" && !ok {
		said += "\n" + cat.Render(msg.T(msg.ProbeOutput, tail))
	}
	if again := restore(); again != "" {
		// The world may still be broken: what follows would judge it.
		return false, "", cat.Render(msg.T(msg.ProbeRestoreFailed, run, again))
	}
	return ok, said, problem
}

// adminScript runs script with the probe's identity and says what went
// wrong, or "" when it exited 0.
func adminScript(ctx context.Context, p Prober, script string) string {
	var out bytes.Buffer
	code, err := p.RunAdminScript(ctx, script, &out)
	switch {
	case err != nil:
		return err.Error()
	case code != 0:
		s := fmt.Sprintf("exit status %d", code)
		if tail := lastOutput(out.String()); tail != "" {
			s += ": " + tail
		}
		return s
	}
	return ""
}

// notPassed lists the names among want whose results did not pass.
func notPassed(rs []checks.Result, want []string) []string {
	var out []string
	for _, name := range want {
		for _, r := range rs {
			if r.Name == name && r.Status != checks.Pass {
				out = append(out, name)
			}
		}
	}
	return out
}

// notRun reports every check of cs as not run, with message m.
func notRun(cs []lab.Check, m string) []checks.Result {
	rs := make([]checks.Result, len(cs))
	for i, c := range cs {
		rs[i] = checks.Result{Name: c.Name, Description: c.Description, Status: checks.Error, Message: m,
			Points: max(c.Points, 1), Optional: c.Optional}
	}
	return rs
}

// lastOutput is the end of a probe's output as a result shows it: its last
// lines, each cut to a bounded length, with everything a terminal would
// act on escaped.
func lastOutput(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > probeLines {
		lines = lines[len(lines)-probeLines:]
	}
	for i, l := range lines {
		if len(l) > probeLineBytes {
			l = strings.ToValidUTF8(l[:probeLineBytes], "") + "…"
		}
		lines[i] = textsafe.EscapeLine(l)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// tailBuffer keeps the last max bytes written to it; stdout and stderr
// may write at once.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.b), "")
}
