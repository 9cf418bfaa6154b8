package checks

// Verdict is what a set of results says about the learner's work: one
// step's round, or every step's in a grade.
type Verdict int

const (
	// Passed: every required check passed.
	Passed Verdict = iota
	// Failed: a required check failed; the learner has work to do.
	Failed
	// Errored: a required check could not run; that is the environment's
	// fault, not the learner's.
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

// Summary counts the outcome of a set of results.
type Summary struct {
	// Failed and Errored count required checks that failed or could not run.
	Failed, Errored int
	// Required counts required checks.
	Required int
	// Score and MaxScore sum the points of passed checks and of every check.
	Score, MaxScore int
}

// Summarize counts results. Optional checks add to the score when they pass
// and to the maximum always, but never make a set of results fail.
func Summarize(results []Result) Summary {
	var s Summary
	for _, r := range results {
		s.MaxScore += r.Points
		if r.Status == Pass {
			s.Score += r.Points
		}
		if r.Optional {
			continue
		}
		s.Required++
		switch r.Status {
		case Pass:
		case Fail:
			s.Failed++
		default:
			s.Errored++
		}
	}
	return s
}

// Verdict is the one rule that says whether a step passed: Passed when
// every required check passed (optional ones are ignored, and so a step
// without results passes), else Errored when a required check could not
// run, else Failed. An error outweighs a failure, since results next to a
// check that could not run may be wrong too.
func (s Summary) Verdict() Verdict {
	switch {
	case s.Errored > 0:
		return Errored
	case s.Failed > 0:
		return Failed
	}
	return Passed
}

// Passed reports whether every required check passed.
func (s Summary) Passed() bool { return s.Verdict() == Passed }

// StepPassed reports whether a step whose round gave results passed: every
// required check passed (Summary.Verdict).
func StepPassed(results []Result) bool { return Summarize(results).Passed() }
