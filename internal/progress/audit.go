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
	cur, _ := p.CurrentStep(l)
	for i := range cs {
		if cs[i].Audit == nil {
			continue
		}
		step := ""
		for _, s := range l.Steps {
			s.EveryCheck(func(c *lab.Check) {
				if c.Name != cs[i].Name || !reflect.DeepEqual(*c, cs[i]) {
					return
				}
				if step == "" || (cur != nil && s.ID == cur.ID) {
					step = s.ID
				}
			})
		}
		if step != "" {
			out[i] = p.StepStart(step)
			set = set || !out[i].IsZero()
		}
	}
	if !set {
		return nil
	}
	return out
}
