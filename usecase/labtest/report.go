package labtest

import (
	"encoding/json"
	"time"

	"github.com/labctl/labctl/checks"
)

// Kind is what a phase of a test run proves.
type Kind string

// The phases of a test run, in the order they run for each step.
const (
	// FastForward solves the steps before the one --step tests.
	FastForward Kind = "fast-forward"
	// Setup runs the setup of a step reached by the previous solve.
	Setup Kind = "setup"
	// Before: the step's checks fail before any work.
	Before Kind = "before"
	// Mistake: a mistake makes exactly the checks it names fail.
	Mistake Kind = "mistake"
	// Alternative: another valid solution makes every check pass.
	Alternative Kind = "alternative"
	// Reset brings the environment back to the step's start.
	Reset Kind = "reset"
	// Undo brings the environment back to the step's start in place,
	// writing back what a mistake or an alternative changed (inplace.go).
	Undo Kind = "undo"
	// Solve: the solve makes every check pass.
	Solve Kind = "solve"
	// Again: the checks still pass a moment after the solve.
	Again Kind = "again"
	// Grade: the whole lab grades 100 %.
	Grade Kind = "grade"
	// FinalReset: a reset makes the first step fail again.
	FinalReset Kind = "final-reset"
	// Mutate (--mutate): every mutant of the solve fails some check, but
	// those an alternative declares right.
	Mutate Kind = "mutate"
)

// Script names used in failures.
const (
	ScriptSolve   = "solve"
	ScriptSetup   = "setup"
	ScriptMistake = "mistake"
	// ScriptRecover follows "mistake <name>" for the mistake's way back.
	ScriptRecover = "recover"
	// ScriptAlternative is followed by the alternative's name.
	ScriptAlternative = "alternative"
)

// Failure is one deviation from what the lab promises.
type Failure struct {
	// Step is the step's id; empty for the lab as a whole.
	Step string `json:"step,omitempty"`
	// Script is "solve", "setup", "mistake <name>" or "alternative
	// <name>"; empty when no
	// script is at fault.
	Script string `json:"script,omitempty"`
	// Check is the check's name; empty when no one check is at fault.
	Check string `json:"check,omitempty"`
	// Message says what was expected and what happened.
	Message string `json:"message"`
}

// String writes the failure as "step S: mistake M: check C: message".
func (f Failure) String() string {
	s := ""
	if f.Step != "" {
		s += "step " + f.Step + ": "
	}
	if f.Script != "" {
		s += f.Script + ": "
	}
	if f.Check != "" {
		s += "check " + f.Check + ": "
	}
	return s + f.Message
}

// Phase is one thing the run proved, or failed to.
type Phase struct {
	Kind Kind `json:"kind"`
	// Step is the step's id; empty for the grade.
	Step string `json:"step,omitempty"`
	// Script is the script the phase ran ("solve", "mistake <name>").
	Script string `json:"script,omitempty"`
	Passed bool   `json:"passed"`
	// Skipped is set for an alternative that declares a mutant right, which
	// only --mutate judges: the phase proved nothing.
	Skipped  bool            `json:"skipped,omitempty"`
	Failures []Failure       `json:"failures,omitempty"`
	Checks   []checks.Result `json:"checks,omitempty"`
	// Note says why an undo in place could not prove the step's start,
	// and why a reset was not one (a full reset follows or ran).
	Note string `json:"note,omitempty"`
	// Mutants are the counts and survivors of a mutate phase.
	Mutants  *Mutants      `json:"mutants,omitempty"`
	Duration time.Duration `json:"-"`
}

// MarshalJSON writes the duration as integer milliseconds (durationMs).
func (p Phase) MarshalJSON() ([]byte, error) {
	type plain Phase
	return json.Marshal(struct {
		plain
		DurationMs int64 `json:"durationMs"`
	}{plain(p), p.Duration.Milliseconds()})
}

func (p *Phase) fail(step, script, check, message string) {
	p.Failures = append(p.Failures, Failure{Step: step, Script: script, Check: check, Message: message})
}

// Report is the outcome of one test run.
type Report struct {
	// Lab is the name of the lab as tested.
	Lab string `json:"lab"`
	// Step is the one step tested, or empty for the whole lab.
	Step string `json:"step,omitempty"`
	// Mutate is set when the run made mutants of the solves (--mutate).
	Mutate bool `json:"mutate,omitempty"`
	// Only names the part of the step tested when not all of it was: a
	// mistake's or an alternative's name, "mistakes" or "alternatives".
	Only   string  `json:"only,omitempty"`
	Passed bool    `json:"passed"`
	Phases []Phase `json:"phases"`
	// Graded is set when the full grade ran; Score and MaxScore are its points.
	Graded   bool `json:"graded"`
	Score    int  `json:"score"`
	MaxScore int  `json:"maxScore"`
	// Resets counts the resets run and ResetTime their total duration.
	Resets    int           `json:"resets"`
	ResetTime time.Duration `json:"-"`
	// SandboxesKept counts the resets that restored the sandbox in place
	// instead of recreating it (reset.Options.InPlace).
	SandboxesKept int `json:"sandboxesKept"`
	// StepStartsRestored counts the resets that went back to the step's
	// start as it was kept (reset.Checkpointer), replaying no earlier step.
	StepStartsRestored int `json:"stepStartsRestored"`
	// UndoneInPlace counts the mistakes and alternatives undone in
	// place, and UndoTime the time spent keeping the steps' starts and
	// undoing, fallen-back undos included.
	UndoneInPlace int           `json:"undoneInPlace"`
	UndoTime      time.Duration `json:"-"`
	// ResetParts splits ResetTime by what the resets did: backup,
	// sandbox, namespaces, cluster, scripts (setups and replayed solves),
	// checkpoint (keeping and going back to a step's start).
	ResetParts map[string]time.Duration `json:"-"`
	Duration   time.Duration            `json:"-"`
}

// MarshalJSON writes durations as integer milliseconds.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	parts := make(map[string]int64, len(r.ResetParts))
	for k, d := range r.ResetParts {
		parts[k] = d.Milliseconds()
	}
	return json.Marshal(struct {
		plain
		ResetMs      int64            `json:"resetMs"`
		ResetPartsMs map[string]int64 `json:"resetPartsMs"`
		UndoMs       int64            `json:"undoMs"`
		DurationMs   int64            `json:"durationMs"`
	}{plain(r), r.ResetTime.Milliseconds(), parts, r.UndoTime.Milliseconds(), r.Duration.Milliseconds()})
}

// Failures lists every failure of the run, in order.
func (r *Report) Failures() []Failure {
	var out []Failure
	for _, p := range r.Phases {
		out = append(out, p.Failures...)
	}
	return out
}

// passed reports whether the run proved everything it set out to: no
// phase failed and, for a whole-lab run, the grade and the final reset ran.
func (r *Report) passed() bool {
	if len(r.Phases) == 0 {
		return false
	}
	for _, p := range r.Phases {
		if !p.Passed {
			return false
		}
	}
	if r.Step != "" {
		return true
	}
	last := r.Phases[len(r.Phases)-1]
	return r.Graded && r.Score == r.MaxScore && last.Kind == FinalReset
}
