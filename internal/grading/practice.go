package grading

import (
	"slices"

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
