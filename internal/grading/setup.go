package grading

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/labctl/labctl/lab"
)

// StepSetupError is a step's setup script that could not run or exited
// non-zero. The step was reached all the same (the learner's progress says
// so); its starting state is not what the lab wants.
type StepSetupError struct {
	// Step is the id of the step whose setup failed.
	Step string
	// Code is the script's exit status, when it ran (Err is nil).
	Code int
	// Output is the end of what the script printed, as a result shows a
	// probe's (lastOutput).
	Output string
	// Err says why the script could not run; nil when it ran and exited
	// with Code.
	Err error
	// Retry is the command that runs the setup again; empty means
	// `labctl reset --to Step`, which starts the step over.
	Retry string
}

func (e *StepSetupError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the setup of step %s ", e.Step)
	if e.Err != nil {
		fmt.Fprintf(&b, "could not run: %v", e.Err)
	} else {
		fmt.Fprintf(&b, "exited with status %d", e.Code)
	}
	if e.Retry == "" {
		fmt.Fprintf(&b, " (this is not your fault: the lab's setup failed; `labctl reset --to %s` starts the step over)", e.Step)
	} else {
		fmt.Fprintf(&b, " (this is not your fault: the lab's setup failed; `%s` runs it again)", e.Retry)
	}
	if e.Output != "" {
		b.WriteString(":\n" + e.Output)
	}
	return b.String()
}

func (e *StepSetupError) Unwrap() error { return e.Err }

// RunStepSetup runs the setup script of step, which the learner has just
// reached, through r, as the learner's shell would: the one way every
// command runs a step's setup. out, when set, receives the script's output
// as it runs. A script that cannot run or exits non-zero is a
// *StepSetupError. A step without a setup, or no r (a caller without a
// sandbox), runs nothing.
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
	return &StepSetupError{Step: step.ID, Code: code, Output: lastOutput(log.String()), Err: err}
}
