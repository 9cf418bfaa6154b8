package checks

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// TestCommitsSinceStep: since: step counts the commits made on top of the
// commit the host noted at the step's start, whatever their dates; history
// rewritten under it fails, and a start the host did not see counts every
// commit. ReportHead says where HEAD is.
func TestCommitsSinceStep(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "root/repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	env := Env{Root: root, Heads: map[*lab.GitCheck]string{}}
	run := func(c lab.Check) Result {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return Run(ctx, env, []lab.Check{c})[0]
	}
	head := func() string {
		r := run(ReportHead("/root/repo"))
		if r.Status != Pass {
			t.Fatalf("ReportHead: %s %s", r.Status, r.Message)
		}
		return r.Message
	}
	commit := func(name, text string, extra ...string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		gitBin(t, dir, "add", name)
		gitBin(t, dir, append([]string{"commit", "-q", "-m", "change " + name}, extra...)...)
	}
	since := func(start string, min int) Result {
		gc := &lab.GitCheck{Repo: "/root/repo", Since: lab.SinceStep, Commits: &lab.Range{Min: &min}}
		env.Heads[gc] = start
		return run(lab.Check{Name: "since", Git: gc})
	}

	if got := run(ReportHead("/root/nowhere")); got.Status != Pass || got.Message != HeadAbsent {
		t.Errorf("ReportHead of no repository = %s %q, want pass %q", got.Status, got.Message, HeadAbsent)
	}
	gitBin(t, dir, "init", "-q", "-b", "main")
	if got := head(); got != HeadNone {
		t.Errorf("ReportHead of an empty repository = %q, want %q", got, HeadNone)
	}
	commit("a", "1")
	commit("b", "1")
	tip := strings.TrimSpace(gitBin(t, dir, "rev-parse", "HEAD"))
	start := head()
	if start != tip+" "+tip {
		t.Fatalf("ReportHead = %q, want HEAD then main's commit, both %s", start, tip)
	}

	if r := since(start, 1); r.Status != Fail || !strings.Contains(r.Message, "found 0") {
		t.Errorf("no commit since the start: %s %q, want a fail that found 0", r.Status, r.Message)
	}
	if r := since(HeadNone, 2); r.Status != Pass {
		t.Errorf("from no commit, two commits: %s %q, want pass", r.Status, r.Message)
	}
	if r := since("", 3); r.Status != Fail || !strings.Contains(r.Message, "found 2") {
		t.Errorf("an unseen start counts every commit: %s %q, want a fail that found 2", r.Status, r.Message)
	}
	if r := since(HeadNotBegun, 1); r.Status != Fail || !strings.Contains(r.Message, "has not begun") {
		t.Errorf("a step not begun: %s %q, want a fail saying so", r.Status, r.Message)
	}
	// A start noted late: too few commits since cannot be told a fail; enough
	// pass, counted from it.
	if r := since(HeadLate+" "+start, 1); r.Status != Error || !strings.Contains(r.Message, "cannot tell which commits") || !strings.Contains(r.Message, tip[:7]) {
		t.Errorf("no commit since a late start: %s %q, want could not tell, naming %s", r.Status, r.Message, tip[:7])
	}
	if r := since(HeadLate+" "+HeadNone, 2); r.Status != Pass {
		t.Errorf("two commits since a late start with none: %s %q, want pass", r.Status, r.Message)
	}
	env.Lang = msg.Japanese
	if r := since(HeadLate+" "+start, 1); r.Status != Error || !strings.Contains(r.Message, "判断できません") {
		t.Errorf("no commit since a late start, in Japanese: %s %q, want could not tell", r.Status, r.Message)
	}
	env.Lang = ""

	// An amended start commit: the two-commit history still holds, and a
	// date set in the past changes nothing.
	gitBin(t, dir, "commit", "-q", "--amend", "-m", "rewritten")
	if r := since(start, 1); r.Status != Fail || !strings.Contains(r.Message, "no longer holds it") {
		t.Errorf("after --amend: %s %q, want a fail naming the rewrite", r.Status, r.Message)
	}
	// The rewrite hidden behind a merge that keeps the start as a second
	// parent only.
	gitBin(t, dir, "merge", "-q", "-s", "ours", "--no-edit", tip)
	if r := since(start, 1); r.Status != Fail || !strings.Contains(r.Message, "no longer holds it") {
		t.Errorf("an amend merged with -s ours: %s %q, want a fail", r.Status, r.Message)
	}
	gitBin(t, dir, "reset", "-q", "--hard", tip)
	commit("c", "1", "--date", "2001-01-01T00:00:00")
	if r := since(start, 1); r.Status != Pass {
		t.Errorf("one commit on top, dated 2001: %s %q, want pass", r.Status, r.Message)
	}
	// The learner's own new commit amended is still one new commit.
	gitBin(t, dir, "commit", "-q", "--amend", "-m", "better words")
	if r := since(start, 1); r.Status != Pass {
		t.Errorf("the new commit amended: %s %q, want pass", r.Status, r.Message)
	}

	// A branch merged with --no-ff: both its commit and the merge are new.
	gitBin(t, dir, "switch", "-q", "-c", "feature")
	commit("d", "1")
	gitBin(t, dir, "switch", "-q", "main")
	gitBin(t, dir, "merge", "-q", "--no-ff", "--no-edit", "feature")
	if r := since(start, 3); r.Status != Pass {
		t.Errorf("a commit and a merged branch: %s %q, want 3 new commits", r.Status, r.Message)
	}
	if r := since(strings.Repeat("0", 40), 1); r.Status != Fail || !strings.Contains(r.Message, "no longer holds it") {
		t.Errorf("an unknown start: %s %q, want a fail", r.Status, r.Message)
	}

	// The start taken while the learner had HEAD elsewhere (detached on an
	// older commit, or on a branch with no commit): main's commit, noted
	// too, must stay in HEAD's history, so amending it still fails.
	gitBin(t, dir, "reset", "-q", "--hard", tip)
	gitBin(t, dir, "branch", "-q", "-D", "feature")
	gitBin(t, dir, "checkout", "-q", "HEAD~1")
	detached := head()
	gitBin(t, dir, "symbolic-ref", "HEAD", "refs/heads/nothing")
	unborn := head()
	if !strings.HasPrefix(unborn, HeadNone+" ") {
		t.Fatalf("ReportHead on an unborn branch = %q, want none and main's commit", unborn)
	}
	gitBin(t, dir, "symbolic-ref", "HEAD", "refs/heads/main")
	gitBin(t, dir, "reset", "-q", "--hard")
	commit("e", "1", "--amend")
	for _, s := range []string{detached, unborn} {
		if r := since(s, 1); r.Status != Fail || !strings.Contains(r.Message, "no longer holds it") {
			t.Errorf("start %q, then the start commit amended: %s %q, want a fail", s, r.Status, r.Message)
		}
	}
}

