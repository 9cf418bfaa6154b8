package checks

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/labctl/labctl/lab"
)

// gitBin runs the real git program in dir with a private HOME, so the
// test's repositories never depend on the machine's configuration.
func gitBin(t testing.TB, dir string, args ...string) string {
	t.Helper()
	return gitAt(t, dir, t.TempDir(), args...)
}

// gitAt runs the real git in dir with home as HOME.
func gitAt(t testing.TB, dir, home string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Lab", "GIT_AUTHOR_EMAIL=lab@example.com",
		"GIT_COMMITTER_NAME=Lab", "GIT_COMMITTER_EMAIL=lab@example.com",
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// goGitCommit writes files into the work tree at dir and commits them with
// go-git.
func goGitCommit(t *testing.T, repo *git.Repository, dir string, files map[string]string, msg string, when time.Time) {
	t.Helper()
	wt, err := repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add(name); err != nil {
			t.Fatal(err)
		}
	}
	sig := &object.Signature{Name: "Lab", Email: "lab@example.com", When: when}
	if _, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true}); err != nil {
		t.Fatal(err)
	}
}

// gitRoot builds repositories under a temp root: /root/repo made with
// go-git (three commits, local user.name), /root/empty with no commits,
// /root/merged made with the git binary (a merge).
func gitRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "root/repo")
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := repo.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Raw.Section("user").SetOption("name", "Learner")
	cfg.Raw.Section("core").SetOption("editor", "")
	if err := repo.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
	gitBin(t, dir, "config", "remote.origin.url", "https://example.com/r.git")
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	goGitCommit(t, repo, dir, map[string]string{"README.md": "# gitops\n"}, "Initial commit", t0)
	goGitCommit(t, repo, dir, map[string]string{"apps/web/deployment.yaml": "spec:\n  replicas: 2\n"}, "feat: add web", t0.Add(time.Minute))
	goGitCommit(t, repo, dir, map[string]string{"apps/web/deployment.yaml": "spec:\n  replicas: 3\n  image: nginx\n"}, "웹 복제본을 세 개로 늘림", t0.Add(2*time.Minute))
	// The work tree differs from HEAD: field checks read HEAD, not this.
	if err := os.WriteFile(filepath.Join(dir, "apps/web/deployment.yaml"), []byte("spec:\n  replicas: 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := git.PlainInit(filepath.Join(root, "root/empty"), false); err != nil {
		t.Fatal(err)
	}

	merged := filepath.Join(root, "root/merged")
	if err := os.MkdirAll(merged, 0o755); err != nil {
		t.Fatal(err)
	}
	gitBin(t, merged, "init", "-q", "-b", "main")
	writeFile(t, root, "/root/merged/a.txt", "a\n", 0o644)
	gitBin(t, merged, "add", "a.txt")
	gitBin(t, merged, "commit", "-q", "-m", "add a")
	gitBin(t, merged, "checkout", "-q", "-b", "side")
	writeFile(t, root, "/root/merged/b.txt", "b\n", 0o644)
	gitBin(t, merged, "add", "b.txt")
	gitBin(t, merged, "commit", "-q", "-m", "add b on side")
	gitBin(t, merged, "checkout", "-q", "main")
	writeFile(t, root, "/root/merged/c.txt", "c\n", 0o644)
	gitBin(t, merged, "add", "c.txt")
	gitBin(t, merged, "commit", "-q", "-m", "add c")
	gitBin(t, merged, "merge", "-q", "--no-edit", "side")

	// /root/noff: the change is made on a branch and merged with --no-ff,
	// after main moved on elsewhere; then a merge that resolves the file
	// differently from both sides.
	noff := filepath.Join(root, "root/noff")
	if err := os.MkdirAll(noff, 0o755); err != nil {
		t.Fatal(err)
	}
	gitBin(t, noff, "init", "-q", "-b", "main")
	writeFile(t, root, "/root/noff/web.yaml", "replicas: 2\n", 0o644)
	gitBin(t, noff, "add", "web.yaml")
	gitBin(t, noff, "commit", "-q", "-m", "Add the web manifests")
	gitBin(t, noff, "checkout", "-q", "-b", "scale")
	writeFile(t, root, "/root/noff/web.yaml", "replicas: 3\n", 0o644)
	gitBin(t, noff, "commit", "-q", "-am", "Raise web replicas to 3")
	gitBin(t, noff, "checkout", "-q", "main")
	writeFile(t, root, "/root/noff/README.md", "# web\n", 0o644)
	gitBin(t, noff, "add", "README.md")
	gitBin(t, noff, "commit", "-q", "-m", "Describe the repository")
	gitBin(t, noff, "merge", "-q", "--no-ff", "-m", "Merge branch 'scale'", "scale")
	return root
}

