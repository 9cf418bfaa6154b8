// Package labtest owns `labctl test`: it proves a lab end to end on an
// environment of its own. Step by step, the step's checks must fail before
// its solve, every mistake script must make exactly the checks it names
// fail, every alternative solution and the solve script must make every
// check pass (the solve's checks must still pass a moment later); then the
// full grade must be 100 % and a reset must bring the first step back.
// A step with a probe is checked through it, and a step's setup runs, as
// labctl check does (grading.RunStep, grading.RunStepSetup). The
// environment is reached through the small Environment interface;
// provision's *Live is the real one.
package labtest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/internal/mutant"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/reset"
)

// Environment is a freshly provisioned lab, at the start of its first step
// (that step's setup has run), as labtest drives it. Its reset methods are
// used through reset.Run, the mechanism of `labctl reset --to`.
type Environment interface {
	reset.Environment
	// RunChecks runs one checker round and returns a result per check of
	// the round, in order.
	RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error)
}

// Status prints a line per phase; status.Logger is the real one.
type Status interface {
	Start(msg string)
	End(ok bool)
}

// DefaultPause is how long the solve's checks must keep passing.
const DefaultPause = time.Second

// Options say what to test.
type Options struct {
	// Lab is the lab under test, as the environment was provisioned for it.
	Lab *lab.Lab
	// Store is a progress store of the test's own.
	Store *progress.Store
	// Step, when set, tests only this step, after fast-forwarding through
	// the solves of the steps before it; the grade and final reset are then
	// skipped.
	Step string
	// Only, with Step, tests only the mistake or alternative of that name
	// (after the step's checks fail at its start); the solve is skipped.
	Only string
	// Mistakes and Alternatives, with Step, test only the step's mistakes,
	// its alternatives, or both (after the step's checks fail at its
	// start); the solve is skipped.
	Mistakes, Alternatives bool
	// Mutate makes mutants of each step's solve after it passes and
	// requires each to fail some check (mutate.go).
	Mutate bool
	// Draft, when set, receives the lab's objects before and after each
	// step's solve whose checks are all placeholders (DraftSnapshotter),
	// for `labctl test --draft` to draft its checks from; the solve's
	// checks are run and reported as always.
	Draft func(s *lab.Step, start, end []map[string]any)
	// Pause is how long after the solve its checks run again; zero means
	// DefaultPause.
	Pause time.Duration
	// Status prints the phases; nil prints nothing.
	Status Status
	// ScriptOutput, when set, receives the output of every script as it
	// runs; the end of a failing script's output is kept in its failure.
	ScriptOutput io.Writer
	// Now is time.Now outside tests.
	Now func() time.Time
}

