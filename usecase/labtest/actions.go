package labtest

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
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/reset"
)

// tailSize is how much of a failing script's output its failure keeps.
const tailSize = 1500

// script runs a script in the sandbox as the learner would; a script that
// cannot run or exits non-zero is a failure of the phase.
func (r *runner) script(ctx context.Context, p *Phase, s *lab.Step, name, script string) bool {
	if strings.TrimSpace(script) == "" {
		return true
	}
	var buf bytes.Buffer
	w := io.Writer(&buf)
	if r.o.ScriptOutput != nil {
		w = io.MultiWriter(&buf, r.o.ScriptOutput)
	}
	code, err := r.env.RunScript(ctx, script, w, w)
	switch {
	case err != nil:
		p.fail(s.ID, name, "", "could not run the script: "+err.Error())
		r.stopped = true
		return false
	case code != 0:
		p.fail(s.ID, name, "", fmt.Sprintf("the script exited with status %d%s", code, tail(buf.String())))
		return false
	}
	return true
}

// stepSetup runs the setup of step s, which the previous step's solve
// reached, as labctl check runs it (grading.RunStepSetup); a setup that
// cannot run or exits non-zero is a failure of the phase.
func (r *runner) stepSetup(ctx context.Context, p *Phase, s *lab.Step) bool {
	err := grading.RunStepSetup(ctx, r.env, s, r.o.ScriptOutput)
	var se *grading.ScriptError
	switch {
	case err == nil:
		return true
	case !errors.As(err, &se):
		p.fail(s.ID, ScriptSetup, "", err.Error())
	case se.Err != nil:
		p.fail(s.ID, ScriptSetup, "", "could not run the script: "+se.Err.Error())
	default:
		p.fail(s.ID, ScriptSetup, "", fmt.Sprintf("the script exited with status %d%s", se.Code, tail(se.Output)))
	}
	return false
}

// tail formats the end of a script's output for a failure message.
func tail(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	if len(out) > tailSize {
		out = "…" + strings.ToValidUTF8(out[len(out)-tailSize:], "")
	}
	return ":\n" + out
}

// checks runs the step's checks in one round. A round that cannot run, or
// answers for other checks than asked, stops the test: nothing after it
// can be trusted.
func (r *runner) checks(ctx context.Context, p *Phase, s *lab.Step) ([]checks.Result, bool) {
	rs, err := runStep(ctx, r.env, s, grading.Windows(r.o.Lab, r.progress(), s.Checks), r.o.Now)
	if err != nil {
		p.fail(s.ID, p.Script, "", err.Error())
		r.stopped = true
		return nil, false
	}
	p.Checks = rs
	return rs, true
}

// progress is the test's progress as its store holds it now, read once for
// a round: it gives the round's audit checks their windows. Progress that
// cannot be read is nil: audit checks then judge the whole log.
func (r *runner) progress() *progress.Progress {
	p, err := r.o.Store.Load(r.o.Lab.Metadata.Name)
	if err != nil {
		return nil
	}
	return p
}

// runStep runs the step's checks as labctl check does: through its probe
// when it has one (grading.RunStep), with the audit windows since.
func runStep(ctx context.Context, env Environment, s *lab.Step, w checks.Windows, now func() time.Time) ([]checks.Result, error) {
	rs, err := grading.RunStep(ctx, env, prober(env), s, w, nil, now)
	if err != nil {
		return nil, fmt.Errorf("running the checks: %w", err)
	}
	return rs, nil
}

// prober is env's way of running probes, or nil when it has none (a
// step with a probe then reports that its probe could not run).
func prober(env Environment) grading.Prober {
	p, _ := env.(grading.Prober)
	return p
}

// reset runs reset.Run to step to ("" for the lab's start) and measures it.
func (r *runner) reset(ctx context.Context, p *Phase, to string) {
	began := r.o.Now()
	if r.rep.ResetParts == nil {
		r.rep.ResetParts = map[string]time.Duration{}
	}
	env := &timedReset{Environment: r.env, now: r.o.Now, spent: r.rep.ResetParts, kept: &r.rep.SandboxesKept, restored: &r.rep.StepStartsRestored}
	_, err := reset.Run(ctx, env, reset.Options{
		Lab:          r.o.Lab,
		Store:        r.o.Store,
		To:           to,
		ScriptOutput: r.o.ScriptOutput,
		// The test's own sandbox holds nothing worth keeping, and the
		// scripts that ran in it are the author's.
		NoBackup: true,
		InPlace:  true,
		Now:      r.o.Now,
	})
	r.rep.Resets++
	r.rep.ResetTime += r.o.Now().Sub(began)
	if err == nil {
		return
	}
	var se *grading.ScriptError
	if errors.As(err, &se) {
		p.fail(se.Step, se.Kind, "", fmt.Sprintf("replaying it in a reset: the script exited with status %d%s", se.Code, tail(se.Output)))
	} else {
		p.fail(p.Step, "", "", "resetting: "+err.Error())
	}
	r.stopped = true
}

