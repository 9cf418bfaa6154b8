package provision

import (
	"reflect"
	"time"

	"github.com/labctl/labctl/internal/progress"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// auditRequest is what a check round needs for audit checks: where the
// grader reads the audit log, and the start of each check's window.
func (e *Env) auditRequest(cs []lab.Check) (dir string, since []time.Time) {
	if e.settings.AuditDir != "" {
		dir = sandbox.AuditMount
	}
	state, err := stateDir(e.Lab.Metadata.Name)
	if err != nil {
		return dir, nil
	}
	p, err := progress.NewStore(state).Load(e.Lab.Metadata.Name)
	if err != nil {
		// Unreadable progress judges the whole log, as before any step.
		return dir, nil
	}
	return dir, auditWindows(e.Lab, p, cs)
}

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
