package provision

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// MarkStep marks, on a runtime without a grader (an invite), that step
// began: the learner's labctl asks the learner's API server the question
// the class's audit log keeps as the step's start (checks.MarkStep), so
// that the instructor's grade begins the step's audit window there (the
// earliest mark counts: a step marked already is not asked again). The
// instructor's own record needs no mark: elsewhere it does nothing.
func (e *Live) MarkStep(ctx context.Context, step string) error {
	if e.feat.Practice == nil {
		return nil
	}
	e.marks.mu.Lock()
	defer e.marks.mu.Unlock()
	if e.marks.step == step {
		return nil
	}
	rs, err := checks.RunRound(ctx, checks.Round{Checks: []lab.Check{checks.MarkStep(step)}}, e.RunChecks)
	if err != nil {
		return err
	}
	if rs[0].Status != checks.Pass {
		return fmt.Errorf("marking the start of step %s: %s", step, rs[0].Message)
	}
	e.marks.step = step
	return nil
}

// RunChecks runs the round r in one checker round where the learner cannot
// reach it, until ctx ends: callers run it through checks.RunRound, which
// sets the round's deadline and holds the checker's answer to the request.
// The round carries the probe's start and the audit windows the caller
// took from the progress it read; the live lab reads no progress itself.
// On a runtime without a grader (an invite) the checks run in the sandbox
// with the learner's own credentials, for feedback, and no audit log:
// grading.PracticeChecker keeps from it those only the instructor's grader
// judges.
func (e *Live) RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	cs := r.Checks
	if len(cs) == 0 {
		return nil, nil
	}
	if slices.ContainsFunc(cs, func(c lab.Check) bool { return nodeCheck(&c) }) {
		return e.runSplit(ctx, r)
	}
	req := checks.Request{Root: "/", Areas: e.areas(), Lang: r.Lang, Zone: checks.LocalZone()}
	if req.Lang == "" {
		req.Lang = msg.Choose(e.Lab.Metadata.Language, os.Getenv)
	}
	if !r.ProbeStart.IsZero() {
		start := r.ProbeStart
		req.ProbeStart = &start
	}
	req.Checks, req.Heads = cs, r.Heads
	switch {
	case !e.Lab.HasCluster():
		// No API server: the lab's checks read the sandbox only (lab
		// validation refuses the others), so the grader gets no token.
	case e.feat.Practice != nil:
		kube, err := e.feat.Practice(ctx)
		if err != nil {
			return nil, err
		}
		req.Kube = kube
	default:
		kube, err := e.GraderCredentials(ctx)
		if err != nil {
			return nil, err
		}
		req.Kube = kube
		if dir := e.rt.AuditDir(); dir != "" {
			req.AuditDir, req.Since, req.MarkSteps = dir, r.Since, r.Marks
		}
	}
	if e.feat.Practice == nil {
		// The checker of an invite runs in the sandbox and reads its files
		// itself; a grader reads those outside its mounts through the host.
		req.Sandbox, req.Repos = e.sandboxFiles(ctx, cs)
	}
	return RunChecker(ctx, req, e.rt.ExecChecker)
}

// MaxSandboxRead bounds what one round reads of the sandbox's files outside
// the grader's mounts: the files go to the checker in its request.
const MaxSandboxRead = 16 << 20

// ErrNoSandboxReads says a runtime cannot read the sandbox's files outside
// the learner's home and the fixtures.
const ErrNoSandboxReads = "this runtime's grader reads only the learner's home (/root) and the lab's fixtures of the sandbox: a class does not yet read other paths of the sandbox; check a file or repository under /root instead"

// sandboxFiles reads, for the file checks of cs that the grader does not
// see, their paths from the sandbox (checks.ReadSandbox), and for its git
// checks and git: references, the repositories the grader does not see
// (checks.ReadSandboxRepo), at most MaxSandboxRead in all.
func (e *Live) sandboxFiles(ctx context.Context, cs []lab.Check) (files, repos []checks.SandboxFile) {
	total := 0
	read := func(paths []string, r func(context.Context, checks.SandboxFS, string) checks.SandboxFile) []checks.SandboxFile {
		if len(paths) == 0 {
			return nil
		}
		out := make([]checks.SandboxFile, 0, len(paths))
		for _, p := range paths {
			if e.feat.SandboxFS == nil {
				out = append(out, checks.SandboxFile{Path: p, State: checks.SandboxError, Err: ErrNoSandboxReads})
				continue
			}
			f := r(ctx, e.feat.SandboxFS(), p)
			if total += len(f.Data); total > MaxSandboxRead {
				f = checks.SandboxFile{Path: p, State: checks.SandboxError, Err: fmt.Sprintf(
					"the round's checks read more than %d MiB of the sandbox's files outside /root; split them over several steps", MaxSandboxRead>>20)}
			}
			out = append(out, f)
		}
		return out
	}
	files = read(e.Lab.FileChecksOutside(cs), checks.ReadSandbox)
	repos = read(e.Lab.RepoChecksOutside(cs), checks.ReadSandboxRepo)
	return files, repos
}

// areas are the directories of the learner's files a check may follow a
// link into: the home, the work directory and the fixtures.
func (e *Live) areas() []string {
	areas := []string{lab.DefaultWorkDir}
	for _, d := range []string{e.workDir(), e.fixturesDir()} {
		if !slices.Contains(areas, d) {
			areas = append(areas, d)
		}
	}
	return areas
}

// runSplit runs a round some of whose checks read a node's files: those
// on the host (runNodeChecks), the others in one checker round, each with
// what r knows of it; the results in r's order.
func (e *Live) runSplit(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	sub := r
	sub.Checks, sub.Since, sub.Heads, sub.Marks = nil, nil, nil, nil
	var onNode []lab.Check
	for i := range r.Checks {
		c := r.Checks[i]
		if nodeCheck(&c) {
			onNode = append(onNode, c)
			continue
		}
		sub.Checks = append(sub.Checks, c)
		sub.Windows.Keep(r.Windows, i)
	}
	lang := r.Lang
	if lang == "" {
		lang = msg.Choose(e.Lab.Metadata.Language, os.Getenv)
	}
	nodeResults := e.runNodeChecks(ctx, onNode, lang)
	var got []checks.Result
	if len(sub.Checks) > 0 {
		var err error
		if got, err = e.RunChecks(ctx, sub); err != nil {
			return nil, err
		}
	}
	results := make([]checks.Result, 0, len(r.Checks))
	for i := range r.Checks {
		if nodeCheck(&r.Checks[i]) {
			results, nodeResults = append(results, nodeResults[0]), nodeResults[1:]
			continue
		}
		if len(got) == 0 {
			return nil, fmt.Errorf("the checker answered fewer results than checks")
		}
		results, got = append(results, got[0]), got[1:]
	}
	return results, nil
}
