package progress

import (
	"reflect"
	"time"

	"github.com/labctl/labctl/lab"
)

// AuditWindows gives each audit check of cs the start of its step's
// window (StepStart), by position in cs; other checks get the zero time. A
// check (a step's, or its mistakes' evidence) is found in l by its content; one that several steps share takes
// the current step's window when that is one of them, else the first's.
// It is nil when no check has a window, and for nil progress (none read):
// audit checks then judge the whole log.
func (p *Progress) AuditWindows(l *lab.Lab, cs []lab.Check) []time.Time {
	if p == nil {
		return nil
	}
	out := make([]time.Time, len(cs))
	set := false
	for i := range cs {
		if cs[i].Audit == nil {
			continue
		}
		if step := p.stepOf(l, &cs[i]); step != "" {
			out[i] = p.StepStart(step)
			set = set || !out[i].IsZero()
		}
	}
	if !set {
		return nil
	}
	return out
}

// MarkSteps gives each audit check of cs whose step has no recorded start
// (Started: the progress did not see it become current, as for a learner
// who advances through an invite on their own machine) that step, by
// position in cs: the checker then begins its window at the step's
// earliest mark in the log at or after its AuditWindows time
// (checks.MarkStep). Other checks get "". It is nil when no check needs a
// mark, and for nil progress.
func (p *Progress) MarkSteps(l *lab.Lab, cs []lab.Check) []string {
	if p == nil {
		return nil
	}
	var out []string
	for i := range cs {
		if cs[i].Audit == nil {
			continue
		}
		step := p.stepOf(l, &cs[i])
		if _, seen := p.Started[step]; step == "" || seen {
			continue
		}
		if out == nil {
			out = make([]string, len(cs))
		}
		out[i] = step
	}
	return out
}

// stepOf is the step of l that c belongs to (one of its checks, or of its
// mistakes' evidence), found by content: of several, the current step
// when it is one of them, else the first; "" for none.
func (p *Progress) stepOf(l *lab.Lab, c *lab.Check) string {
	cur, _ := p.CurrentStep(l)
	step := ""
	for _, s := range l.Steps {
		s.EveryCheck(func(o *lab.Check) {
			if o.Name != c.Name || !reflect.DeepEqual(*o, *c) {
				return
			}
			if step == "" || (cur != nil && s.ID == cur.ID) {
				step = s.ID
			}
		})
	}
	return step
}

// StepHeads gives each git check of cs that counts commits since its step
// began (since: step) the commit its repository was at then (SetHead), by
// position in cs; "" where the progress does not say (the step was not
// seen to begin), and for other checks. It is nil when cs has no such
// check, and for nil progress.
func (p *Progress) StepHeads(l *lab.Lab, cs []lab.Check) []string {
	if p == nil {
		return nil
	}
	var out []string
	for i := range cs {
		g := cs[i].Git
		if g == nil || g.Since != lab.SinceStep {
			continue
		}
		if out == nil {
			out = make([]string, len(cs))
		}
		if step := p.stepOf(l, &cs[i]); step != "" {
			out[i] = p.Heads[step][g.Repo]
		}
	}
	return out
}