// The step-start commit travels in the request by position and reaches
// the git check it belongs to; a ReportHead asked over the wire answers.
func TestServeCarriesStepHeads(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "root/repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitBin(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitBin(t, dir, "add", "a")
	gitBin(t, dir, "commit", "-q", "-m", "one")
	start := strings.TrimSpace(gitBin(t, dir, "rev-parse", "HEAD"))
	min := 1
	serve := func(heads []string) []Result {
		req := Request{Root: root, Heads: heads, Checks: []lab.Check{
			ReportHead("/root/repo"),
			{Name: "new", Git: &lab.GitCheck{Repo: "/root/repo", Since: lab.SinceStep, Commits: &lab.Range{Min: &min}}},
		}}
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Serve(context.Background(), bytes.NewReader(body), &out); err != nil {
			t.Fatal(err)
		}
		var resp Response
		if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		return resp.Results
	}
	rs := serve([]string{"", start})
	if rs[0].Status != Pass || rs[0].Message != start+" "+start {
		t.Errorf("ReportHead over the wire = %s %q, want pass %q", rs[0].Status, rs[0].Message, start)
	}
	if rs[1].Status != Fail {
		t.Errorf("no commit since %s: %s %q, want fail", start, rs[1].Status, rs[1].Message)
	}
	if rs = serve(nil); rs[1].Status != Pass {
		t.Errorf("without a noted start every commit counts: %s %q, want pass", rs[1].Status, rs[1].Message)
	}
}