// Run tests the lab on env and returns the report; the report says whether
// the lab passed. An error is returned only for options that cannot be
// tested (no lab, no store, an unknown step); everything that goes wrong in
// the environment is a failure in the report.
func Run(ctx context.Context, env Environment, o Options) (*Report, error) {
	if o.Lab == nil || len(o.Lab.Steps) == 0 {
		return nil, fmt.Errorf("no lab to test, or a lab without steps")
	}
	if o.Store == nil {
		return nil, fmt.Errorf("testing lab %s: no progress store given for its resets", o.Lab.Metadata.Name)
	}
	first, last := 0, len(o.Lab.Steps)
	if o.Step != "" {
		if first = progress.Index(o.Lab, o.Step); first < 0 {
			_, err := progress.Step(o.Lab, o.Step)
			return nil, err
		}
		last = first + 1
	}
	if err := CheckPart(o.Lab, o.Step, o.Only, o.Mistakes, o.Alternatives); err != nil {
		return nil, err
	}
	if o.Mutate && o.partial() {
		return nil, fmt.Errorf("--mutate makes its mutants from the step's solve, which --only, --mistakes and --alternatives skip; drop one or the other")
	}
	if o.Pause == 0 {
		o.Pause = DefaultPause
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Status == nil {
		o.Status = silent{}
	}
	r := &runner{env: env, o: o, rep: &Report{Lab: o.Lab.Metadata.Name, Step: o.Step, Only: o.part(), Mutate: o.Mutate}}
	began := o.Now()
	r.run(ctx, first, last)
	r.rep.Duration = o.Now().Sub(began)
	r.rep.Passed = r.rep.passed()
	return r.rep, nil
}

// runner is one test run in progress. stopped is set once the environment
// is in no known state, after which nothing more is run.
type runner struct {
	env     Environment
	o       Options
	rep     *Report
	stopped bool
	// undone is, for each audit check of an absence, when the last
	// mutant of its step was undone: see afterMutants.
	undone map[*lab.AuditCheck]time.Time
	// start is the current step's start, kept for undoing its cases in
	// place (inplace.go); nil until kept, and after a full reset.
	start *caseStart
	// ahead, when set, brings the undo's first look, taken while the
	// current case's checks ran (lookAhead).
	ahead chan worldLook
}

func (r *runner) run(ctx context.Context, first, last int) {
	steps := r.o.Lab.Steps
	if first > 0 {
		r.fastForward(ctx, first)
	}
	for i := first; i < last && !r.stopped; i++ {
		s := &steps[i]
		if i > first {
			r.setup(ctx, s)
		}
		if r.stopped {
			break
		}
		if r.stepStarted(ctx, s); r.stopped {
			break
		}
		r.before(ctx, s)
		for j := range s.Mistakes {
			if r.stopped {
				break
			}
			if r.o.selects(s.Mistakes[j].Name, r.o.Mistakes) {
				r.mistake(ctx, s, &s.Mistakes[j])
			}
		}
		for j := range s.Alternatives {
			if r.stopped {
				break
			}
			if r.o.selects(s.Alternatives[j].Name, r.o.Alternatives) {
				r.alternative(ctx, s, &s.Alternatives[j])
			}
		}
		if !r.stopped && !r.o.partial() {
			// The lab's objects at the step's start, for --mutate: taken
			// now, after the last reset to that start, since a reset makes
			// the namespaces' objects anew (a Service's address, a uid).
			var start []mutant.Object
			var startErr error
			if r.o.Mutate {
				start, startErr = r.snapshot(ctx)
			}
			var draftStart []map[string]any
			drafting := r.o.Draft != nil && placeholdersOnly(s)
			if drafting {
				draftStart = r.draftSnapshot(ctx, s)
			}
			n := len(r.rep.Phases)
			r.solve(ctx, s)
			if drafting && draftStart != nil && !r.stopped {
				if end := r.draftSnapshot(ctx, s); end != nil {
					r.o.Draft(s, draftStart, end)
				}
			}
			if r.o.Mutate && !r.stopped && r.solved(n) {
				r.mutate(ctx, s, start, startErr)
			}
		}
	}
	if r.o.Step != "" {
		return
	}
	if !r.stopped {
		r.grade(ctx)
	}
	if !r.stopped {
		r.finalReset(ctx)
	}
}

// solved says whether the solve's phases, from the n-th on, passed: the
// mutants of a solve that does not pass prove nothing.
func (r *runner) solved(n int) bool {
	for _, p := range r.rep.Phases[n:] {
		if !p.Passed {
			return false
		}
	}
	return true
}

// partial is true when the options test only some of a step's answers.
func (o *Options) partial() bool { return o.Only != "" || o.Mistakes || o.Alternatives }

// part names what of the step is tested, for the report: "" for all of it.
func (o *Options) part() string {
	switch {
	case o.Only != "":
		return o.Only
	case o.Mistakes && o.Alternatives:
		return "mistakes and alternatives"
	case o.Mistakes:
		return "mistakes"
	case o.Alternatives:
		return "alternatives"
	}
	return ""
}

// selects says whether the answer name, a mistake or an alternative (kind:
// whether its kind was asked for), is tested.
func (o *Options) selects(name string, kind bool) bool {
	if !o.partial() {
		return true
	}
	return name == o.Only || kind
}

// CheckPart says whether the part of a step asked for can be tested: only
// names one of its answers (CheckOnly), and mistakes or alternatives come
// with a step.
func CheckPart(l *lab.Lab, step, only string, mistakes, alternatives bool) error {
	if err := CheckOnly(l, step, only); err != nil {
		return err
	}
	if (mistakes || alternatives) && step == "" {
		return fmt.Errorf("--mistakes and --alternatives need --step: the steps before it are solved to reach it")
	}
	return nil
}

// CheckOnly says whether only names a mistake or an alternative of step:
// nil when only is empty or does, an error listing the names otherwise.
func CheckOnly(l *lab.Lab, step, only string) error {
	if only == "" {
		return nil
	}
	if step == "" {
		return fmt.Errorf("--only %s needs --step: mistakes and alternatives are named within a step", only)
	}
	s, err := progress.Step(l, step)
	if err != nil {
		return err
	}
	var names []string
	for _, m := range s.Mistakes {
		if m.Name == only {
			return nil
		}
		names = append(names, m.Name)
	}
	for _, a := range s.Alternatives {
		if a.Name == only {
			return nil
		}
		names = append(names, a.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("step %s has no mistakes or alternatives, so there is no %s to test alone; drop --only", step, only)
	}
	return fmt.Errorf("step %s has no mistake or alternative named %s; its names are %s", step, only, strings.Join(names, ", "))
}

// phase runs fn as one phase with its status line and records it.
func (r *runner) phase(p Phase, title string, fn func(p *Phase)) {
	r.o.Status.Start(title)
	began := r.o.Now()
	fn(&p)
	p.Duration = r.o.Now().Sub(began)
	p.Passed = len(p.Failures) == 0
	r.o.Status.End(p.Passed)
	r.rep.Phases = append(r.rep.Phases, p)
}

// stepTitle numbers a step for status lines.
func (r *runner) stepTitle(s *lab.Step) string {
	return fmt.Sprintf("Step %d/%d %s", progress.Index(r.o.Lab, s.ID)+1, len(r.o.Lab.Steps), s.ID)
}

// fastForward brings a fresh environment to the start of step first by
// running, in order, each earlier step's solve and the next step's setup,
// as a learner who solved them would have.
func (r *runner) fastForward(ctx context.Context, first int) {
	steps := r.o.Lab.Steps
	r.phase(Phase{Step: steps[first].ID, Kind: FastForward}, fmt.Sprintf("Solving steps 1-%d to reach step %s", first, steps[first].ID), func(p *Phase) {
		for i := 0; i < first; i++ {
			if !r.script(ctx, p, &steps[i], ScriptSolve, steps[i].Solve) {
				r.stopped = true
				return
			}
			if !r.stepSetup(ctx, p, &steps[i+1]) {
				r.stopped = true
				return
			}
		}
	})
}

// setup runs the setup script of a step the previous step's solve reached.
func (r *runner) setup(ctx context.Context, s *lab.Step) {
	if strings.TrimSpace(s.Setup) == "" {
		return
	}
	r.phase(Phase{Step: s.ID, Kind: Setup, Script: ScriptSetup}, r.stepTitle(s)+": running its setup", func(p *Phase) {
		if !r.stepSetup(ctx, p, s) {
			r.stopped = true
		}
	})
}

// before checks that the step is not complete before any work, unless it
// declares that it is.
func (r *runner) before(ctx context.Context, s *lab.Step) {
	title := r.stepTitle(s) + ": checks fail before the solve"
	if s.PassesInitially {
		title = r.stepTitle(s) + ": checks before the solve (passesInitially)"
	}
	r.phase(Phase{Step: s.ID, Kind: Before}, title, func(p *Phase) {
		rs, ok := r.checks(ctx, p, s)
		if !ok {
			return
		}
		p.Failures = append(p.Failures, errored(s.ID, "", rs)...)
		if !s.PassesInitially && checks.StepPassed(rs) {
			p.Failures = append(p.Failures, Failure{Step: s.ID,
				Message: "every check passes before the solve, so the step is complete without any work; " +
					"make a check fail in the step's starting state, or declare passesInitially: true if that is intended"})
		}
	})
}

// mistake runs one mistake from the step's start, compares what fails with
// what the mistake names, and brings the step's start back (undoCase).
func (r *runner) mistake(ctx context.Context, s *lab.Step, m *lab.Mistake) {
	script := ScriptMistake + " " + m.Name
	title := fmt.Sprintf("%s: mistake %s is caught", r.stepTitle(s), m.Name)
	if strings.TrimSpace(m.Recover) != "" {
		title += ", and its way back passes"
	}
	r.keepStart(ctx, s)
	recovers := strings.TrimSpace(m.Recover) != ""
	r.phase(Phase{Step: s.ID, Kind: Mistake, Script: script}, title, func(p *Phase) {
		if !r.script(ctx, p, s, script, m.Script) {
			return
		}
		if !recovers {
			r.lookAhead(ctx, s)
		}
		rs, ok := r.checks(ctx, p, s)
		if !ok {
			return
		}
		p.Failures = append(p.Failures, compareMistake(s.ID, script, m.Fails, rs)...)
		if len(p.Failures) == 0 {
			p.Failures = append(p.Failures, r.named(ctx, s, m, script, rs)...)
		}
		if !recovers || len(p.Failures) > 0 {
			return
		}
		// The way back: from the mistake, the step can still pass.
		back := script + " " + ScriptRecover
		if !r.script(ctx, p, s, back, m.Recover) {
			return
		}
		r.lookAhead(ctx, s)
		if rs, ok := r.checks(ctx, p, s); ok {
			p.Failures = append(p.Failures, notPassing(s.ID, back, rs)...)
		}
	})
	if !r.stopped {
		r.undoCase(ctx, s, script)
	}
}

// alternative runs another valid solution from the step's start, requires
// every check to pass, and brings the step's start back (undoCase).
func (r *runner) alternative(ctx context.Context, s *lab.Step, a *lab.Alternative) {
	script := ScriptAlternative + " " + a.Name
	if a.Mutant != "" {
		// A mutant declared right has no script: --mutate judges it
		// among the solve's mutants.
		if !r.o.Mutate {
			r.phase(Phase{Step: s.ID, Kind: Alternative, Script: script, Skipped: true},
				fmt.Sprintf("%s: alternative %s (mutant %s) is judged only with --mutate: skipped", r.stepTitle(s), a.Name, a.Mutant), func(*Phase) {})
		}
		return
	}
	r.keepStart(ctx, s)
	r.phase(Phase{Step: s.ID, Kind: Alternative, Script: script}, fmt.Sprintf("%s: alternative %s passes", r.stepTitle(s), a.Name), func(p *Phase) {
		if !r.script(ctx, p, s, script, a.Script) {
			return
		}
		r.lookAhead(ctx, s)
		if rs, ok := r.checks(ctx, p, s); ok {
			p.Failures = append(p.Failures, notPassing(s.ID, script, rs)...)
		}
	})
	if !r.stopped {
		r.undoCase(ctx, s, script)
	}
}

// named lists where the learner who made mistake m, with the results rs,
// would not be told exactly m: m's evidence does not hold (each check that
// does not pass), or another mistake that fails the same checks is named
// too, for want of evidence that tells them apart.
func (r *runner) named(ctx context.Context, s *lab.Step, m *lab.Mistake, script string, rs []checks.Result) []Failure {
	var out []Failure
	if len(m.Evidence) > 0 {
		w := grading.Windows(r.o.Lab, r.progress(), m.Evidence)
		ers, err := checks.RunRound(ctx, checks.Round{Checks: m.Evidence, Windows: w}, r.env.RunChecks)
		if err != nil {
			return []Failure{{Step: s.ID, Script: script, Message: "its evidence could not be judged: " + err.Error()}}
		}
		for _, e := range ers {
			if e.Status != checks.Pass {
				out = append(out, Failure{Step: s.ID, Script: script, Check: e.Name,
					Message: fmt.Sprintf("evidence of mistake %s did not hold after it, so the learner who makes it is not told it: %s", m.Name, e.Message)})
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	ev := grading.Evidence(ctx, r.env, s, rs, func(cs []lab.Check) checks.Windows { return grading.Windows(r.o.Lab, r.progress(), cs) }, nil)
	for _, o := range report.LikelyMistakes(s, rs, ev) {
		if o.Name != m.Name {
			out = append(out, Failure{Step: s.ID, Script: script,
				Message: fmt.Sprintf("the learner who makes this mistake is also told mistake %s, which fails the same checks; give %s (or %s) evidence that holds only after it", o.Name, o.Name, m.Name)})
		}
	}
	return out
}

// compareMistake lists where the results differ from "exactly the named
// checks fail".
func compareMistake(step, script string, fails []string, rs []checks.Result) []Failure {
	named := make(map[string]bool, len(fails))
	for _, n := range fails {
		named[n] = true
	}
	var out []Failure
	for _, res := range rs {
		switch {
		case res.Status == checks.Error:
			out = append(out, Failure{Step: step, Script: script, Check: res.Name,
				Message: "could not run: " + res.Message})
		case named[res.Name] && res.Status == checks.Pass:
			out = append(out, Failure{Step: step, Script: script, Check: res.Name,
				Message: "passed, so the mistake is not caught; the mistake names this check, which must fail after it"})
		case !named[res.Name] && res.Status == checks.Fail:
			out = append(out, Failure{Step: step, Script: script, Check: res.Name,
				Message: "failed, but the mistake does not name it (add it to fails, or make the check pass): " + res.Message})
		}
	}
	return out
}

// solve runs the step's solve and checks that every check passes, then
// again after the pause.
func (r *runner) solve(ctx context.Context, s *lab.Step) {
	passed := map[string]bool{}
	r.phase(Phase{Step: s.ID, Kind: Solve, Script: ScriptSolve}, r.stepTitle(s)+": solve passes every check", func(p *Phase) {
		if !r.script(ctx, p, s, ScriptSolve, s.Solve) {
			r.stopped = true
			return
		}
		if rs, ok := r.checks(ctx, p, s); ok {
			p.Failures = append(p.Failures, notPassing(s.ID, ScriptSolve, rs)...)
			for _, res := range rs {
				passed[res.Name] = res.Status == checks.Pass
			}
		}
	})
	if r.stopped {
		return
	}
	// A check that failed right after the solve is reported there once;
	// this phase reports the checks that passed and then stopped passing.
	title := fmt.Sprintf("%s: no check stops passing %s after the solve", r.stepTitle(s), r.o.Pause)
	r.phase(Phase{Step: s.ID, Kind: Again, Script: ScriptSolve}, title, func(p *Phase) {
		t := time.NewTimer(r.o.Pause)
		defer t.Stop()
		select {
		case <-ctx.Done():
			p.fail(s.ID, ScriptSolve, "", "interrupted: "+ctx.Err().Error())
			r.stopped = true
			return
		case <-t.C:
		}
		if rs, ok := r.checks(ctx, p, s); ok {
			for _, f := range notPassing(s.ID, ScriptSolve, rs) {
				if passed[f.Check] {
					f.Message = fmt.Sprintf("passed right after the solve but not %s later: %s", r.o.Pause, f.Message)
					p.Failures = append(p.Failures, f)
				}
			}
		}
	})
}

// notPassing names every check that did not pass.
func notPassing(step, script string, rs []checks.Result) []Failure {
	var out []Failure
	for _, res := range rs {
		switch res.Status {
		case checks.Pass:
		case checks.Error:
			out = append(out, Failure{Step: step, Script: script, Check: res.Name, Message: "could not run: " + res.Message})
		default:
			out = append(out, Failure{Step: step, Script: script, Check: res.Name, Message: "failed: " + res.Message})
		}
	}
	return out
}

// errored names every check that could not run.
func errored(step, script string, rs []checks.Result) []Failure {
	var out []Failure
	for _, res := range rs {
		if res.Status == checks.Error {
			out = append(out, Failure{Step: step, Script: script, Check: res.Name, Message: "could not run: " + res.Message})
		}
	}
	return out
}

type silent struct{}

func (silent) Start(string) {}
func (silent) End(bool)     {}

// TestSuffix is appended to a lab's name for the copy labtest provisions.
const TestSuffix = "-test"

// maxLabName is the longest lab name lab.Load accepts.
const maxLabName = 40

// ForTest returns a copy of l named "<name>-test" (shortened to fit the
// limit on lab names), so that its cluster, sandbox, volume and state
// directory are its own and never those of a learner's running lab. The
// steps are shared with l, not copied.
func ForTest(l *lab.Lab) *lab.Lab {
	c := *l
	name := l.Metadata.Name
	if len(name)+len(TestSuffix) > maxLabName {
		name = strings.TrimRight(name[:maxLabName-len(TestSuffix)], "-")
	}
	c.Metadata.Name = name + TestSuffix
	return &c
}
