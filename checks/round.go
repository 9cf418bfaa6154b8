package checks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// roundSlack covers placing the checker and starting it.
const roundSlack = 30 * time.Second

// RoundTimeout bounds one checker round of cs: the checker runs
// maxConcurrent checks at once, each within its own timeout (DefaultTimeout
// when unset), plus the time to start it. Every caller that runs a round
// uses this one bound.
func RoundTimeout(cs []lab.Check) time.Duration {
	longest := DefaultTimeout
	for _, c := range cs {
		longest = max(longest, checkTimeout(c))
	}
	waves := (len(cs) + maxConcurrent - 1) / maxConcurrent
	return time.Duration(waves)*(longest+cancelGrace) + roundSlack
}

// MaxAnswer bounds the checker's answer the host reads: a message per check
// is short, and an answer beyond this is not the checker's.
const MaxAnswer = 8 << 20

// ReadResponse reads the checker's answer from out, strictly: out holds
// exactly one JSON value of the answer's fields and nothing after it (white
// space aside). It trusts nothing else in it: RunRound, which every round
// runs through, holds the results to the request (Reconcile), so that a
// result's description, points and optional flag are the host's, never the
// answer's.
func ReadResponse(out []byte) ([]Result, error) {
	if len(out) > MaxAnswer {
		return nil, fmt.Errorf("the checker's answer is %d bytes, more than the %d an answer can be", len(out), MaxAnswer)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	var resp Response
	if err := dec.Decode(&resp); err != nil {
		return nil, fmt.Errorf("reading the checker's answer: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("reading the checker's answer: more data follows its one JSON value")
	}
	return resp.Results, nil
}

// Reconcile checks that rs answers cs — one result per check, in order,
// named as requested, with a known status — and returns the results with
// the host's own description, points and optional flag of each check.
func Reconcile(cs []lab.Check, rs []Result) ([]Result, error) {
	if len(rs) != len(cs) {
		return nil, fmt.Errorf("the checker answered %d results for %d checks", len(rs), len(cs))
	}
	out := make([]Result, len(rs))
	for i, r := range rs {
		c := cs[i]
		if r.Name != c.Name {
			return nil, fmt.Errorf("the checker answered result %d for %q where check %q was asked", i+1, r.Name, c.Name)
		}
		switch r.Status {
		case Pass, Fail, Error:
		default:
			return nil, fmt.Errorf("the checker answered status %q for check %q (want pass, fail or error)", r.Status, c.Name)
		}
		if r.Duration < 0 {
			r.Duration = 0
		}
		r.Description, r.Points, r.Optional = c.Description, max(c.Points, 1), c.Optional
		out[i] = r
	}
	return out, nil
}

// Round is one checker round as the host asks for it: the checks, and what
// the host knows about them that the checker cannot. The caller fills it
// from the one reading of the learner's progress its round makes.
type Round struct {
	Checks []lab.Check
	// ProbeStart, when set, is when the step's probe started: the round
	// judges the probe's run (Request.ProbeStart). grading.RunStep, which
	// runs the probe, sets it.
	ProbeStart time.Time
	// Windows is what the host knows of when each check's step began.
	Windows
	// Lang, when set, is the language of the results' messages: the one
	// the learner reads the lab in (Request.Lang). "" leaves it to the
	// runner.
	Lang msg.Lang
}

// Windows is what the host knows of when the checks of a round began, by
// position in its checks.
type Windows struct {
	// Since gives the start of each check's audit window (progress's
	// AuditWindows): nil, or a zero time, is the whole log
	// (Request.Since).
	Since []time.Time
	// Heads gives each git check that counts commits since its step began
	// where its repository was then (progress's StepHeads;
	// Request.Heads).
	Heads []string
	// Marks gives each audit check whose step's start the host did not
	// see that step, whose earliest mark in the log then begins the
	// window (progress's MarkSteps; Request.MarkSteps).
	Marks []string
}

// Keep appends to w what of from is at position i, for a round made of a
// part of from's checks: a zero value where from is shorter, and nothing
// for a window from does not give.
func (w *Windows) Keep(from Windows, i int) {
	w.Since = keepAt(w.Since, from.Since, i, time.Time{})
	w.Heads = keepAt(w.Heads, from.Heads, i, "")
	w.Marks = keepAt(w.Marks, from.Marks, i, "")
}

func keepAt[T any](dst, src []T, i int, zero T) []T {
	switch {
	case src == nil:
		return dst
	case i < len(src):
		return append(dst, src[i])
	default:
		return append(dst, zero)
	}
}

// RunRound runs the round r through run, the one way every caller runs a
// round: with RoundTimeout's deadline (or ctx's, if sooner), and with what
// run returns held to the request by Reconcile, whatever run is: the
// checker's answer as the live lab read it (ReadResponse), a merge with
// results of the host's own (an invite's practice), a test's fake. This is
// the one place a round's results are held to it.
func RunRound(ctx context.Context, r Round, run func(context.Context, Round) ([]Result, error)) ([]Result, error) {
	if len(r.Checks) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, RoundTimeout(r.Checks))
	defer cancel()
	rs, err := run(ctx, r)
	if err != nil {
		return nil, err
	}
	return Reconcile(r.Checks, rs)
}
