package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/labctl/labctl/checks"
)

// RunChecker runs one checker round in the grader container: the static
// binary at checkerPath is placed under a fresh name on the grader's
// read-only checker mount, run once as `labctl __check` with req on stdin
// and a cleared environment, and removed. When ctx ends first, every check
// is reported as an error: the checker's partial output is not trusted.
// The answer is read by checks.ReadResponse, which keeps only what the
// checker alone can know.
func (e *Engine) RunChecker(ctx context.Context, graderName, checkerPath string, req checks.Request) (checks.Response, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return checks.Response{}, fmt.Errorf("encoding the check request: %w", err)
	}
	round, err := e.runChecker(ctx, graderName, checkerPath, []string{"__check"}, in)
	if err != nil {
		return checks.Response{}, err
	}
	if round.Overran {
		return allErrors(req, fmt.Sprintf("the checker did not finish before its deadline (%v)", ctx.Err())), nil
	}
	if round.ExitCode != 0 {
		return checks.Response{}, WithDetail(fmt.Errorf("the checker exited with status %d: %s", round.ExitCode, FirstLine(round.Stderr)), round.Stderr)
	}
	rs, err := checks.ReadResponse(req.Checks, round.Stdout)
	if err != nil {
		return checks.Response{}, err
	}
	return checks.Response{Results: rs}, nil
}

// allErrors reports every requested check as an error with msg.
func allErrors(req checks.Request, msg string) checks.Response {
	return checks.Response{Results: checks.ErrorResults(req.Checks, msg)}
}

// FirstLine is the first non-empty line of a process's error output, at
// most 300 bytes: enough to say what went wrong, never a Go runtime's
// goroutine dump.
func FirstLine(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(line) > 300 {
			line = line[:300] + "…"
		}
		return line
	}
	return "(nothing on stderr)"
}
