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
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// Checker runs one round of checks in the learner's environment and
// returns one result per check of the round, in order. The round carries
// what the caller knows from its one reading of the learner's progress
// (the audit windows) and the probe's start. provision's *Live is the real
// one.
type Checker interface {
	RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error)
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

// runRound runs r in one checker round (checks.RunRound: its deadline, its
// answer verified).
// catalogLang is the language of cat's words, "" for none: the round's
// messages then speak the runner's.
func catalogLang(cat *msg.Catalog) msg.Lang {
	if cat == nil {
		return ""
	}
	return cat.Lang
}

func runRound(ctx context.Context, c Checker, r checks.Round) ([]checks.Result, error) {
	rs, err := checks.RunRound(ctx, r, c.RunChecks)
	if err != nil {
		return nil, &EnvironmentError{Err: err}
	}
	return rs, nil
}

// RunAll runs the checks of every step of l and splits the results per
// step id: the steps without a probe in ONE checker round, then each step
// with a probe through it (RunStep), in lab order. pr is the learner's
// progress as the caller read it, which gives each round its audit
// windows (nil: none read, audit checks judge the whole log). p and cat are
// RunStep's.
func RunAll(ctx context.Context, c Checker, p Prober, l *lab.Lab, pr *progress.Progress, cat *msg.Catalog) (map[string][]checks.Result, error) {
	return RunAllIn(ctx, c, p, l, cat, func(cs []lab.Check) checks.Windows { return Windows(l, pr, cs) })
}

// RunAllIn is RunAll with the audit windows and step heads of a round of
// checks cs given by windows.
func RunAllIn(ctx context.Context, c Checker, p Prober, l *lab.Lab, cat *msg.Catalog, windows func(cs []lab.Check) checks.Windows) (map[string][]checks.Result, error) {
	var all []lab.Check
	for _, s := range l.Steps {
		if s.Probe == nil {
			all = append(all, s.Checks...)
		}
	}
	rs, err := runRound(ctx, c, checks.Round{Checks: all, Windows: windows(all), Lang: catalogLang(cat)})
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
		if out[s.ID], err = RunStep(ctx, c, p, s, windows(s.Checks), cat, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GradeAll judges l for a grade. A step whose passing round the host kept
// (progress.Kept) is reported with that round's results, and only its
// checks marked final are judged again; every other step is judged now, as
// RunAll does: the steps without a probe in one checker round, each step
// with a probe through RunStep (a kept one only when it has final checks).
// It returns the results per step id, and when each kept step passed.
func GradeAll(ctx context.Context, c Checker, p Prober, l *lab.Lab, pr *progress.Progress, cat *msg.Catalog) (map[string][]checks.Result, map[string]time.Time, error) {
	kept, keptAt := map[string][]checks.Result{}, map[string]time.Time{}
	for i := range l.Steps {
		if rs, at, ok := keptResults(pr, &l.Steps[i]); ok {
			kept[l.Steps[i].ID], keptAt[l.Steps[i].ID] = rs, at
		}
	}
	// judge lists the indexes of s's checks to judge now.
	judge := func(s *lab.Step) []int {
		var idx []int
		for i := range s.Checks {
			if _, ok := kept[s.ID]; !ok || s.Checks[i].Final {
				idx = append(idx, i)
			}
		}
		return idx
	}
	var all []lab.Check
	for i := range l.Steps {
		s := &l.Steps[i]
		if s.Probe == nil {
			for _, j := range judge(s) {
				all = append(all, s.Checks[j])
			}
		}
	}
	var rs []checks.Result
	if len(all) > 0 {
		var err error
		w := Windows(l, pr, all)
		if rs, err = runRound(ctx, c, checks.Round{Checks: all, Windows: w, Lang: catalogLang(cat)}); err != nil {
			return nil, nil, err
		}
	}
	out := make(map[string][]checks.Result, len(l.Steps))
	for i := range l.Steps {
		s := &l.Steps[i]
		idx := judge(s)
		var fresh []checks.Result
		if s.Probe == nil {
			fresh, rs = rs[:len(idx):len(idx)], rs[len(idx):]
		} else if len(idx) > 0 {
			all, err := RunStep(ctx, c, p, s, Windows(l, pr, s.Checks), cat, nil)
			if err != nil {
				return nil, nil, err
			}
			if _, ok := kept[s.ID]; !ok {
				out[s.ID] = all
				continue
			}
			// The probe ran again for the final checks: its result is
			// of now too.
			idx = append(idx, len(s.Checks))
			for _, j := range idx {
				fresh = append(fresh, all[j])
			}
		}
		k, ok := kept[s.ID]
		if !ok {
			out[s.ID] = fresh
			continue
		}
		for n, j := range idx {
			k[j] = fresh[n]
		}
		out[s.ID] = k
	}
	return out, keptAt, nil
}

// keptResults are the results of s kept in pr from the round in which it
// passed, when they are for the checks s has now (a lab changed since
// judges the step again).
func keptResults(pr *progress.Progress, s *lab.Step) ([]checks.Result, time.Time, bool) {
	if pr == nil || !pr.IsPassed(s.ID) {
		return nil, time.Time{}, false
	}
	v, ok := pr.Kept[s.ID]
	want := len(s.Checks)
	if s.Probe != nil {
		want++ // the probe's own result follows the checks'
	}
	if !ok || len(v.Results) != want {
		return nil, time.Time{}, false
	}
	rs := make([]checks.Result, len(v.Results))
	for i, k := range v.Results {
		name := lab.ProbeResult
		if i < len(s.Checks) {
			name = s.Checks[i].Name
		}
		if k.Name != name {
			return nil, time.Time{}, false
		}
		rs[i] = checks.Result{Name: k.Name, Description: k.Description, Status: checks.Status(k.Status), Message: k.Message,
			Points: k.Points, Optional: k.Optional}
	}
	return rs, v.At, true
}

// Keep records rs, a round in which step id passed, in pr: the grade
// reports it (GradeAll). Only the first passing round is kept.
func Keep(pr *progress.Progress, id string, rs []checks.Result, at time.Time) {
	v := progress.KeptVerdict{At: at, Results: make([]progress.KeptResult, len(rs))}
	for i, r := range rs {
		v.Results[i] = progress.KeptResult{Name: r.Name, Description: r.Description, Status: string(r.Status), Message: r.Message,
			Points: r.Points, Optional: r.Optional}
	}
	pr.Keep(id, v)
}

// IsEnvironmentError reports whether err is a round that could not run.
func IsEnvironmentError(err error) bool {
	var e *EnvironmentError
	return errors.As(err, &e)
}
