package grading

import (
	"context"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// Evidence judges the evidence of the mistakes of step that the failures
// in rs look like (lab.Step.Suspects), in one checker round of their
// evidence checks with the audit windows that windows gives them (nil: the
// whole log). It says of each such mistake whether every evidence check
// passed. Without a suspect that has evidence, no round runs. A round that
// cannot run names none of them: a learner is never told a mistake the
// host could not see.
func Evidence(ctx context.Context, c Checker, step *lab.Step, rs []checks.Result, windows func([]lab.Check) checks.Windows, cat *msg.Catalog) report.Evidence {
	failing, errored := report.Failing(rs)
	var all []lab.Check
	var suspects []*lab.Mistake
	for _, m := range step.Suspects(failing, errored) {
		if len(m.Evidence) > 0 {
			suspects = append(suspects, m)
			all = append(all, m.Evidence...)
		}
	}
	if len(all) == 0 {
		return nil
	}
	var w checks.Windows
	if windows != nil {
		w = windows(all)
	}
	out, err := evidenceRound(ctx, c, all, rs, w, catalogLang(cat))
	if err != nil {
		return report.Evidence{}
	}
	ev := report.Evidence{}
	for _, m := range suspects {
		held := true
		for _, r := range out[:len(m.Evidence)] {
			held = held && r.Status == checks.Pass
		}
		out = out[len(m.Evidence):]
		ev[m.Name] = held
	}
	return ev
}

// evidenceRound gives the results of the evidence checks cs: a matrix
// check whose every cell the step's matrix checks tried in their round rs
// is judged from what they found (checks.JudgeFromCells), the same
// connections after the same wait for the policy agent; the others run in
// one checker round, with what w says of them, when there are any.
func evidenceRound(ctx context.Context, c Checker, cs []lab.Check, rs []checks.Result, w checks.Windows, lang msg.Lang) ([]checks.Result, error) {
	out := make([]checks.Result, len(cs))
	var left []int
	round := checks.Round{Lang: lang}
	for i, ch := range cs {
		if r, ok := checks.JudgeFromCells(ch, rs, lang); ok {
			out[i] = r
			continue
		}
		left = append(left, i)
		round.Checks = append(round.Checks, ch)
		round.Windows.Keep(w, i)
	}
	if len(left) == 0 {
		return out, nil
	}
	got, err := runRound(ctx, c, round)
	if err != nil {
		return nil, err
	}
	for k, i := range left {
		out[i] = got[k]
	}
	return out, nil
}

// evidenceFor is Evidence for every step of results that did not pass.
func evidenceFor(ctx context.Context, c Checker, l *lab.Lab, results map[string][]checks.Result, pr *progress.Progress, cat *msg.Catalog) map[string]report.Evidence {
	out := map[string]report.Evidence{}
	for i := range l.Steps {
		s := &l.Steps[i]
		if rs := results[s.ID]; !checks.StepPassed(rs) {
			if ev := Evidence(ctx, c, s, rs, windowsOf(l, pr), cat); ev != nil {
				out[s.ID] = ev
			}
		}
	}
	return out
}

// windowsOf gives checks of l their Windows from pr.
func windowsOf(l *lab.Lab, pr *progress.Progress) func([]lab.Check) checks.Windows {
	return func(cs []lab.Check) checks.Windows { return Windows(l, pr, cs) }
}

// Windows gives the checks cs of l what pr knows of when their steps
// began: their audit windows (progress's AuditWindows) and the commits
// their repositories were at (progress's StepHeads). Nil progress knows
// nothing.
func Windows(l *lab.Lab, pr *progress.Progress, cs []lab.Check) checks.Windows {
	heads, late := pr.StepStarts(l, cs)
	for i := range heads {
		if late[i] {
			heads[i] = checks.HeadLate + " " + heads[i]
		}
	}
	return checks.Windows{Since: pr.AuditWindows(l, cs), Heads: heads, Marks: pr.MarkSteps(l, cs)}
}
