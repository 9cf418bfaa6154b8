package grading

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// rootChecker runs checks with the real check engine against a directory
// standing in for the sandbox's file system, with the round's step-start
// heads, as the grader does.
type rootChecker struct{ root string }

func (c rootChecker) RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	env := checks.Env{Root: c.root, Heads: map[*lab.GitCheck]string{}}
	for i, ch := range r.Checks {
		if ch.Git != nil && i < len(r.Heads) {
			env.Heads[ch.Git] = r.Heads[i]
		}
	}
	return checks.Run(ctx, env, r.Checks), nil
}

// The GitOps lab's shape: a step that commits, one that works outside the
// repository (apply), and one whose commit must be new in it.
const commitsLab = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: commits
  title: Commits
steps:
  - id: commit
    title: Commit
    instructions: Commit the manifest.
    solve: "true"
    checks:
      - name: tracked
        git: {repo: /root/repo, tracked: [app.yaml]}
  - id: apply
    title: Apply
    instructions: Apply it.
    solve: "true"
    checks:
      - name: applied
        file: {path: /root/applied.txt, notInside: /root/repo}
  - id: change
    title: Change
    instructions: Change it in a new commit.
    solve: "true"
    checks:
      - name: changed
        git: {repo: /root/repo, field: {file: app.yaml, path: replicas, equals: 3}}
      - name: commit-on-top
        git: {repo: /root/repo, since: step, commits: {min: 1}}
