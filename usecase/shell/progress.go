package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/lab"
)

// ScriptRunner runs a bash script in the sandbox as the learner would;
// provision's *Live is the real one.
type ScriptRunner interface {
	RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error)
}

// StoreProgress is Progress kept in the learner's progress file, recorded
// as `labctl check` records it. Every call reads the file afresh, so a
// `labctl check` in another terminal is seen, and every change is written
// back at once under the store's lock.
type StoreProgress struct {
	Store *progress.Store
	Lab   *lab.Lab
	// Digest identifies the lab definition; progress recorded against an
	// earlier version is reconciled with it by step id.
	Digest string
	// Scripts, when set, runs the setup script of a step the learner
	// advances to.
	Scripts ScriptRunner
	// Now is time.Now outside tests.
	Now func() time.Time
	// Situation is whose lab it is, which words the retry of a setup
	// that fails (grading.ScriptError).
	Situation grading.Situation
	// Checker, when set, notes where a step's repositories are as it
	// begins (grading.NoteStart), for checks that count commits from
	// there.
	Checker grading.Checker
}

// CurrentProgress is a Progress that asks the function for the progress
// to use at every call: the progress of a lab that may be reloaded while the
// session runs.
type CurrentProgress func() Progress

// State reads where the learner stands, from the current progress.
func (c CurrentProgress) State() (State, error) { return c().State() }

// Record records a round in the current progress.
func (c CurrentProgress) Record(ctx context.Context, step string, results []checks.Result) (State, bool, error) {
	return c().Record(ctx, step, results)
}

// State reads where the learner stands. A current step begun before
// labctl noted where its repositories were is noted now
// (grading.EnsureStart), so that its commits count from here.
func (p *StoreProgress) State() (State, error) {
	pr, err := p.Store.Load(p.Lab.Metadata.Name)
	if err != nil {
		return State{}, err
	}
	pr.Reconcile(p.Lab, p.Digest)
	if cur, _ := pr.CurrentStep(p.Lab); cur != nil && p.Checker != nil {
		ctx, cancel := context.WithTimeout(context.Background(), checks.RoundTimeout(nil))
		p.mark(ctx, cur)
		noted, err := grading.EnsureStart(ctx, p.Checker, p.Store, p.Lab, pr, cur)
		cancel()
		if noted && err == nil {
			if pr, err = p.Store.Load(p.Lab.Metadata.Name); err != nil {
				return State{}, err
			}
			pr.Reconcile(p.Lab, p.Digest)
		}
	}
	return p.state(pr), nil
}

// errNotCurrent stops the update of a passing round whose step is no
// longer current: nothing is written.
var errNotCurrent = errors.New("the step is no longer the current one")

// Record records a round of step's checks in one update of the file, which
// also gives the state afterwards; when the learner moves on to a step with
// a setup script, the script runs (grading.RunStepSetup: a failure is a
// *grading.ScriptError, the round still recorded).
func (p *StoreProgress) Record(ctx context.Context, step string, results []checks.Result) (State, bool, error) {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	passed := checks.StepPassed(results)
	var st State
	var out progress.Outcome
	err := p.Store.Update(ctx, p.Lab.Metadata.Name, func(pr *progress.Progress) (err error) {
		pr.Reconcile(p.Lab, p.Digest)
		if cur, _ := pr.CurrentStep(p.Lab); passed && (cur == nil || cur.ID != step) {
			st = p.state(pr)
			return errNotCurrent
		}
		out, err = grading.Record(pr, p.Lab, step, results, now())
		st = p.state(pr)
		return err
	})
	if errors.Is(err, errNotCurrent) {
		return st, false, nil
	}
	if err != nil {
		return State{}, false, fmt.Errorf("recording progress: %w", err)
	}
	if out.Advanced && out.Next != nil {
		p.mark(ctx, out.Next)
		if err := grading.RunStepSetup(ctx, p.Scripts, out.Next, nil); err != nil {
			return st, true, grading.Retrying(err, grading.Retry{Situation: p.Situation})
		}
		if p.Checker != nil {
			// If this fails, the step's next round notes it (State).
			_ = grading.NoteStart(ctx, p.Checker, p.Store, p.Lab, out.Next)
			if after, err := p.State(); err == nil {
				st = after
			}
		}
	}
	return st, out.Advanced, nil
}

// mark marks that step began where the checker needs it
// (checks.StepMarker: an invite, whose steps the instructor's labctl does
// not see begin), before the step's setup runs, as its start is recorded
// before it. A mark that fails is placed again by the next State: the
// instructor's grade judges the step from its earliest mark, or from the
// learner's start without one.
func (p *StoreProgress) mark(ctx context.Context, step *lab.Step) {
	if m, ok := p.Checker.(checks.StepMarker); ok {
		_ = m.MarkStep(ctx, step.ID)
	}
}

func (p *StoreProgress) state(pr *progress.Progress) State {
	st := State{Passed: map[string]bool{}}
	st.Current, _ = pr.CurrentStep(p.Lab)
	if st.Current != nil {
		st.Step = grading.Windows(p.Lab, pr, st.Current.Checks)
		st.Windows = func(cs []lab.Check) checks.Windows { return grading.Windows(p.Lab, pr, cs) }
	}
	for _, s := range p.Lab.Steps {
		if pr.IsPassed(s.ID) {
			st.Passed[s.ID] = true
		}
	}
	return st
}
