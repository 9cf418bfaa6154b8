package shell

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/grading"
	"github.com/labctl/labctl/internal/progress"
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
}

// State reads where the learner stands.
func (p *StoreProgress) State() (State, error) {
	pr, err := p.Store.Load(p.Lab.Metadata.Name)
	if err != nil {
		return State{}, err
	}
	pr.Reconcile(p.Lab, p.Digest)
	return p.state(pr), nil
}

// Record records a round of step's checks; when the learner moves on to a
// step with a setup script, the script runs (grading.RunStepSetup: a
// failure is a *grading.ScriptError, the round still recorded).
func (p *StoreProgress) Record(ctx context.Context, step string, results []checks.Result) (State, error) {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	out, err := grading.Record(ctx, p.Store, p.Lab, p.Digest, step, results, now())
	if err != nil {
		return State{}, fmt.Errorf("recording progress: %w", err)
	}
	st, err := p.State()
	if err != nil {
		return State{}, err
	}
	if out.Advanced && out.Next != nil {
		if err := grading.RunStepSetup(ctx, p.Scripts, out.Next, nil); err != nil {
			return st, grading.Retrying(err, grading.Retry{Situation: p.Situation})
		}
	}
	return st, nil
}

func (p *StoreProgress) state(pr *progress.Progress) State {
	st := State{Passed: map[string]bool{}}
	st.Current, _ = pr.CurrentStep(p.Lab)
	for _, s := range p.Lab.Steps {
		if pr.IsPassed(s.ID) {
			st.Passed[s.ID] = true
		}
	}
	return st
}