`

// commitsGrader is a Grader of commitsLab whose sandbox is a temp root
// with an empty repository at /root/repo, and a function that runs git
// in it.
func commitsGrader(t *testing.T) (*Grader, func(args ...string)) {
	t.Helper()
	l, err := lab.Parse("lab.yaml", []byte(commitsLab))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "root/repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=Lab", "GIT_AUTHOR_EMAIL=lab@example.com",
			"GIT_COMMITTER_NAME=Lab", "GIT_COMMITTER_EMAIL=lab@example.com"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q", "-b", "main")
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return &Grader{
		Lab: l, Digest: "sha256:c", Store: progress.NewStore(t.TempDir()),
		Checker: rootChecker{root}, Catalog: msg.New(msg.English),
		Out: &bytes.Buffer{}, Err: &bytes.Buffer{},
		Now: func() time.Time { clock = clock.Add(time.Second); return clock },
	}, git
}

// learner does, in the temp root, what the commitsLab steps ask.
type learner struct {
	t   *testing.T
	g   *Grader
	git func(args ...string)
}

func (w learner) write(name, text string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.g.Checker.(rootChecker).root, name), []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// commitManifest is step commit's work, scale step change's.
func (w learner) commitManifest() {
	w.write("root/repo/app.yaml", "replicas: 2\n")
	w.git("add", "app.yaml")
	w.git("commit", "-q", "-m", "Add the manifest")
}

func (w learner) apply() { w.write("root/applied.txt", "applied\n") }

func (w learner) scale() {
	w.write("root/repo/app.yaml", "replicas: 3\n")
	w.git("commit", "-q", "-am", "Scale to 3 replicas")
}

// check runs labctl check and returns its verdict and output.
func (w learner) check() (Verdict, string) {
	w.t.Helper()
	out := w.g.Out.(*bytes.Buffer)
	out.Reset()
	v, err := w.g.Check(context.Background(), "")
	if err != nil {
		w.t.Fatal(err)
	}
	return v, out.String()
}

func (w learner) current() string {
	w.t.Helper()
	p, err := w.g.Store.Load("commits")
	if err != nil {
		w.t.Fatal(err)
	}
	cur, _ := p.CurrentStep(w.g.Lab)
	if cur == nil {
		return ""
	}
	return cur.ID
}

func newLearner(t *testing.T) learner {
	g, git := commitsGrader(t)
	return learner{t: t, g: g, git: git}
}

// A learner who works outside labctl's shell does the apply step and the
// change step's commit before checking, then checks twice: the step
// before the change passes in the round that first sees the commit, and
// the change's commit still counts, being made after the step that
// commits in the repository passed.
func TestCommitAheadOfTheCheckCounts(t *testing.T) {
	w := newLearner(t)
	w.commitManifest()
	if v, out := w.check(); v != Passed {
		t.Fatalf("step commit: %v\n%s", v, out)
	}
	w.apply()
	w.scale()
	if v, out := w.check(); v != Passed || w.current() != "change" {
		t.Fatalf("step apply: %v, now at %q\n%s", v, w.current(), out)
	}
	if v, out := w.check(); v != Passed {
		t.Errorf("step change, its commit made before the apply step was checked: %v, want passed\n%s", v, out)
	}
}

// A commit made while an earlier step that commits in the repository was
// current is that step's, never the later step's: a learner who makes the
// change step's commit during the commit step, avoiding labctl's shell,
// fails the change step's since check.
func TestCommitBeforeTheStepBeganDoesNotCount(t *testing.T) {
	w := newLearner(t)
	w.commitManifest()
	w.scale()
	if v, out := w.check(); v != Passed {
		t.Fatalf("step commit: %v\n%s", v, out)
	}
	w.apply()
	if v, out := w.check(); v != Passed || w.current() != "change" {
		t.Fatalf("step apply: %v, now at %q\n%s", v, w.current(), out)
	}
	v, out := w.check()
	if v != Failed || !strings.Contains(out, "✗ commit-on-top") {
		t.Errorf("step change with its commit made during step commit: %v, want commit-on-top failed\n%s", v, out)
	}
}

// A step whose start labctl never saw (a progress that does not say where
// the repository was, as after its noting failed) cannot fail a learner
// whose commit may be the step's: the check says it cannot tell and what
// to do, the round is not counted, and a new commit then passes.
func TestStartNeverSeenCannotTell(t *testing.T) {
	w := newLearner(t)
	w.commitManifest()
	w.apply()
	w.scale()
	// The learner's labctl saw steps commit and apply pass, but never where
	// the repository was (an older labctl, or a grader that did not answer).
	ctx := context.Background()
	if err := w.g.Store.Update(ctx, "commits", func(p *progress.Progress) error {
		for _, id := range []string{"commit", "apply"} {
			if _, err := p.Record(w.g.Lab, id, true, time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)); err != nil {
				return err
			}
		}
		p.Heads = nil
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	v, out := w.check()
	if v != Errored || !strings.Contains(out, "cannot tell which commits") || !strings.Contains(out, "make this step's commit now") {
		t.Fatalf("step change begun unseen: %v, want could not tell\n%s", v, out)
	}
	if p, _ := w.g.Store.Load("commits"); p.Attempts["change"] != 0 {
		t.Errorf("a round that could not tell counted as an attempt: %d", p.Attempts["change"])
	}
	w.write("root/repo/NOTES", "scaled\n")
	w.git("add", "NOTES")
	w.git("commit", "-q", "-m", "Note the scale")
	if v, out := w.check(); v != Passed {
		t.Errorf("step change after a new commit: %v, want passed\n%s", v, out)
	}
}

// The attack through a start never seen: the change step's commit made
// during the commit step, the progress without heads. The check cannot
// tell, so the step does not pass.
func TestStartNeverSeenDoesNotCountAnEarlierCommit(t *testing.T) {
	w := newLearner(t)
	w.commitManifest()
	w.scale()
	w.apply()
	if err := w.g.Store.Update(context.Background(), "commits", func(p *progress.Progress) error {
		for _, id := range []string{"commit", "apply"} {
			if _, err := p.Record(w.g.Lab, id, true, time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if v, out := w.check(); v == Passed {
		t.Errorf("step change with its commit made before it began, its start unseen: passed\n%s", out)
	}
}

// auditClock judges each audit check by the learner's requests it was
// told of: the check passes when one of its name was made at or after the
// start of its window (Round.Since; none, the whole log), as the real
// audit check does. Other checks pass.
type auditClock struct {
	made map[string][]time.Time
	// failing are the checks without an audit that fail.
	failing map[string]bool
	rounds  int
}

func (a *auditClock) RunChecks(_ context.Context, r checks.Round) ([]checks.Result, error) {
	a.rounds++
	out := make([]checks.Result, len(r.Checks))
	for i, c := range r.Checks {
		out[i] = checks.Result{Name: c.Name, Status: checks.Pass}
		if c.Audit == nil {
			if a.failing[c.Name] {
				out[i].Status, out[i].Message = checks.Fail, "not done"
			}
			continue
		}
		var from time.Time
		if i < len(r.Since) {
			from = r.Since[i]
		}
		out[i].Status, out[i].Message = checks.Fail, "no request since "+from.String()
		for _, t := range a.made[c.Name] {
			if !t.Before(from) {
				out[i].Status, out[i].Message = checks.Pass, ""
			}
		}
	}
	return out, nil
}

// An audit check of a step is judged from when labctl saw it begin: the
// step before passing. What the learner did for it while the step before
// was current, as one who works outside labctl's shell does before
// checking, cannot be told the step's work, nor a failure: the check says
// it cannot tell and asks for it again, and the round is not counted. What
// was done before the step before began is a plain failure, and the step
// passes once done again.
func TestAuditBeforeTheStepWasSeenToBegin(t *testing.T) {
	apply := lab.Check{Name: "applied", Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Verbs: []string{"apply"}, Resource: "deployments"}}}
	again := lab.Check{Name: "applied-again", Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Verbs: []string{"apply"}, Resource: "deployments", Name: "web"}}}
	ac := &auditClock{made: map[string][]time.Time{}}
	s, out := newGrader(t, ac)
	s.Lab.Steps = []lab.Step{
		{ID: "one", Checks: []lab.Check{{Name: "a"}}},
		{ID: "two", Checks: []lab.Check{{Name: "b"}, apply}},
		{ID: "three", Checks: []lab.Check{{Name: "c"}, again}},
	}
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return clock }
	ctx := context.Background()
	check := func() Verdict {
		t.Helper()
		out.Reset()
		v, err := s.Check(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	// Step three's request made while step one was current.
	ac.made["applied-again"] = []time.Time{clock.Add(-time.Minute)}
	if v := check(); v != Passed {
		t.Fatalf("step one: %v\n%s", v, out)
	}
	clock = clock.Add(time.Minute)
	ac.made["applied"] = []time.Time{clock}
	clock = clock.Add(time.Minute)
	if v := check(); v != Passed {
		t.Fatalf("step two: %v\n%s", v, out)
	}
	clock = clock.Add(time.Minute)
	if v := check(); v != Failed || !strings.Contains(out.String(), "✗ applied-again") {
		t.Fatalf("step three, its request made before step two began: %v, want a failure\n%s", v, out)
	}

	// Step three's request made while step two was current, checked after.
	ac.made["applied-again"] = append(ac.made["applied-again"], clock.Add(-2*time.Minute+time.Second))
	// While the rest of step three fails, its work is not done: the
	// request made while step two was current is step two's, and the
	// audit check fails as it reads, never "could not tell".
	ac.failing = map[string]bool{"c": true}
	if v := check(); v != Failed || !strings.Contains(out.String(), "✗ applied-again") {
		t.Fatalf("step three not done, its audit met by step two's request: %v, want a failure\n%s", v, out)
	}
	ac.failing = nil
	p, _ := s.Store.Load(s.Lab.Metadata.Name)
	attempts := p.Attempts["three"]
	if v := check(); v != Errored || !strings.Contains(out.String(), "cannot tell whether this was done in this step") || !strings.Contains(out.String(), "kubectl apply --server-side always does") {
		t.Fatalf("step three, its request made while step two was current: %v, want could not tell\n%s", v, out)
	}
	if p, _ := s.Store.Load(s.Lab.Metadata.Name); p.Attempts["three"] != attempts {
		t.Errorf("a round that could not tell counted as an attempt: %d, was %d", p.Attempts["three"], attempts)
	}
	clock = clock.Add(time.Minute)
	ac.made["applied-again"] = append(ac.made["applied-again"], clock)
	if v := check(); v != Passed {
		t.Errorf("step three done again: %v\n%s", v, out)
	}
}
