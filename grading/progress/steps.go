package progress

import (
	"fmt"
	"slices"
	"time"

	"github.com/labctl/labctl/lab"
)

// Outcome is what recording one round of a step's checks did.
type Outcome struct {
	// Step is the id of the step that was checked.
	Step string
	// Passed reports whether every required check of the step passed.
	Passed bool
	// Advanced reports whether the learner moved on from this step.
	Advanced bool
	// Next is the step the learner is on now; nil when the lab is done.
	Next *lab.Step
	// Done reports that every step of the lab has passed.
	Done bool
}

// Index returns the position of step id in l, or -1.
func Index(l *lab.Lab, id string) int {
	return slices.IndexFunc(l.Steps, func(s lab.Step) bool { return s.ID == id })
}

// Step returns the step id of l, or an error naming the steps there are.
func Step(l *lab.Lab, id string) (*lab.Step, error) {
	i := Index(l, id)
	if i < 0 {
		ids := make([]string, len(l.Steps))
		for j, s := range l.Steps {
			ids[j] = s.ID
		}
		return nil, fmt.Errorf("lab %s has no step %q; its steps are %v", l.Metadata.Name, id, ids)
	}
	return &l.Steps[i], nil
}

// CurrentStep returns the step the learner is on, or nil and true when every
// step has passed.
func (p *Progress) CurrentStep(l *lab.Lab) (step *lab.Step, done bool) {
	if i := Index(l, p.Current); p.Current != "" && i >= 0 {
		return &l.Steps[i], false
	}
	if i := p.firstUnpassed(l, 0); i >= 0 {
		return &l.Steps[i], false
	}
	return nil, true
}

// IsPassed reports whether step id has passed.
func (p *Progress) IsPassed(id string) bool {
	_, ok := p.Passed[id]
	return ok
}

// Done reports whether every step of l has passed.
func (p *Progress) Done(l *lab.Lab) bool {
	return p.firstUnpassed(l, 0) < 0
}

// firstUnpassed is the index of the first step at or after from that has
// not passed, or -1.
func (p *Progress) firstUnpassed(l *lab.Lab, from int) int {
	for i := from; i < len(l.Steps); i++ {
		if !p.IsPassed(l.Steps[i].ID) {
			return i
		}
	}
	return -1
}

// Record counts one round of step id's checks, which passed or not, at now.
// A passing step is marked passed (its first pass time is kept). When it is
// the current step the learner advances to the next step not yet passed
// after it, then to any earlier one left behind; when there is none the lab
// is done. Checking another step never moves the learner backwards.
func (p *Progress) Record(l *lab.Lab, id string, passed bool, now time.Time) (Outcome, error) {
	i := Index(l, id)
	if i < 0 {
		_, err := Step(l, id)
		return Outcome{}, err
	}
	if p.Attempts == nil {
		p.Attempts = map[string]int{}
	}
	p.Attempts[id]++
	out := Outcome{Step: id, Passed: passed}
	cur, _ := p.CurrentStep(l)
	if passed {
		if p.Passed == nil {
			p.Passed = map[string]time.Time{}
		}
		if _, ok := p.Passed[id]; !ok {
			p.Passed[id] = now.UTC()
		}
		if cur != nil && cur.ID == id {
			out.Advanced = true
			p.Current = ""
			if j := p.firstUnpassed(l, i+1); j >= 0 {
				p.Current = l.Steps[j].ID
			}
			if next, done := p.CurrentStep(l); !done {
				p.MarkStarted(next.ID, now)
			}
		}
	}
	out.Next, out.Done = p.CurrentStep(l)
	return out, nil
}

// Reconcile adapts progress recorded against an earlier version of the lab
// to l, whose digest is digest: progress is kept by step id, steps that no
// longer exist are forgotten, and a current step that is gone falls back to
// the first step not yet passed. It reports whether anything changed.
func (p *Progress) Reconcile(l *lab.Lab, digest string) bool {
	changed := false
	if p.Digest != digest {
		p.Digest = digest
		changed = true
	}
	for id := range p.Passed {
		if Index(l, id) < 0 {
			delete(p.Passed, id)
			changed = true
		}
	}
	for id := range p.Attempts {
		if Index(l, id) < 0 {
			delete(p.Attempts, id)
			changed = true
		}
	}
	for id := range p.Started {
		if Index(l, id) < 0 {
			delete(p.Started, id)
			changed = true
		}
	}
	for id := range p.Kept {
		if Index(l, id) < 0 {
			delete(p.Kept, id)
			changed = true
		}
	}
	if p.Current != "" && Index(l, p.Current) < 0 {
		p.Current = ""
		changed = true
	}
	return changed
}

