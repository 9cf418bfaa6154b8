package labtest

import (
	"context"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/reset"
)

// stepStarted notes in the test's progress that step s became the current
// step now, as a learner's passing the step before it does: audit checks
// judge what was done since, and git checks with since: step count the
// commits made on top of where the step's repositories are now
// (grading.NoteStart), so the previous steps' solves do not count for this
// step's checks and mistakes.
func (r *runner) stepStarted(ctx context.Context, s *lab.Step) {
	err := r.o.Store.Update(ctx, r.o.Lab.Metadata.Name, func(p *progress.Progress) error {
		p.MarkStarted(s.ID, r.o.Now())
		return nil
	})
	if err == nil {
		err = grading.NoteStart(ctx, r.env, r.o.Store, r.o.Lab, s)
	}
	if err != nil {
		r.phase(Phase{Step: s.ID, Kind: Before}, r.stepTitle(s)+": noting that it starts", func(p *Phase) {
			p.fail(s.ID, "", "", "recording the step's start in the progress: "+err.Error())
		})
		r.stopped = true
		return
	}
	// The step's start, kept for the resets after its mistakes and
	// alternatives (reset.Checkpointer).
	if c, ok := r.env.(reset.Checkpointer); ok {
		c.Checkpoint(ctx, s.ID)
	}
}
