package grading

import (
	"context"
	"fmt"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/lab"
)

// NoteStart notes in the learner's progress (store, lab l) where the
// repositories whose commits step's checks, and later steps' that count
// from it, count from (progress.StartRepos) are now, as the grader sees
// them: the step begins here. Call it when the step becomes current,
// after its setup; a step without such repositories needs nothing. A
// repository that is not there is not noted: the step's next check looks
// again (EnsureStart).
func NoteStart(ctx context.Context, c Checker, store *progress.Store, l *lab.Lab, step *lab.Step) error {
	return noteStart(ctx, c, store, l, step, false, false)
}

// NoteStartIfMissing is NoteStart for the current step when the progress
// pr, which the caller read, does not yet say where its repositories are,
// and the step begins now (labctl up has just made the lab): what it
// notes is no later than the learner's first work for the step.
func NoteStartIfMissing(ctx context.Context, c Checker, store *progress.Store, l *lab.Lab, pr *progress.Progress, step *lab.Step) error {
	if pr.HasHeads(step.ID, progress.StartRepos(l, step.ID)) {
		return nil
	}
	return noteStart(ctx, c, store, l, step, true, false)
}

// noteStart is NoteStart; with onlyMissing it keeps what the progress
// notes already, read under the store's lock (another labctl may have
// noted the step's start meanwhile, before a setup that commits); with
// late it notes the heads as seen after the step began (SetLateHead).
func noteStart(ctx context.Context, c Checker, store *progress.Store, l *lab.Lab, step *lab.Step, onlyMissing, late bool) error {
	repos := progress.StartRepos(l, step.ID)
	if len(repos) == 0 {
		return nil
	}
	cs := make([]lab.Check, len(repos))
	for i, r := range repos {
		cs[i] = checks.ReportHead(r)
		cs[i].Name = fmt.Sprintf("head-%d", i+1)
	}
	rs, err := runRound(ctx, c, checks.Round{Checks: cs})
	if err != nil {
		return fmt.Errorf("noting where %s is as step %s begins: %w", repos[0], step.ID, err)
	}
	for i, r := range rs {
		if r.Status != checks.Pass {
			return fmt.Errorf("noting where %s is as step %s begins: %s", repos[i], step.ID, r.Message)
		}
	}
	return store.Update(ctx, l.Metadata.Name, func(p *progress.Progress) error {
		for i, r := range rs {
			if r.Message == checks.HeadAbsent || (onlyMissing && p.HasHeads(step.ID, repos[i:i+1])) {
				continue
			}
			if late {
				p.SetLateHead(step.ID, repos[i], r.Message)
			} else {
				p.SetHead(step.ID, repos[i], r.Message)
			}
		}
		return nil
	})
}

// EnsureStart notes where step's repositories are (as NoteStart) when pr,
// the progress the caller read, does not yet say where they were as it
// began (a step begun before labctl noted it, or whose noting failed).
// What it notes is late (progress.SetLateHead): the learner may already
// have made the step's commits, so a check counting too few commits since
// cannot tell, and asks for a new one, unless an earlier step's noted
// start bounds the step's work (progress.StepHeads). It reports whether it
// noted anything, so that the caller reads the progress again.
func EnsureStart(ctx context.Context, c Checker, store *progress.Store, l *lab.Lab, pr *progress.Progress, step *lab.Step) (bool, error) {
	repos := step.HeadRepos()
	if len(repos) == 0 || pr.HasHeads(step.ID, repos) {
		return false, nil
	}
	return true, noteStart(ctx, c, store, l, step, true, true)
}

// notBegun says, for the checks of step that count commits since it
// began, that it has not: a step checked before it is the learner's
// current one cannot pass them.
func notBegun(step *lab.Step, w *checks.Windows) {
	for i, c := range step.Checks {
		if c.Git == nil || c.Git.Since != lab.SinceStep {
			continue
		}
		if w.Heads == nil {
			w.Heads = make([]string, len(step.Checks))
		}
		w.Heads[i] = checks.HeadNotBegun
	}
}
