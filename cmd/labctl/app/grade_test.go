package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/labctl/labctl/grading"
)

func TestVerdictExitCodes(t *testing.T) {
	tests := []struct {
		v    grading.Verdict
		err  error
		code int
	}{
		{grading.Passed, nil, 0},
		{grading.Failed, nil, 1},
		{grading.Errored, nil, 2},
		{grading.Errored, &grading.EnvironmentError{Err: errors.New("sandbox gone")}, 2},
		{grading.Passed, errors.New("saving progress: disk full"), 2},
	}
	for _, tt := range tests {
		err := verdictError(tt.v, tt.err)
		code := 0
		var exit *ExitError
		if errors.As(err, &exit) {
			code = exit.Code
		} else if err != nil {
			code = -1
		}
		if code != tt.code {
			t.Errorf("verdictError(%v, %v) exits %d, want %d", tt.v, tt.err, code, tt.code)
		}
		if tt.err != nil && !errors.Is(err, tt.err) {
			t.Errorf("verdictError(%v, %v) lost the error: %v", tt.v, tt.err, err)
		}
	}
}

func TestGradeRejectsUnknownFormat(t *testing.T) {
	isolate(t)
	code, out, errOut := runLabctl(t, "grade", "-o", "yaml")
	if code != 2 || out != "" || !strings.Contains(errOut, `unknown format "yaml": use text, json or junit`) ||
		!strings.Contains(errOut, "labctl grade --help") {
		t.Errorf("grade -o yaml: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The old --output FILE now names a format: the message says where the file went.
	code, _, errOut = runLabctl(t, "grade", "--output", "report.xml")
	if code != 2 || !strings.Contains(errOut, "--output-file PATH") {
		t.Errorf("grade --output report.xml: exit %d, stderr %q", code, errOut)
	}
}

func TestResetRejectsUnknownStepBeforeTouchingAnything(t *testing.T) {
	isolate(t)
	env := &fakeEnv{}
	code, _, errOut := runFake(t, env, "reset", "--to", "no-such-step")
	if code != 2 || !strings.Contains(errOut, `no step "no-such-step"`) || !strings.Contains(errOut, "init-repo") {
		t.Errorf("reset --to no-such-step: exit %d, stderr %q", code, errOut)
	}
	if len(env.calls) != 0 {
		t.Errorf("the environment was touched: %v", env.calls)
	}
}

func TestCheckTakesAtMostOneStep(t *testing.T) {
	isolate(t)
	code, _, errOut := runLabctl(t, "check", "a", "b")
	if code != 2 || !strings.Contains(errOut, "accepts at most 1 arg") {
		t.Errorf("check a b: exit %d, stderr %q", code, errOut)
	}
}
