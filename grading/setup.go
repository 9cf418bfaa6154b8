package grading

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/labctl/labctl/lab"
)

// ScriptError is a step's setup or solve script that could not run or
// exited non-zero: as the learner reached the step, as the lab came up, or
// as a reset replayed it. It is the lab's failure, not the learner's, and
// its message says who can run the script again and how (Retry).
type ScriptError struct {
	// Step is the id of the step whose script failed.
	Step string
	// Kind is "setup" or "solve".
	Kind string
	// Code is the script's exit status, when it ran (Err is nil).
	Code int
	// Output is the end of what the script printed (ScriptOutput).
	Output string
	// Err says why the script could not run; nil when it ran and exited
	// with Code.
	Err error
	// Retry is when the script ran and in whose lab; the zero value is a
	// learner on their own machine who reached Step.
	Retry Retry
}

func (e *ScriptError) Error() string {
	var b strings.Builder
	kind := e.Kind
	if kind == "" {
		kind = "setup"
	}
	fmt.Fprintf(&b, "the %s script of step %s ", kind, e.Step)
	if e.Err != nil {
		fmt.Fprintf(&b, "could not run: %v", e.Err)
	} else {
		fmt.Fprintf(&b, "exited with status %d", e.Code)
	}
	fmt.Fprintf(&b, " (this is not your fault: the lab's %s script failed; %s)", kind, e.Retry.words(e.Step))
	if e.Output != "" {
		b.WriteString(":\n" + e.Output)
	}
	return b.String()
}

func (e *ScriptError) Unwrap() error { return e.Err }

// Situation is whose lab a script runs in, which decides who can run it
// again when it fails.
type Situation struct {
	// Learner is the class's learner whose lab it is; "" is a learner's own
	// machine, where they run labctl up and labctl reset themselves.
	Learner string
	// Invited is that learner in their own session (an invite): they
	// cannot bring up or reset their lab; their instructor can.
	Invited bool
}

// OwnMachine is a learner's own lab.
func OwnMachine() Situation { return Situation{} }

// InClass is the lab of a class's learner, as their instructor runs it.
func InClass(learner string) Situation { return Situation{Learner: learner} }

// Invited is the lab of a class's learner, in the learner's own session.
func Invited(learner string) Situation { return Situation{Learner: learner, Invited: true} }

// Occasion is what ran a script.
type Occasion int

// The occasions of a script.
const (
	// StepReached: the learner reached the step; starting the step over
	// runs its setup again.
	StepReached Occasion = iota
	// LabUp: the lab came up; bringing it up again runs the script again.
	LabUp
	// Reset: a reset replayed it; the same reset runs it again.
	Reset
)

// Retry is when a failed script ran and in whose lab: what runs it again
// follows, worded in one place (words).
type Retry struct {
	Situation
	During Occasion
	// To is the step the reset went to ("": the lab's start), for Reset.
	To string
}

// words says, for the learner's situation, what runs a failed script of
// step again.
func (r Retry) words(step string) string {
	var cmd, does string
	switch r.During {
	case LabUp:
		cmd, does = "labctl up", "runs it again"
		if r.Learner != "" {
			cmd = "labctl class up"
		}
	case Reset:
		cmd, does = "labctl reset", "runs it again"
		if r.Learner != "" {
			cmd = "labctl class reset " + r.Learner
		}
		if r.To != "" {
			cmd += " --to " + r.To
		}
	default:
		cmd, does = "labctl reset --to "+step, "starts the step over"
		if r.Learner != "" {
			cmd = "labctl class reset " + r.Learner + " --to " + step
		}
	}
	if r.Invited {
		return "ask your instructor to run `" + cmd + "`, which " + does
	}
	return "`" + cmd + "` " + does
}

// Retrying returns err with r as its retry when it is a *ScriptError, for
// a caller that knows when and where the script ran; other errors, and
// nil, it returns as they are.
func Retrying(err error, r Retry) error {
	var se *ScriptError
	if errors.As(err, &se) {
		se.Retry = r
	}
	return err
}

// ScriptOutput is the end of a failed script's output as its error keeps
// it: the last lines, each bounded and escaped for a terminal.
func ScriptOutput(raw string) string { return lastOutput(raw) }

// RunStepSetup runs the setup script of step, which the learner has just
// reached, through r, as the learner's shell would: the one way every
// command runs a step's setup. out, when set, receives the script's output
// as it runs. A script that cannot run or exits non-zero is a
// *ScriptError (its Retry that of a learner who reached the step on their
// own machine: Retrying names another). A step without a setup, or no r (a
// caller without a sandbox), runs nothing.
func RunStepSetup(ctx context.Context, r ScriptRunner, step *lab.Step, out io.Writer) error {
	if r == nil || strings.TrimSpace(step.Setup) == "" {
		return nil
	}
	log := &tailBuffer{max: probeKeepBytes}
	w := io.Writer(log)
	if out != nil {
		w = io.MultiWriter(log, out)
	}
	code, err := r.RunScript(ctx, step.Setup, w, w)
	if err == nil && code == 0 {
		return nil
	}
	return &ScriptError{Step: step.ID, Kind: "setup", Code: code, Output: lastOutput(log.String()), Err: err}
}

// RunLabSetup runs, in order, the setup script of every step of l from the
// first through the step with id upTo ("" means only the first), each as
// RunStepSetup runs it, as the lab comes up in situation s (labctl up,
// labctl class up). A script that fails stops it with a *ScriptError whose
// retry brings the lab up again, worded for s. out receives the scripts'
// output.
func RunLabSetup(ctx context.Context, r ScriptRunner, l *lab.Lab, upTo string, s Situation, out io.Writer) error {
	steps, err := stepsThrough(l.Steps, upTo)
	if err != nil {
		return err
	}
	for i := range steps {
		if err := RunStepSetup(ctx, r, &steps[i], out); err != nil {
			return Retrying(err, Retry{Situation: s, During: LabUp})
		}
	}
	return nil
}

// stepsThrough returns steps up to and including the one with id upTo.
func stepsThrough(steps []lab.Step, upTo string) ([]lab.Step, error) {
	if len(steps) == 0 {
		return nil, nil
	}
	if upTo == "" {
		return steps[:1], nil
	}
	for i, s := range steps {
		if s.ID == upTo {
			return steps[:i+1], nil
		}
	}
	return nil, fmt.Errorf("the lab has no step %q", upTo)
}
