package grading

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// ScriptRunner runs a bash script in the sandbox as the learner would and
// returns its exit code.
type ScriptRunner interface {
	RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error)
}

// Grader is one learner's lab as `labctl check` and `labctl grade` see it.
type Grader struct {
	Lab *lab.Lab
	// Digest identifies the lab definition (lab.Digest).
	Digest  string
	Store   *progress.Store
	Checker Checker
	// Scripts, when set, runs the setup script of a step the learner
	// advances to; provision's *Live is the real one.
	Scripts ScriptRunner
	// Situation is whose lab it is, which words the retry of a setup that
	// fails (ScriptError).
	Situation Situation
	// Prober runs the probes of steps that have one; when nil, a Checker
	// that is also a Prober (provision's *Live) is used.
	Prober  Prober
	Catalog *msg.Catalog
	// Out receives results, Err status lines.
	Out, Err io.Writer
	// Color marks results in colour (for a terminal without NO_COLOR).
	Color bool
	// Now is time.Now outside tests.
	Now func() time.Time
	// OnResults, when set, receives the step and the results of each round
	// Check runs, before they are recorded (for callers that show them
	// themselves, as the browser page does).
	OnResults func(step *lab.Step, rs []checks.Result, ev report.Evidence)
}

// prober is the Prober of the session's probes, or nil.
func (s *Grader) prober() Prober {
	if s.Prober != nil {
		return s.Prober
	}
	p, _ := s.Checker.(Prober)
	return p
}

func (s *Grader) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// load reads the learner's progress and adapts it to the lab as it is now.
func (s *Grader) load() (*progress.Progress, error) {
	p, err := s.Store.Load(s.Lab.Metadata.Name)
	if err != nil {
		return nil, err
	}
	p.Reconcile(s.Lab, s.Digest)
	return p, nil
}

// update changes the learner's progress under the store's lock, adapted
// to the lab as it is now.
func (s *Grader) update(ctx context.Context, f func(*progress.Progress) error) error {
	return s.Store.Update(ctx, s.Lab.Metadata.Name, func(p *progress.Progress) error {
		p.Reconcile(s.Lab, s.Digest)
		if err := f(p); err != nil {
			return err
		}
		p.UpdatedAt = s.now().UTC()
		return nil
	})
}

// localise words an EnvironmentError in the learner's language.
func (s *Grader) localise(err error) error {
	var e *EnvironmentError
	if errors.As(err, &e) {
		e.Catalog = s.Catalog
	}
	return err
}

// Check runs the checks of step stepID ("" for the learner's current step)
// in one checker round, prints each result, records the attempt and, when
// the step passes, advances the learner. A round in which a required check
// could not run is not counted as an attempt. With every step done and no
// step named, it says so and returns Passed.
func (s *Grader) Check(ctx context.Context, stepID string) (Verdict, error) {
	p, err := s.load()
	if err != nil {
		return Errored, err
	}
	c := s.Catalog
	n := len(s.Lab.Steps)
	var step *lab.Step
	if stepID == "" {
		var done bool
		if step, done = p.CurrentStep(s.Lab); done {
			fmt.Fprintf(s.Out, c.AllDone+"\n", n)
			return Passed, nil
		}
	} else if step, err = progress.Step(s.Lab, stepID); err != nil {
		return Errored, err
	}
	fmt.Fprintf(s.Err, c.Checking+"\n", progress.Index(s.Lab, step.ID)+1, n, title(step))
	if cur, _ := p.CurrentStep(s.Lab); cur != nil && cur.ID == step.ID {
		// A step begun before labctl noted where its repositories were
		// counts its commits from now on.
		if noted, err := EnsureStart(ctx, s.Checker, s.Store, s.Lab, p, step); noted && err == nil {
			if p, err = s.load(); err != nil {
				return Errored, err
			}
		}
	}

	w := Windows(s.Lab, p, step.Checks)
	if cur, _ := p.CurrentStep(s.Lab); (cur == nil || cur.ID != step.ID) && !p.IsPassed(step.ID) {
		notBegun(step, &w)
	}
	rs, err := RunStep(ctx, s.Checker, s.prober(), step, w, c, s.now)
	if err != nil {
		return Errored, s.localise(err)
	}
	if cur, _ := p.CurrentStep(s.Lab); cur != nil && cur.ID == step.ID {
		rs = s.auditsBeforeStart(ctx, p, step, w, rs)
	}
	ev := Evidence(ctx, s.Checker, step, rs, windowsOf(s.Lab, p), c)
	if s.OnResults != nil {
		s.OnResults(step, rs, ev)
	}
	if _, err := io.WriteString(s.Out, report.StepResults(step, rs, ev, c, s.Color)); err != nil {
		return Errored, err
	}
	v := checks.Summarize(rs).Verdict()
	switch v {
	case Errored:
		return v, nil
	case Passed:
		fmt.Fprintf(s.Out, c.StepPassed+"\n", title(step))
	}
	var out progress.Outcome
	if err := s.update(ctx, func(p *progress.Progress) (err error) {
		now := s.now()
		if out, err = p.Record(s.Lab, step.ID, v == Passed, now); err == nil && v == Passed {
			Keep(p, step.ID, rs, now)
		}
		return err
	}); err != nil {
		return Errored, err
	}
	if out.Advanced {
		if out.Done {
			fmt.Fprintf(s.Out, c.AllDone+"\n", n)
			return v, nil
		}
		fmt.Fprintf(s.Out, c.NextStep+"\n", progress.Index(s.Lab, out.Next.ID)+1, n, title(out.Next))
		if err := RunStepSetup(ctx, s.Scripts, out.Next, nil); err != nil {
			return Errored, Retrying(err, Retry{Situation: s.Situation})
		}
		// Where the next step begins; if this fails, its first check
		// notes it (EnsureStart).
		_ = NoteStart(ctx, s.Checker, s.Store, s.Lab, out.Next)
	}
	return v, nil
}