// StartAt sets the progress to the start of step id, as after
// `labctl reset --to id`: every step before it passed at now, none after
// it, attempts cleared. The grade history is kept.
func (p *Progress) StartAt(l *lab.Lab, id string, now time.Time) error {
	i := Index(l, id)
	if i < 0 {
		_, err := Step(l, id)
		return err
	}
	p.Passed = map[string]time.Time{}
	for _, s := range l.Steps[:i] {
		p.Passed[s.ID] = now.UTC()
	}
	p.Attempts = nil
	p.Kept = nil
	p.Current = id
	p.Started = map[string]time.Time{id: now.UTC()}
	p.Heads = nil
	p.LateHeads = nil
	return nil
}

// Restart forgets the learner's steps and attempts, keeping the grade
// history, as after a `labctl reset`.
func (p *Progress) Restart() {
	p.Passed = nil
	p.Attempts = nil
	p.Kept = nil
	p.Current = ""
	p.Started = nil
	p.Heads = nil
	p.LateHeads = nil
}

// RestartAt restarts the progress as Restart does, noting that the
// learner's new attempt began at now.
func (p *Progress) RestartAt(now time.Time) {
	p.Restart()
	p.Begun = now.UTC()
}

// Keep records v as step id's passing round, unless one is kept already:
// the first pass counts.
func (p *Progress) Keep(id string, v KeptVerdict) {
	if _, ok := p.Kept[id]; ok {
		return
	}
	if p.Kept == nil {
		p.Kept = map[string]KeptVerdict{}
	}
	v.At = v.At.UTC()
	p.Kept[id] = v
}

// MarkStarted notes that step id became the current step at now: audit
// checks of the step judge what the learner did since.
func (p *Progress) MarkStarted(id string, now time.Time) {
	if p.Started == nil {
		p.Started = map[string]time.Time{}
	}
	p.Started[id] = now.UTC()
	delete(p.Heads, id)
	delete(p.LateHeads, id)
}

// SetHead notes where repository repo was when step id began: head is the
// grader's ReportHead answer.
func (p *Progress) SetHead(id, repo, head string) {
	if p.Heads == nil {
		p.Heads = map[string]map[string]string{}
	}
	if p.Heads[id] == nil {
		p.Heads[id] = map[string]string{}
	}
	p.Heads[id][repo] = head
	delete(p.LateHeads[id], repo)
}

// SetLateHead is SetHead for a head noted late: after step id had become
// current, at a look that may follow the learner's commits for it.
func (p *Progress) SetLateHead(id, repo, head string) {
	p.SetHead(id, repo, head)
	if p.LateHeads == nil {
		p.LateHeads = map[string]map[string]bool{}
	}
	if p.LateHeads[id] == nil {
		p.LateHeads[id] = map[string]bool{}
	}
	p.LateHeads[id][repo] = true
}

// HasHeads says whether the progress notes where each of repos was when
// step id began.
func (p *Progress) HasHeads(id string, repos []string) bool {
	for _, r := range repos {
		if _, ok := p.Heads[id][r]; !ok {
			return false
		}
	}
	return true
}

// StepStart is the start of step id's window: when it became the current
// step, else when the learner's attempt began (zero: the lab's start).
func (p *Progress) StepStart(id string) time.Time {
	if t, ok := p.Started[id]; ok {
		return t
	}
	return p.Begun
}

// ShowSolution records that the learner asked for step id's solution at
// now; the first time counts.
func (p *Progress) ShowSolution(id string, now time.Time) {
	if _, ok := p.SolutionShown[id]; ok {
		return
	}
	if p.SolutionShown == nil {
		p.SolutionShown = map[string]time.Time{}
	}
	p.SolutionShown[id] = now.UTC()
}

// AddGrade appends g to the grade history.
func (p *Progress) AddGrade(g Grade) {
	g.Time = g.Time.UTC()
	p.Grades = append(p.Grades, g)
}