// grade runs every step's checks in one round, as `labctl grade` does;
// every check must pass.
func (r *runner) grade(ctx context.Context) {
	r.phase(Phase{Kind: Grade}, "Grading the whole lab: 100 %", func(p *Phase) {
		// After --mutate, as the mutants' rounds (afterMutants).
		results, err := grading.RunAllIn(ctx, r.env, prober(r.env), r.o.Lab, nil, r.afterMutants)
		if err != nil {
			p.fail("", "", "", "grading: "+err.Error())
			r.stopped = true
			return
		}
		for _, s := range r.o.Lab.Steps {
			rs := results[s.ID]
			p.Checks = append(p.Checks, rs...)
			sum := checks.Summarize(rs)
			r.rep.Score += sum.Score
			r.rep.MaxScore += sum.MaxScore
			p.Failures = append(p.Failures, notPassing(s.ID, "", rs)...)
		}
		r.rep.Graded = true
	})
}

// finalReset resets the whole lab and checks that the first step is not
// complete any more.
func (r *runner) finalReset(ctx context.Context) {
	s := &r.o.Lab.Steps[0]
	r.phase(Phase{Step: s.ID, Kind: FinalReset}, "Resetting the lab: step 1 fails again", func(p *Phase) {
		r.reset(ctx, p, "")
		if r.stopped {
			return
		}
		rs, ok := r.checks(ctx, p, s)
		if !ok {
			return
		}
		p.Failures = append(p.Failures, errored(s.ID, "", rs)...)
		if !s.PassesInitially && checks.StepPassed(rs) {
			p.Failures = append(p.Failures, Failure{Step: s.ID,
				Message: "every check of the first step still passes after a reset, so the reset does not take the learner's work away " +
					"(is some of it kept outside /root and the lab's namespaces?)"})
		}
	})
}

// timedReset measures where a reset spends its time, by the environment
// method it calls; reset calls some of them at once.
type timedReset struct {
	Environment
	now   func() time.Time
	mu    sync.Mutex
	spent map[string]time.Duration
	// kept counts the resets that restored the sandbox in place, and
	// restored those that went back to the step's checkpoint.
	kept, restored *int
}

func (t *timedReset) time(part string, f func() error) error {
	began := t.now()
	err := f()
	t.mu.Lock()
	t.spent[part] += t.now().Sub(began)
	t.mu.Unlock()
	return err
}

func (t *timedReset) RecreateSandbox(ctx context.Context) error {
	return t.time("sandbox", func() error { return t.Environment.RecreateSandbox(ctx) })
}

// NotePristine keeps the recreated sandbox for RestoreSandbox when the
// environment can restore it; its time counts as the sandbox's.
func (t *timedReset) NotePristine(ctx context.Context) {
	if r, can := t.Environment.(reset.Restorer); can {
		_ = t.time("sandbox", func() error { r.NotePristine(ctx); return nil })
	}
}

// RestoreSandbox restores the sandbox in place when the environment can;
// its time counts as the sandbox's.
func (t *timedReset) RestoreSandbox(ctx context.Context) (ok bool) {
	r, can := t.Environment.(reset.Restorer)
	if !can {
		return false
	}
	_ = t.time("sandbox", func() error { ok = r.RestoreSandbox(ctx); return nil })
	if ok {
		t.mu.Lock()
		*t.kept++
		t.mu.Unlock()
	}
	return ok
}

// Checkpoint keeps the step's start when the environment can; its time
// counts as the checkpoint's.
func (t *timedReset) Checkpoint(ctx context.Context, step string) {
	if c, can := t.Environment.(reset.Checkpointer); can {
		_ = t.time("checkpoint", func() error { c.Checkpoint(ctx, step); return nil })
	}
}

// RestoreCheckpoint goes back to the step's start when the environment
// can; its time, whether it did or not, counts as the checkpoint's.
func (t *timedReset) RestoreCheckpoint(ctx context.Context, step string) (ok bool) {
	c, can := t.Environment.(reset.Checkpointer)
	if !can {
		return false
	}
	_ = t.time("checkpoint", func() error { ok = c.RestoreCheckpoint(ctx, step); return nil })
	if ok {
		t.mu.Lock()
		*t.restored++
		t.mu.Unlock()
	}
	return ok
}

func (t *timedReset) ResetNamespaces(ctx context.Context) error {
	return t.time("namespaces", func() error { return t.Environment.ResetNamespaces(ctx) })
}

func (t *timedReset) RecreateCluster(ctx context.Context) error {
	return t.time("cluster", func() error { return t.Environment.RecreateCluster(ctx) })
}

func (t *timedReset) RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (code int, err error) {
	err = t.time("scripts", func() error {
		code, err = t.Environment.RunScript(ctx, script, stdout, stderr)
		return err
	})
	return code, err
}

func (t *timedReset) RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (failed, code int, err error) {
	err = t.time("scripts", func() error {
		failed, code, err = t.Environment.RunScripts(ctx, scripts, stdout, stderr, started)
		return err
	})
	return failed, code, err
}
