package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/labctl/labctl/checks"
)

// RunChecker runs one checker round in the container: the static binary at
// checkerPath is copied in under a fresh random directory, run once as
// `labctl __check` with req on stdin and a cleared environment, and removed.
// When ctx ends first, every check is reported as an error: the checker's
// partial output is not trusted.
func (e *Engine) RunChecker(ctx context.Context, containerName, checkerPath string, req checks.Request) (checks.Response, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return checks.Response{}, fmt.Errorf("encoding the check request: %w", err)
	}
	round, err := e.runChecker(ctx, containerName, checkerPath, []string{"__check"}, in)
	if err != nil {
		return checks.Response{}, err
	}
	if round.Overran {
		return allErrors(req, fmt.Sprintf("the checker did not finish before its deadline (%v)", ctx.Err())), nil
	}
	return decodeResponse(req, round)
}

// decodeResponse reads the checker's answer, which must hold one result per
// requested check, in order.
func decodeResponse(req checks.Request, round CheckerRound) (checks.Response, error) {
	if round.ExitCode != 0 {
		return checks.Response{}, fmt.Errorf("the checker exited with status %d: %s", round.ExitCode, firstLines(round.Stderr))
	}
	var resp checks.Response
	dec := json.NewDecoder(bytes.NewReader(round.Stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&resp); err != nil {
		return checks.Response{}, fmt.Errorf("reading the checker's answer: %w (stderr: %s)", err, firstLines(round.Stderr))
	}
	if len(resp.Results) != len(req.Checks) {
		return checks.Response{}, fmt.Errorf("the checker answered %d results for %d checks", len(resp.Results), len(req.Checks))
	}
	for i, r := range resp.Results {
		if r.Name != req.Checks[i].Name {
			return checks.Response{}, fmt.Errorf("the checker's result %d is for %q, not %q", i, r.Name, req.Checks[i].Name)
		}
	}
	return resp, nil
}

// allErrors reports every requested check as an error with msg.
func allErrors(req checks.Request, msg string) checks.Response {
	resp := checks.Response{Results: make([]checks.Result, 0, len(req.Checks))}
	for _, c := range req.Checks {
		resp.Results = append(resp.Results, checks.Result{
			Name: c.Name, Description: c.Description, Status: checks.Error,
			Message: msg, Points: c.Points, Optional: c.Optional,
		})
	}
	return resp
}

func firstLines(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	if s == "" {
		return "(nothing)"
	}
	return s
}