func TestGitCheck(t *testing.T) {
	root := gitRoot(t)
	env := Env{Root: root}
	g := func(gc lab.GitCheck) lab.Check { return lab.Check{Git: &gc} }
	gf := func(file, path string, a lab.Assert) *lab.GitFieldAssert {
		return &lab.GitFieldAssert{File: file, FieldAssert: lab.FieldAssert{Path: path, Assert: a}}
	}
	mergedCount, err := strconv.Atoi(strings.TrimSpace(gitBin(t, filepath.Join(root, "root/merged"), "rev-list", "--count", "HEAD")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		check  lab.Check
		status Status
		msg    string
	}{
		{"exists", g(lab.GitCheck{Repo: "/root/repo"}), Pass, ""},
		{"missing", g(lab.GitCheck{Repo: "/root/nothing"}), Fail, "expected a git repository at /root/nothing, found none"},
		{"a subdirectory is not a repository", g(lab.GitCheck{Repo: "/root/repo/apps"}), Fail, "expected a git repository at /root/repo/apps, found none"},
		{"absent", g(lab.GitCheck{Repo: "/root/repo/apps", Exists: boolp(false)}), Pass, ""},
		{"absent but present", g(lab.GitCheck{Repo: "/root/repo", Exists: boolp(false)}), Fail, "expected no git repository at /root/repo, found one"},
		{"config", g(lab.GitCheck{Repo: "/root/repo", Config: []string{"user.name", "remote.origin.url"}}), Pass, ""},
		{"config case-insensitive key", g(lab.GitCheck{Repo: "/root/repo", Config: []string{"User.Name"}}), Pass, ""},
		{"config unset", g(lab.GitCheck{Repo: "/root/repo", Config: []string{"user.name", "user.email"}}), Fail, "expected user.email to be set in /root/repo/.git/config, found it unset or empty"},
		{"config empty", g(lab.GitCheck{Repo: "/root/repo", Config: []string{"core.editor"}}), Fail, "expected core.editor to be set in /root/repo/.git/config, found it unset or empty"},
		{"config bad key", g(lab.GitCheck{Repo: "/root/repo", Config: []string{"user"}}), Error, `config key "user" must be section.key or section.subsection.key`},
		{"commits", g(lab.GitCheck{Repo: "/root/repo", Commits: &lab.Range{Min: intp(3), Max: intp(3)}}), Pass, ""},
		{"commits too few", g(lab.GitCheck{Repo: "/root/repo", Commits: &lab.Range{Min: intp(4)}}), Fail, "expected at least 4 commits reachable from HEAD in /root/repo, found 3"},
		{"commits empty repo", g(lab.GitCheck{Repo: "/root/empty", Commits: &lab.Range{Max: intp(0)}}), Pass, ""},
		{"commits empty repo fails", g(lab.GitCheck{Repo: "/root/empty", Commits: &lab.Range{Min: intp(1)}}), Fail, "expected at least 1 commits reachable from HEAD in /root/empty, found 0"},
		{"commits through every parent", g(lab.GitCheck{Repo: "/root/merged", Commits: &lab.Range{Min: intp(mergedCount), Max: intp(mergedCount)}}), Pass, ""},
		{"commits through every parent fails", g(lab.GitCheck{Repo: "/root/merged", Commits: &lab.Range{Max: intp(mergedCount - 1)}}), Fail, "expected at most 3 commits reachable from HEAD in /root/merged, found 4"},
		{"tracked", g(lab.GitCheck{Repo: "/root/repo", Tracked: []string{"README.md", "apps/web/deployment.yaml", "apps/web"}}), Pass, ""},
		{"not tracked", g(lab.GitCheck{Repo: "/root/repo", Tracked: []string{"README.md", "apps/db.yaml"}}), Fail, "expected apps/db.yaml to be tracked at HEAD in /root/repo, found it is not"},
		{"tracked in empty repo", g(lab.GitCheck{Repo: "/root/empty", Tracked: []string{"README.md"}}), Fail, "the repository at /root/empty has no commits"},
		{"message last", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{MinLength: 14}}), Pass, ""},
		{"message last too short in runes", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{MinLength: 15}}), Fail, `expected the message of the last commit in /root/repo (` + headShort(t, root) + `) to be at least 15 characters long, found 14: "웹 복제본을 세 개로 늘림"`},
		{"message first", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "first", Matches: `^Initial`}}), Pass, ""},
		{"message first fails", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "first", Matches: `^feat`}}), Fail, `expected the message of the first commit in /root/repo (` + commitShort(t, root, "HEAD~2") + `) to match "^feat", found "Initial commit"`},
		{"message any", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "any", Matches: `^feat:`}}), Pass, ""},
		{"message any fails", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "any", Matches: `^fix:`}}), Fail, `expected a commit message in /root/repo to match "^fix:", found none among 3 commit(s); the last: match "^fix:", found "웹 복제본을 세 개로 늘림"`},
		{"message all", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "all", MinLength: 5}}), Pass, ""},
		{"message all fails", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "all", Matches: `^\S+ \S+$`}}), Fail, `expected every commit message in /root/repo to match "^\\S+ \\S+$", found "웹 복제본을 세 개로 늘림" in ` + headShort(t, root)},
		{"message touching", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "all", Touching: "apps/web/deployment.yaml", Matches: `^(feat|웹)`}}), Pass, ""},
		{"message touching first", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "first", Touching: "apps/web", Matches: `^feat`}}), Pass, ""},
		{"message touching README", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Touching: "README.md", Matches: `^feat`}}), Fail, `expected the message of the last commit touching README.md in /root/repo (` + commitShort(t, root, "HEAD~2") + `) to match "^feat", found "Initial commit"`},
		{"message touching nothing", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Touching: "docs"}}), Fail, "expected commits touching docs in /root/repo, found none"},
		// git log's history simplification: the --no-ff merge did not
		// change web.yaml (it is the branch's), the branch's commit did.
		{"message touching through a no-ff merge", g(lab.GitCheck{Repo: "/root/noff", Message: &lab.MessageAssert{Touching: "web.yaml", Matches: `replicas`}}), Pass, ""},
		{"message touching first through a merge", g(lab.GitCheck{Repo: "/root/noff", Message: &lab.MessageAssert{Which: "first", Touching: "web.yaml", Matches: `^Add the web`}}), Pass, ""},
		{"message touching all through a merge", g(lab.GitCheck{Repo: "/root/noff", Message: &lab.MessageAssert{Which: "all", Touching: "web.yaml", Matches: `^(Add|Raise)`}}), Pass, ""},
		{"message in empty repo", g(lab.GitCheck{Repo: "/root/empty", Message: &lab.MessageAssert{MinLength: 1}}), Fail, "expected commits in /root/empty, found none"},
		{"message bad regexp", g(lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Matches: `[`}}), Error, "invalid message expression \"[\": error parsing regexp: missing closing ]: `[`"},
		{"field at HEAD", g(lab.GitCheck{Repo: "/root/repo", Field: gf("apps/web/deployment.yaml", "spec.replicas", lab.Assert{Equals: lit(3)})}), Pass, ""},
		{"field at HEAD differs", g(lab.GitCheck{Repo: "/root/repo", Field: gf("apps/web/deployment.yaml", "spec.replicas", lab.Assert{Equals: lit(9)})}), Fail, "expected spec.replicas = 9 in apps/web/deployment.yaml at HEAD, found 3"},
		{"field file not committed", g(lab.GitCheck{Repo: "/root/repo", Field: gf("apps/db.yaml", "spec", lab.Assert{})}), Fail, "apps/db.yaml not found at HEAD"},
		{"field in empty repo", g(lab.GitCheck{Repo: "/root/empty", Field: gf("a.yaml", "spec", lab.Assert{})}), Fail, "the repository at /root/empty has no commits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, runCheck(t, env, tt.check), tt.status, tt.msg)
		})
	}
}

func commitShort(t *testing.T, root, rev string) string {
	t.Helper()
	return strings.TrimSpace(gitBin(t, filepath.Join(root, "root/repo"), "rev-parse", "--short=7", rev))
}

func headShort(t *testing.T, root string) string { return commitShort(t, root, "HEAD") }
