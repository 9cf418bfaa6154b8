// Package grading runs a lab's checks against the learner's environment
// and decides what they mean: `labctl check` (one step, recorded in the
// learner's progress, advancing it when the step passes) and `labctl grade`
// (every step in one checker round, as a report, recorded in the grade
// history). The checks themselves run elsewhere, behind Checker.
package grading

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/msg"
	"github.com/labctl/labctl/report"
)

// Checker runs one round of checks in the learner's environment and
// returns one result per check, in order. provision's *Env is the real one.
type Checker interface {
	RunChecks(ctx context.Context, cs []lab.Check) ([]checks.Result, error)
}

// Verdict is what a round of checks says about the learner's work.
type Verdict int

const (
	// Passed: every required check passed.
	Passed Verdict = iota
	// Failed: a required check failed; the learner has work to do.
	Failed
	// Errored: a required check could not run, or the round itself failed;
	// that is the environment's fault, not the learner's.
	Errored
)

func (v Verdict) String() string {
	switch v {
	case Passed:
		return "passed"
	case Failed:
		return "failed"
	default:
		return "errored"
	}
}

// VerdictOf judges a summary: an error outweighs a failure, since results
// next to a check that could not run may be wrong too.
func VerdictOf(s report.Summary) Verdict {
	switch {
	case s.Errored > 0:
		return Errored
	case s.Failed > 0:
		return Failed
	}
	return Passed
}

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

// runRound runs cs in one checker round and verifies the checker answered
// each check.
func runRound(ctx context.Context, c Checker, cs []lab.Check) ([]checks.Result, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, roundTimeout(cs))
	defer cancel()
	rs, err := c.RunChecks(ctx, cs)
	if err != nil {
		return nil, &EnvironmentError{Err: err}
	}
	if len(rs) != len(cs) {
		return nil, &EnvironmentError{Err: fmt.Errorf("the checker answered %d results for %d checks", len(rs), len(cs))}
	}
	for i := range rs {
		if rs[i].Name != cs[i].Name {
			return nil, &EnvironmentError{Err: fmt.Errorf("the checker answered result %q where check %q was expected", rs[i].Name, cs[i].Name)}
		}
	}
	return rs, nil
}

// roundTimeout bounds one checker round: every check's own timeout (10s
// when unset) as if they ran one after another, plus a minute for copying
// the checker in and starting it, and never more than ten minutes.
func roundTimeout(cs []lab.Check) time.Duration {
	d := time.Minute
	for _, c := range cs {
		if c.Timeout.Duration > 0 {
			d += c.Timeout.Duration
		} else {
			d += 10 * time.Second
		}
	}
	return min(d, 10*time.Minute)
}

// RunAll runs the checks of every step of l in ONE checker round and splits
// the results per step id.
func RunAll(ctx context.Context, c Checker, l *lab.Lab) (map[string][]checks.Result, error) {
	var all []lab.Check
	for _, s := range l.Steps {
		all = append(all, s.Checks...)
	}
	rs, err := runRound(ctx, c, all)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]checks.Result, len(l.Steps))
	for _, s := range l.Steps {
		out[s.ID] = rs[:len(s.Checks):len(s.Checks)]
		rs = rs[len(s.Checks):]
	}
	return out, nil
}

// IsEnvironmentError reports whether err is a round that could not run.
func IsEnvironmentError(err error) bool {
	var e *EnvironmentError
	return errors.As(err, &e)
}
