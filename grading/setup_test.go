package grading

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/labctl/labctl/lab"
)

// printingScripts prints lines numbered 1 to n, then exits code (or fails
// to start with err).
type printingScripts struct {
	n, code int
	err     error
	ran     int
}

func (p *printingScripts) RunScript(_ context.Context, _ string, stdout, stderr io.Writer) (int, error) {
	p.ran++
	if p.err != nil {
		return -1, p.err
	}
	for i := 1; i <= p.n; i++ {
		w := stdout
		if i%2 == 0 {
			w = stderr
		}
		fmt.Fprintf(w, "line %d\n", i)
	}
	return p.code, nil
}

func TestRunStepSetupRunsNothingWithoutASetup(t *testing.T) {
	r := &printingScripts{code: 1}
	if err := RunStepSetup(context.Background(), r, &lab.Step{ID: "two", Setup: " \n"}, nil); err != nil || r.ran != 0 {
		t.Errorf("a blank setup: %v, ran %d times", err, r.ran)
	}
	if err := RunStepSetup(context.Background(), nil, &lab.Step{ID: "two", Setup: "exit 1"}, nil); err != nil {
		t.Errorf("no script runner: %v", err)
	}
}

func TestRunStepSetupPassesItsOutputOn(t *testing.T) {
	var out bytes.Buffer
	err := RunStepSetup(context.Background(), &printingScripts{n: 2}, &lab.Step{ID: "two", Setup: "echo"}, &out)
	if err != nil || out.String() != "line 1\nline 2\n" {
		t.Errorf("RunStepSetup = %v, output %q", err, out.String())
	}
}

func TestRunStepSetupFailure(t *testing.T) {
	step := &lab.Step{ID: "two", Setup: "make-it"}
	err := RunStepSetup(context.Background(), &printingScripts{n: 30, code: 3}, step, nil)
	var se *ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want a *ScriptError", err, err)
	}
	if se.Step != "two" || se.Code != 3 || se.Err != nil {
		t.Errorf("error %+v", se)
	}
	// The output keeps the last lines only.
	if !strings.HasSuffix(se.Output, "line 30") || strings.Contains(se.Output, "line 20\n") || !strings.Contains(se.Output, "line 21") {
		t.Errorf("output %q, want lines 21 to 30", se.Output)
	}
	msg := err.Error()
	for _, want := range []string{"the setup script of step two exited with status 3", "not your fault", "`labctl reset --to two` starts the step over", "line 30"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}

	_ = Retrying(err, Retry{During: LabUp})
	if msg := se.Error(); !strings.Contains(msg, "`labctl up` runs it again") || strings.Contains(msg, "reset --to") {
		t.Errorf("with a retry of its own: %q", msg)
	}
}

// Who runs a failed script again, and how, follows the learner's
// situation and what ran the script.
func TestScriptErrorWordsItsRetryForTheSituation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		retry Retry
		want  string
	}{
		{"own machine, step reached", Retry{}, "`labctl reset --to two` starts the step over"},
		{"own machine, up", Retry{During: LabUp}, "`labctl up` runs it again"},
		{"own machine, reset", Retry{During: Reset, To: "three"}, "`labctl reset --to three` runs it again"},
		{"own machine, reset to the start", Retry{During: Reset}, "`labctl reset` runs it again"},
		{"class, step reached", Retry{Situation: InClass("ada")}, "`labctl class reset ada --to two` starts the step over"},
		{"class, up", Retry{Situation: InClass("ada"), During: LabUp}, "`labctl class up` runs it again"},
		{"class, reset", Retry{Situation: InClass("ada"), During: Reset, To: "three"}, "`labctl class reset ada --to three` runs it again"},
		{"invited, step reached", Retry{Situation: Invited("ada")}, "ask your instructor to run `labctl class reset ada --to two`, which starts the step over"},
		{"invited, up", Retry{Situation: Invited("ada"), During: LabUp}, "ask your instructor to run `labctl class up`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &ScriptError{Step: "two", Kind: "setup", Code: 1, Retry: tc.retry}
			msg := e.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("%q lacks %q", msg, tc.want)
			}
			if tc.retry.Invited && !strings.Contains(msg, "ask your instructor") {
				t.Errorf("an invited learner is told to run a command: %q", msg)
			}
		})
	}
	if err := Retrying(errors.New("other"), Retry{During: LabUp}); err.Error() != "other" {
		t.Errorf("Retrying changed another error: %v", err)
	}
	if Retrying(nil, Retry{}) != nil {
		t.Error("Retrying(nil) is not nil")
	}
}

func TestRunStepSetupThatCannotRun(t *testing.T) {
	gone := errors.New("sandbox gone")
	err := RunStepSetup(context.Background(), &printingScripts{err: gone}, &lab.Step{ID: "two", Setup: "make-it"}, nil)
	var se *ScriptError
	if !errors.As(err, &se) || !errors.Is(err, gone) {
		t.Fatalf("err = %v, want a *ScriptError wrapping the cause", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "the setup script of step two could not run: sandbox gone") || strings.Contains(msg, "status") {
		t.Errorf("message %q", msg)
	}
}

func TestRunStepSetupEscapesItsOutput(t *testing.T) {
	r := scriptFunc(func(stdout io.Writer) { io.WriteString(stdout, "evil \x1b[2J\n") })
	err := RunStepSetup(context.Background(), r, &lab.Step{ID: "two", Setup: "x"}, nil)
	if err == nil || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("a terminal escape reaches the message: %q", err)
	}
}

// scriptFunc writes what f writes and exits 1.
type scriptFunc func(stdout io.Writer)

func (f scriptFunc) RunScript(_ context.Context, _ string, stdout, _ io.Writer) (int, error) {
	f(stdout)
	return 1, nil
}

func TestStepsThrough(t *testing.T) {
	steps := []lab.Step{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	ids := func(ss []lab.Step) string {
		var out []string
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return strings.Join(out, ",")
	}
	for upTo, want := range map[string]string{"": "a", "a": "a", "b": "a,b", "c": "a,b,c"} {
		got, err := stepsThrough(steps, upTo)
		if err != nil || ids(got) != want {
			t.Errorf("stepsThrough(%q) = %s, %v; want %s", upTo, ids(got), err, want)
		}
	}
	if _, err := stepsThrough(steps, "zz"); err == nil || !strings.Contains(err.Error(), `no step "zz"`) {
		t.Errorf("unknown step: %v", err)
	}
}

// A lab's setup as it comes up stops at the first script that fails, whose
// error says how to bring the lab up again in the lab's situation.
func TestRunLabSetupFailureSaysHowToRetryInItsSituation(t *testing.T) {
	l := &lab.Lab{Steps: []lab.Step{{ID: "one", Setup: "exit 3"}, {ID: "two", Setup: "true"}}}
	r := &printingScripts{code: 3}
	err := RunLabSetup(context.Background(), r, l, "two", InClass("ann"), io.Discard)
	var se *ScriptError
	if !errors.As(err, &se) || se.Step != "one" || se.Code != 3 || se.Retry.Situation != InClass("ann") || se.Retry.During != LabUp {
		t.Fatalf("%v (%+v), want step one's failure with the class's up command", err, se)
	}
	if !strings.Contains(err.Error(), "`labctl class up` runs it again") {
		t.Errorf("%v does not say how to retry", err)
	}
	if r.ran != 1 {
		t.Errorf("%d scripts ran after the first failed", r.ran)
	}
	if err := RunLabSetup(context.Background(), r, l, "three", OwnMachine(), io.Discard); err == nil {
		t.Error("a step the lab does not have was set up")
	}
}