// Grade judges the lab (GradeAll: a step that passed keeps the results of
// the round in which it passed, but for its final checks), records the
// grade in the learner's history and returns the report and its verdict. The
// caller renders the report (report.Write, report.WriteFile).
func (s *Grader) Grade(ctx context.Context) (*report.Report, Verdict, error) {
	// A corrupt progress file stops the grade before the checks run; the
	// progress read gives the rounds their audit windows.
	p, err := s.load()
	if err != nil {
		return nil, Errored, err
	}
	at := s.now()
	results, kept, err := GradeAll(ctx, s.Checker, s.prober(), s.Lab, p, s.Catalog)
	if err != nil {
		return nil, Errored, s.localise(err)
	}
	ev := evidenceFor(ctx, s.Checker, s.Lab, results, p, s.Catalog)
	r := report.BuildFull(s.Lab, s.Digest, at, results, kept, p.SolutionShown, ev)
	if err := s.update(ctx, func(p *progress.Progress) error {
		p.AddGrade(progress.Grade{Time: at, Score: r.Score, MaxScore: r.MaxScore, Passed: r.Passed, Digest: s.Digest})
		return nil
	}); err != nil {
		return r, Errored, err
	}
	return r, r.Summary().Verdict(), nil
}

// Record records one round of a step's results in the learner's progress
// p, as `labctl check` does: for a caller that ran the checks itself (the
// shell's automatic checks) and holds p, reconciled with l, under the
// store's lock (progress.Store.Update). A round in which a required check
// could not run changes nothing.
func Record(p *progress.Progress, l *lab.Lab, stepID string, rs []checks.Result, now time.Time) (progress.Outcome, error) {
	v := checks.Summarize(rs).Verdict()
	if v == Errored {
		next, done := p.CurrentStep(l)
		return progress.Outcome{Step: stepID, Next: next, Done: done}, nil
	}
	out, err := p.Record(l, stepID, v == Passed, now)
	if err == nil && v == Passed {
		Keep(p, stepID, rs, now)
	}
	p.UpdatedAt = now.UTC()
	return out, err
}

// title is a step's title for a terminal (escaped), else its id.
func title(s *lab.Step) string { return report.StepTitle(s) }

// auditsBeforeStart makes each audit check of step, the current one, that
// failed in its window but passes in one begun as the step before it
// began, a check that cannot tell (checks.Error, msg.AuditBeforeStart):
// labctl saw step begin only when the step before passed, which may be
// after the learner did step's work, as a learner who works outside
// labctl's shell does the next step before checking. What was done while
// the step before was current may be that step's work, so it never
// passes the check, and a failure is never made of it either: the
// learner is asked to do it again. A second round that cannot run leaves
// the results as they are.
func (s *Grader) auditsBeforeStart(ctx context.Context, p *progress.Progress, step *lab.Step, w checks.Windows, rs []checks.Result) []checks.Result {
	i := progress.Index(s.Lab, step.ID)
	if i <= 0 {
		return rs
	}
	// Only a step whose every other check passes may have been done
	// ahead: while the rest of it fails, its work is not done, and its
	// audit checks fail as they read.
	for j, c := range step.Checks {
		if c.Audit == nil && j < len(rs) && rs[j].Status != checks.Pass {
			return rs
		}
	}
	from := p.StepStart(s.Lab.Steps[i-1].ID)
	var (
		at    []int
		cs    []lab.Check
		since []time.Time
	)
	for j, c := range step.Checks {
		if c.Audit == nil || j >= len(rs) || rs[j].Status != checks.Fail || j >= len(w.Since) || !from.Before(w.Since[j]) {
			continue
		}
		at, cs, since = append(at, j), append(cs, c), append(since, from)
	}
	if len(cs) == 0 {
		return rs
	}
	again, err := runRound(ctx, s.Checker, checks.Round{Checks: cs, Windows: checks.Windows{Since: since}, Lang: catalogLang(s.Catalog)})
	if err != nil {
		return rs
	}
	cat := s.Catalog
	if cat == nil {
		cat = msg.New(msg.English)
	}
	for k, r := range again {
		if r.Status == checks.Pass {
			j := at[k]
			rs[j].Status = checks.Error
			hint := ""
			if slices.Contains(step.Checks[j].Audit.Verbs, "apply") {
				hint = cat.Render(msg.T(msg.AuditApplyAgain, "kubectl apply", "kubectl apply --server-side"))
			}
			rs[j].Message = cat.Render(msg.T(msg.AuditBeforeStart, msg.TimeOfDay(w.Since[j]), hint))
		}
	}
	return rs
}
