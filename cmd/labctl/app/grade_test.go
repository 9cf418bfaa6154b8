package app

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/labctl/labctl/internal/grading"
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

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	var out, errOut bytes.Buffer
	code := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}, args)
	return code, out.String(), errOut.String()
}

func TestGradeRejectsUnknownFormat(t *testing.T) {
	code, out, errOut := run(t, "grade", "-o", "yaml")
	if code != 2 || out != "" || !strings.Contains(errOut, `unknown report format "yaml": use text, json or junit`) {
		t.Errorf("grade -o yaml: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestResetRejectsUnknownStepBeforeTouchingAnything(t *testing.T) {
	code, _, errOut := run(t, "reset", "--to", "no-such-step")
	if code != 1 || !strings.Contains(errOut, `no step "no-such-step"`) || !strings.Contains(errOut, "init-repo") {
		t.Errorf("reset --to no-such-step: exit %d, stderr %q", code, errOut)
	}
}

func TestCheckTakesAtMostOneStep(t *testing.T) {
	code, _, errOut := run(t, "check", "a", "b")
	if code == 0 || !strings.Contains(errOut, "accepts at most 1 arg") {
		t.Errorf("check a b: exit %d, stderr %q", code, errOut)
	}
}
