// Package checks owns grading: every check kind of a lab (lab.Check), the
// engine that runs them concurrently under deadlines, their pass/fail/error
// results, and the stdin/stdout protocol of the checker (labctl's hidden
// `__check`), which runs in the grader, beside the sandbox and out of the
// learner's reach, where the learner's home and fixtures are read-only at
// the sandbox's paths (an invited learner's own labctl runs it in their
// sandbox instead, for feedback only). provision.RunChecker runs it.
//
// A check passes when the requirement is met, fails when the learner's work
// does not meet it (a missing file the check needs is a failure), and ends in
// error when it could not run at all: a timeout, an unreachable cluster, or a
// broken check (an invalid regular expression or reference) that is the lab
// author's to fix.
//
// It also owns the round as the host sees it, the one way every command
// runs checks: RunRound (its deadline, RoundTimeout, from DefaultTimeout and
// the engine's concurrency, and Reconcile, the results held to the
// request, once), ReadResponse (the checker's answer read strictly, in
// provision.RunChecker), and Summarize
// with Summary.Verdict, the one rule that says whether a step passed.
package checks

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// DefaultTimeout bounds a check that sets no timeout.
const DefaultTimeout = 10 * time.Second

// cancelGrace is how long a check may take to stop after its deadline
// before Run stops waiting for it.
const cancelGrace = 2 * time.Second

// maxConcurrent bounds how many checks run at once.
const maxConcurrent = 8

// ObjectReader reads one Kubernetes object as its unstructured map. A
// missing object is an error satisfying apierrors.IsNotFound; a kind the
// cluster does not serve is an error satisfying meta.IsNoMatchError.
type ObjectReader interface {
	Get(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error)
}

// Env is what checks read: the file system under Root, the cluster through
// Kube, and the clock.
type Env struct {
	// Root is "/" where the checker runs (the grader, which sees the
	// learner's files at the sandbox's paths); every absolute path of a
	// lab (files, repositories, references, command directories) is
	// resolved under it, symbolic links included.
	Root string
	// Areas are lab paths of directories that hold the learner's files
	// besides the top-level directory each checked path names (the lab's
	// work and fixtures directories); see resolveLearnerPath.
	Areas []string
	// Sandbox holds the paths of the sandbox the host read for file checks
	// outside the grader's mounts, by the path as the check names it; a
	// file check of such a path judges what is here (see
	// sandbox_files.go).
	Sandbox map[string]*SandboxFile
	// Repos holds the repositories of the sandbox outside the grader's
	// mounts that the host read for git checks and git: references, by
	// the path as the check names it (see sandbox_repo.go).
	Repos map[string]*SandboxRepo
	// Kube reads cluster objects; nil makes every kube check an error.
	Kube ObjectReader
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Audit is the API server's audit log for audit checks; nil makes
	// every audit check an error.
	Audit *AuditSource
	// Lang is the language of the results' messages; "" means English.
	Lang msg.Lang
	// Zone is the learner's time zone, for the times messages show; nil
	// is UTC.
	Zone *time.Location
	// ProbeStart is when the step's probe started; zero when no probe ran.
	ProbeStart time.Time
	// Heads gives git checks with since: step the commit their repository
	// was at when their step began (Request.Heads); a check missing here
	// was not seen to begin.
	Heads map[*lab.GitCheck]string
	// ReachImage is the image reach checks start their Pods from, present
	// on the cluster's nodes; empty makes every reach check an error.
	ReachImage string
	// cells is where a matrix check leaves what it found of each cell
	// (Result.Cells): each check's own, set by runOne.
	cells *map[string]CellAnswer
}

func (e Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// Run runs cs, at most eight at a time, each under its own deadline
// (Check.Timeout, default 10s), and returns their results in the order of
// cs. A check that overruns its deadline is reported as an error at the
// deadline, whether or not it has stopped yet.
func Run(ctx context.Context, env Env, cs []lab.Check) []Result {
	results := make([]Result, len(cs))
	sem := make(chan struct{}, maxConcurrent)
	var wg sync.WaitGroup
	for i := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				results[i] = newResult(cs[i], Error, msg.New(env.Lang).Render(msg.T(msg.NotRun, ctx.Err())), 0)
				return
			}
			results[i] = runOne(ctx, env, cs[i])
		}()
	}
	wg.Wait()
	return results
}

