package checks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

// commitWrittenRoot makes /root/repo under a new root with the git program:
// a README commit, then a commit of apps/web/deployment.yaml, and returns
// the root, the deployment commit's hash and when its object was written.
func commitWrittenRoot(t *testing.T) (root, hash string, at time.Time) {
	t.Helper()
	root = t.TempDir()
	dir := filepath.Join(root, "root/repo")
	if err := os.MkdirAll(filepath.Join(dir, "apps/web"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitBin(t, dir, "init", "-q")
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# web\n"), 0o644)
	gitBin(t, dir, "add", ".")
	gitBin(t, dir, "commit", "-q", "-m", "Start")
	os.WriteFile(filepath.Join(dir, "apps/web/deployment.yaml"), []byte("spec:\n  replicas: 3\n"), 0o644)
	gitBin(t, dir, "add", ".")
	// The learner sets git's dates: a commit dated a year back is no
	// earlier for the check.
	gitBin(t, dir, "-c", "user.name=L", "commit", "-q", "-m", "Scale web to 3 replicas", "--date", "2025-01-01T00:00:00Z")
	hash = strings.TrimSpace(gitBin(t, dir, "rev-parse", "HEAD"))
	fi, err := os.Lstat(filepath.Join(dir, ".git/objects", hash[:2], hash[2:]))
	if err != nil {
		t.Fatal(err)
	}
	at, ok := changeTime(fi)
	if !ok {
		t.Skip("no change times on this system")
	}
	return root, hash, at
}

var afterDeploymentCommit = &lab.CommitOf{Repo: "/root/repo", Touching: "apps/web/deployment.yaml"}

// runAfterCommit runs an apply check with afterCommit over the log lines,
// its window open since the lab began.
func runAfterCommit(t *testing.T, root string, lines []string, absent bool) (Status, string) {
	t.Helper()
	return runAfterCommitSince(t, root, time.Time{}, lines, absent)
}

// runAfterCommitSince is runAfterCommit with the window opening at since.
func runAfterCommitSince(t *testing.T, root string, since time.Time, lines []string, absent bool) (Status, string) {
	t.Helper()
	ac := &lab.AuditCheck{AuditSelector: applySel, Absent: absent, AfterCommit: afterDeploymentCommit}
	dir := auditDir(t, map[string][]string{"audit.log": lines})
	env := Env{Root: root, Audit: &AuditSource{Dir: dir, Since: map[*lab.AuditCheck]time.Time{ac: since}}}
	return outcome(checkAudit(context.Background(), env, ac))
}

func TestAuditAfterCommit(t *testing.T) {
	root, hash, at := commitWrittenRoot(t)
	before := auditLine(t, at.Add(-time.Second), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`)
	after := auditLine(t, at.Add(time.Second), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`)

	// Applied, then committed: the wrong order fails, whatever date git
	// gives the commit, naming the commit and both times.
	st, m := runAfterCommit(t, root, []string{before}, false)
	if st != Fail || !strings.Contains(m, "after commit "+hash[:7]) || !strings.Contains(m, "commit first, then apply") {
		t.Errorf("apply before the commit: %s %q", st, m)
	}
	// Committed, then applied: passes, an earlier apply or not.
	if st, m := runAfterCommit(t, root, []string{before, after}, false); st != Pass {
		t.Errorf("apply after the commit: %s %q", st, m)
	}
	if st, m := runAfterCommit(t, root, []string{before}, true); st != Pass {
		t.Errorf("absent after the commit, with one before it: %s %q", st, m)
	}
	if st, _ := runAfterCommit(t, root, []string{after}, true); st != Fail {
		t.Errorf("absent after the commit, with one after it: %s", st)
	}

	// A later commit that does not change the file is not the one.
	dir := filepath.Join(root, "root/repo")
	time.Sleep(20 * time.Millisecond)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# web, tidied\n"), 0o644)
	gitBin(t, dir, "-c", "user.name=L", "commit", "-q", "-am", "Tidy the README")
	if st, m := runAfterCommit(t, root, []string{after}, false); st != Pass {
		t.Errorf("a README commit after the apply: %s %q", st, m)
	}

	// Setting the object file's times back, after the apply, changes its
	// change time to now: the apply is before it again.
	root, hash, at = commitWrittenRoot(t)
	after = auditLine(t, at.Add(time.Second), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`)
	time.Sleep(time.Until(at.Add(1100 * time.Millisecond)))
	obj := filepath.Join(root, "root/repo/.git/objects", hash[:2], hash[2:])
	old := at.Add(-time.Hour)
	if err := os.Chtimes(obj, old, old); err != nil {
		t.Fatal(err)
	}
	if st, m := runAfterCommit(t, root, []string{after}, false); st != Fail {
		t.Errorf("after the object's times were set back: %s %q", st, m)
	}
}

func TestAuditAfterCommitPackedOrHidden(t *testing.T) {
	root, _, at := commitWrittenRoot(t)
	dir := filepath.Join(root, "root/repo")
	after := auditLine(t, at.Add(time.Second), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`)

	// git gc packs the object: its pack is newer than the apply, so the
	// order cannot be told, and the learner is told to apply again.
	time.Sleep(1100 * time.Millisecond)
	gitBin(t, dir, "gc", "-q", "--prune=now")
	st, m := runAfterCommit(t, root, []string{after}, false)
	if st != Fail || !strings.Contains(m, "packed") {
		t.Errorf("packed after the apply: %s %q", st, m)
	}
	again := auditLine(t, time.Now().Add(time.Second), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`)
	if st, m := runAfterCommit(t, root, []string{after, again}, false); st != Pass {
		t.Errorf("applied again after the gc: %s %q", st, m)
	}

	// A symbolic link in place of the pack directory is refused.
	pack := filepath.Join(dir, ".git/objects/pack")
	elsewhere := filepath.Join(root, "elsewhere")
	if err := os.Rename(pack, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, pack); err != nil {
		t.Fatal(err)
	}
	if st, m := runAfterCommit(t, root, []string{after, again}, false); st != Fail || !strings.Contains(m, "symbolic link") {
		t.Errorf("objects reached through a symbolic link: %s %q", st, m)
	}
}

func TestAuditAfterCommitNeedsTheCommit(t *testing.T) {
	root, _, at := commitWrittenRoot(t)
	after := auditLine(t, at.Add(time.Second), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`)
	ac := &lab.AuditCheck{AuditSelector: applySel, AfterCommit: &lab.CommitOf{Repo: "/root/repo", Touching: "apps/api/deployment.yaml"}}
	env := Env{Root: root, Audit: &AuditSource{Dir: auditDir(t, map[string][]string{"audit.log": {after}}), Since: map[*lab.AuditCheck]time.Time{}}}
	if st, m := outcome(checkAudit(context.Background(), env, ac)); st != Fail || !strings.Contains(m, "apps/api/deployment.yaml") {
		t.Errorf("no commit changed the file: %s %q", st, m)
	}
	ac.AfterCommit = &lab.CommitOf{Repo: "/root/nothing", Touching: "apps/web/deployment.yaml"}
	if st, m := outcome(checkAudit(context.Background(), env, ac)); st != Fail {
		t.Errorf("no repository: %s %q", st, m)
	}
}

// TestAuditAfterCommitCountsFromTheFirstCommitOfTheContent: a commit whose
// message is amended after the apply holds what was applied since before
// it (HEAD's reflog names the first), but only a commit of the window
// counts: content committed before the step began is not this step's.
func TestAuditAfterCommitCountsFromTheFirstCommitOfTheContent(t *testing.T) {
	root, _, at := commitWrittenRoot(t)
	dir := filepath.Join(root, "root/repo")
	apply := at.Add(time.Second)
	applied := auditLine(t, apply, "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`)
	time.Sleep(time.Until(apply.Add(100 * time.Millisecond)))
	gitBin(t, dir, "-c", "user.name=L", "commit", "-q", "--amend", "-m", "Scale web to 3 replicas, as the repository says")

	if st, m := runAfterCommitSince(t, root, at.Add(-time.Minute), []string{applied}, false); st != Pass {
		t.Errorf("the message amended after the apply: %s %q", st, m)
	}
	if st, m := runAfterCommitSince(t, root, at.Add(500*time.Millisecond), []string{applied}, false); st != Fail {
		t.Errorf("the content's first commit was before the window: %s %q", st, m)
	}
	// A new content committed after the apply is not what was applied.
	os.WriteFile(filepath.Join(dir, "apps/web/deployment.yaml"), []byte("spec:\n  replicas: 3\n  paused: false\n"), 0o644)
	gitBin(t, dir, "-c", "user.name=L", "commit", "-q", "-am", "Tidy web")
	if st, m := runAfterCommitSince(t, root, at.Add(-time.Minute), []string{applied}, false); st != Fail {
		t.Errorf("a further change of the file committed after the apply: %s %q", st, m)
	}
}
