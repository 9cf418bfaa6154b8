package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/labctl/labctl/checks"
)

// ExecChecker runs the checker (labctl's hidden `__check`) once with stdin
// as its input and its output to stdout and stderr, until ctx ends, and
// returns its exit code: what a runtime does its own way (Runtime's
// ExecChecker).
type ExecChecker func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error)

// RunChecker runs one checker round of req through exec, the one way every
// runtime's round is run: the request goes on the checker's stdin as JSON;
// its answer is kept up to checks.MaxAnswer and its error output up to
// MaxKept, whatever it prints; a round ctx ends first reports every check
// as an error, since its partial output is not trusted; a checker that
// exits non-zero is an error quoting the first line of its error output,
// escaped (the whole of it, escaped, is the error's detail, for -v); and
// the answer is read strictly by checks.ReadResponse. checks.RunRound, which
// every round runs through, then holds its results to the request, keeping
// only what the checker alone can know. Errors of exec's own are returned
// as they are: they say where it ran.
func RunChecker(ctx context.Context, req checks.Request, exec ExecChecker) ([]checks.Result, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encoding the check request: %w", err)
	}
	answer, errOut := NewKeptOutput(checks.MaxAnswer), NewKeptOutput(MaxKept)
	code, err := exec(ctx, bytes.NewReader(in), answer, errOut)
	if err != nil {
		if ctx.Err() != nil {
			return checks.ErrorResults(req.Checks, fmt.Sprintf("the checker did not finish before its deadline (%v)", ctx.Err())), nil
		}
		return nil, err
	}
	if code != 0 {
		return nil, WithDetail(fmt.Errorf("the checker exited with status %d: %s", code, errOut.FirstLine("(nothing on stderr)")), []byte(errOut.Text()))
	}
	if answer.Cut() {
		return nil, fmt.Errorf("the checker's answer is %d bytes, more than the %d an answer can be", answer.Written(), checks.MaxAnswer)
	}
	return checks.ReadResponse(answer.Bytes())
}
