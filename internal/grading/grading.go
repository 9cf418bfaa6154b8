// Package grading runs a lab's checks against the learner's environment
// and decides what they mean: `labctl check` (one step, recorded in the
// learner's progress, advancing it when the step passes) and `labctl grade`
// (every step in one checker round, as a report, recorded in the grade
// history). The checks themselves run elsewhere, behind Checker; a round
// is checks.RunRound and its verdict checks.Summary.Verdict. RunStepSetup
// is the one way a step's setup runs once the learner reaches the step,
// here, in the shell, in labctl test and in labctl up.
package grading

import (
	"context"
	"errors"
	"fmt"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// Checker runs one round of checks in the learner's environment and
// returns one result per check, in order. provision's *Live is the real one.
type Checker interface {
	RunChecks(ctx context.Context, cs []lab.Check) ([]checks.Result, error)
}

// Verdict is what a round of checks says about the learner's work
// (checks.Verdict: the one rule, Summary.Verdict, decides it).
type Verdict = checks.Verdict

// The verdicts.
const (
	Passed  = checks.Passed
	Failed  = checks.Failed
	Errored = checks.Errored
)

// EnvironmentError is a checker round that could not run at all.
type EnvironmentError struct {
	Err error
	// Catalog, when set, words the message in the learner's language.
	Catalog *msg.Catalog
}

func (e *EnvironmentError) Error() string {
	c := e.Catalog
	if c == nil {
		c = msg.New(msg.English)
	}
	return fmt.Sprintf(c.RoundFailed, e.Err)
}

func (e *EnvironmentError) Unwrap() error { return e.Err }

// runRound runs cs in one checker round (checks.RunRound: its deadline, its
// answer verified).
func runRound(ctx context.Context, c Checker, cs []lab.Check) ([]checks.Result, error) {
	rs, err := checks.RunRound(ctx, cs, c.RunChecks)
	if err != nil {
		return nil, &EnvironmentError{Err: err}
	}
	return rs, nil
}

// RunAll runs the checks of every step of l and splits the results per
// step id: the steps without a probe in ONE checker round, then each step
// with a probe through it (RunStep), in lab order. p and cat are RunStep's.
func RunAll(ctx context.Context, c Checker, p Prober, l *lab.Lab, cat *msg.Catalog) (map[string][]checks.Result, error) {
	var all []lab.Check
	for _, s := range l.Steps {
		if s.Probe == nil {
			all = append(all, s.Checks...)
		}
	}
	rs, err := runRound(ctx, c, all)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]checks.Result, len(l.Steps))
	for _, s := range l.Steps {
		if s.Probe == nil {
			out[s.ID] = rs[:len(s.Checks):len(s.Checks)]
			rs = rs[len(s.Checks):]
		}
	}
	for i := range l.Steps {
		s := &l.Steps[i]
		if s.Probe == nil {
			continue
		}
		if out[s.ID], err = RunStep(ctx, c, p, s, cat, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// IsEnvironmentError reports whether err is a round that could not run.
func IsEnvironmentError(err error) bool {
	var e *EnvironmentError
	return errors.As(err, &e)
}
