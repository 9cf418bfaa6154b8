package grading

import (
	"context"
	"fmt"
	"slices"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

// judgesProbe says whether c judges what its step's probe did.
func judgesProbe(c *lab.Check) bool {
	return (c.File != nil && c.File.WrittenDuringProbe) || (c.Audit != nil && c.Audit.DuringProbe)
}

// WithoutProbes returns a copy of l whose steps run no probe and hold none
// of the checks that judge one: what `labctl class status` checks, which
// must not change a learner's cluster or run their scripts.
func WithoutProbes(l *lab.Lab) *lab.Lab {
	out := *l
	out.Steps = slices.Clone(l.Steps)
	for i := range out.Steps {
		s := &out.Steps[i]
		if s.Probe == nil {
			continue
		}
		s.Probe = nil
		s.Checks = slices.DeleteFunc(slices.Clone(s.Checks), func(c lab.Check) bool { return judgesProbe(&c) })
	}
	return &out
}

// InstructorOnly says whether only the instructor's grader can judge c: an
// audit check reads the API server's record, which the learner's sandbox
// does not hold, and a check of a probe needs the probe, which runs with the
// control plane's admin identity.
func InstructorOnly(c *lab.Check) bool { return c.Audit != nil || judgesProbe(c) }

// Practice returns a copy of l as an invited learner's own labctl checks it
// in their sandbox: no probes, and every InstructorOnly check optional, so
// that a step passes on what the sandbox can judge. The instructor's grade,
// with every check, is the one that counts.
func Practice(l *lab.Lab) *lab.Lab {
	out := *l
	out.Steps = slices.Clone(l.Steps)
	for i := range out.Steps {
		s := &out.Steps[i]
		s.Probe = nil
		s.Checks = slices.Clone(s.Checks)
		for j := range s.Checks {
			if InstructorOnly(&s.Checks[j]) {
				s.Checks[j].Optional = true
			}
		}
	}
	return &out
}

// PracticeChecker is the checker of an invited learner's own labctl: their
// live lab reached with an invite, which runs checks in their sandbox with
// their own credentials. It runs in one round the checks their sandbox can
// judge, and gives each InstructorOnly check an error result that says the
// instructor's grade judges it, never running it.
type PracticeChecker struct{ Checker }

// instructorChecked is the message of a check only the instructor's grader
// judges (InstructorOnly).
const instructorChecked = "checked by your instructor's labctl (labctl class grade): your sandbox does not hold what it reads"

// RunChecks runs the checks of r that are not InstructorOnly through the
// practice lab's checker, with what r knows of each, and returns a result
// for every check of r, in r's order.
func (p PracticeChecker) RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	sub := checks.Round{ProbeStart: r.ProbeStart, Lang: r.Lang}
	for i := range r.Checks {
		if InstructorOnly(&r.Checks[i]) {
			continue
		}
		sub.Checks = append(sub.Checks, r.Checks[i])
		sub.Windows.Keep(r.Windows, i)
	}
	var got []checks.Result
	if len(sub.Checks) > 0 {
		var err error
		if got, err = p.Checker.RunChecks(ctx, sub); err != nil {
			return nil, err
		}
		// The merge puts each answer in its check's place; checks.RunRound
		// holds the merged round to the request, names and statuses.
		if len(got) != len(sub.Checks) {
			return nil, fmt.Errorf("the checker answered %d results for %d checks", len(got), len(sub.Checks))
		}
	}
	results := make([]checks.Result, 0, len(r.Checks))
	for i := range r.Checks {
		c := &r.Checks[i]
		if InstructorOnly(c) {
			results = append(results, checks.ErrorResult(c, instructorChecked))
			continue
		}
		results = append(results, got[0])
		got = got[1:]
	}
	return results, nil
}