func newResult(c lab.Check, s Status, msg string, d time.Duration) Result {
	points := c.Points
	if points == 0 {
		points = 1
	}
	return Result{
		Name: c.Name, Description: c.Description, Status: s, Message: msg,
		Duration: d, Points: points, Optional: c.Optional,
	}
}

// checkTimeout is c's deadline: its own, else the default of its kind (a
// reach check starts a Pod first: lab.DefaultReachTimeout).
func checkTimeout(c lab.Check) time.Duration {
	switch {
	case c.Timeout.Duration > 0:
		return c.Timeout.Duration
	case c.Reach != nil || c.Matrix != nil:
		return lab.DefaultReachTimeout
	}
	return DefaultTimeout
}

// runOne runs one check in its own goroutine and stops waiting for it at
// its deadline, so a check stuck in a call that ignores its context cannot
// hold up the others.
func runOne(ctx context.Context, env Env, c lab.Check) Result {
	timeout := checkTimeout(c)
	cat := msg.New(env.Lang)
	cat.Zone = env.Zone
	start := env.now()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// A matrix check leaves what it found of each cell here.
	var cells map[string]CellAnswer
	env.cells = &cells
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("check panicked: %v", p)
			}
		}()
		done <- evaluate(cctx, env, c)
	}()

	select {
	case err := <-done:
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			// Only the check's own deadline is "timed out after"; a
			// request that ran out of its own bound before it is named.
			if cctx.Err() == nil {
				return newResult(c, Error, cat.Render(msg.T(msg.CallTimedOut, err)), env.now().Sub(start))
			}
			return newResult(c, Error, cat.Render(msg.T(msg.TimedOut, timeout)), env.now().Sub(start))
		}
		s, text := outcomeIn(err, cat)
		r := newResult(c, s, text, env.now().Sub(start))
		if s != Error {
			r.Cells = cells
		}
		return r
	case <-cctx.Done():
	}
	// Give the check a moment to wind down (a command check kills its
	// process group), then stop waiting for it.
	grace := time.NewTimer(cancelGrace)
	select {
	case <-done:
	case <-grace.C:
	}
	grace.Stop()
	elapsed := env.now().Sub(start)
	if ctx.Err() != nil {
		return newResult(c, Error, cat.Render(msg.T(msg.NotFinished, ctx.Err())), elapsed)
	}
	return newResult(c, Error, cat.Render(msg.T(msg.TimedOut, timeout)), elapsed)
}

// evaluate dispatches a check to its kind.
func evaluate(ctx context.Context, env Env, c lab.Check) error {
	n := 0
	for _, set := range []bool{c.File != nil, c.Git != nil, c.Kube != nil, c.Access != nil, c.Permissions != nil, c.Reach != nil, c.Matrix != nil, c.Command != nil, c.Audit != nil, c.Service != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("check %q sets %d of file, git, kube, access, permissions, reach, matrix, command, audit and service; set exactly one", c.Name, n)
	}
	if c.Service != nil {
		// A node's processes are listed by the container engine on the host
		// (provision), never from inside the sandbox or the grader.
		return fmt.Errorf("check %q looks at a service of node %s, which only labctl judges, from the host; this checker cannot", c.Name, c.Service.Node)
	}
	if env.Root == "" || !filepath.IsAbs(env.Root) {
		return fmt.Errorf("checker root %q is not an absolute path", env.Root)
	}
	switch {
	case c.File != nil:
		return checkFile(ctx, env, c.File)
	case c.Git != nil:
		return checkGit(ctx, env, c.Git)
	case c.Kube != nil:
		return checkKube(ctx, env, c.Kube)
	case c.Access != nil:
		return checkAccess(ctx, env, c.Access)
	case c.Permissions != nil:
		return checkPermissions(ctx, env, c.Permissions)
	case c.Reach != nil:
		return checkReach(ctx, env, c.Reach)
	case c.Matrix != nil:
		return checkMatrix(ctx, env, c.Matrix)
	case c.Audit != nil:
		return checkAudit(ctx, env, c.Audit)
	default:
		return checkCommand(ctx, env, c.Command)
	}
}
