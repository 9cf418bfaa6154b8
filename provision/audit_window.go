package provision

import (
	"reflect"
	"time"

	"github.com/labctl/labctl/internal/progress"
	"github.com/labctl/labctl/lab"
)

// auditWindows gives each audit check of cs the start of its step's
// window (see progress.StepStart); other checks get the zero time. A check
// is found in the lab by its content; one that several steps share takes
// the current step's window when that is one of them, else the first's.
func auditWindows(l *lab.Lab, p *progress.Progress, cs []lab.Check) []time.Time {
	out := make([]time.Time, len(cs))
	set := false
	cur, _ := p.CurrentStep(l)
	for i := range cs {
		if cs[i].Audit == nil {
			continue
		}
		step := ""
		for _, s := range l.Steps {
			for _, c := range s.Checks {
				if c.Name != cs[i].Name || !reflect.DeepEqual(c, cs[i]) {
					continue
				}
				if step == "" || (cur != nil && s.ID == cur.ID) {
					step = s.ID
				}
			}
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
