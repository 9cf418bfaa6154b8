package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

// TestGitCleanAgreesWithGit checks `clean` against what the real git
// program's `git status --porcelain` reports, for every kind of change.
func TestGitCleanAgreesWithGit(t *testing.T) {
	tests := []struct {
		name      string
		change    func(t *testing.T, root, dir string)
		wantClean bool
		msg       string // when go-git names the change differently from git
	}{
		{name: "clean repository", change: func(*testing.T, string, string) {}, wantClean: true},
		{name: "untracked file", change: func(t *testing.T, root, _ string) {
			writeFile(t, root, "/r/new.txt", "new\n", 0o644)
		}},
		{name: "untracked file in a new directory", change: func(t *testing.T, root, _ string) {
			writeFile(t, root, "/r/sub/new.txt", "new\n", 0o644)
		}, msg: "expected a clean work tree in /r, found 1 change(s): ?? sub/new.txt"},
		{name: "modified file", change: func(t *testing.T, root, _ string) {
			writeFile(t, root, "/r/a.txt", "changed\n", 0o644)
		}},
		{name: "staged new file", change: func(t *testing.T, root, dir string) {
			writeFile(t, root, "/r/new.txt", "new\n", 0o644)
			gitBin(t, dir, "add", "new.txt")
		}},
		{name: "staged modification", change: func(t *testing.T, root, dir string) {
			writeFile(t, root, "/r/a.txt", "changed\n", 0o644)
			gitBin(t, dir, "add", "a.txt")
		}},
		{name: "deleted file", change: func(t *testing.T, root, _ string) {
			if err := os.Remove(filepath.Join(root, "r/a.txt")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "staged deletion", change: func(t *testing.T, _, dir string) {
			gitBin(t, dir, "rm", "-q", "a.txt")
		}},
		{name: "ignored file", change: func(t *testing.T, root, _ string) {
			writeFile(t, root, "/r/debug.log", "log\n", 0o644)
		}, wantClean: true},
		{name: "ignored directory", change: func(t *testing.T, root, _ string) {
			writeFile(t, root, "/r/build/out.bin", "bin\n", 0o644)
		}, wantClean: true},
		{name: "excluded in .git/info/exclude", change: func(t *testing.T, root, _ string) {
			writeFile(t, root, "/r/.git/info/exclude", "secret.txt\n", 0o644)
			writeFile(t, root, "/r/secret.txt", "s\n", 0o644)
		}, wantClean: true},
		{name: "modified tracked file that matches .gitignore", change: func(t *testing.T, root, _ string) {
			writeFile(t, root, "/r/keep.log", "changed\n", 0o644)
		}},
		{name: "empty untracked directory", change: func(t *testing.T, root, _ string) {
			if err := os.MkdirAll(filepath.Join(root, "r/empty"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, wantClean: true},
		{name: "file mode change", change: func(t *testing.T, root, _ string) {
			if err := os.Chmod(filepath.Join(root, "r/script.sh"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "rewritten with the same content", change: func(t *testing.T, root, _ string) {
			later := time.Now().Add(time.Hour)
			writeFile(t, root, "/r/a.txt", "a\n", 0o644)
			if err := os.Chtimes(filepath.Join(root, "r/a.txt"), later, later); err != nil {
				t.Fatal(err)
			}
		}, wantClean: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "r")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			gitBin(t, dir, "init", "-q", "-b", "main")
			writeFile(t, root, "/r/a.txt", "a\n", 0o644)
			writeFile(t, root, "/r/script.sh", "#!/bin/sh\n", 0o644)
			writeFile(t, root, "/r/.gitignore", "*.log\nbuild/\n", 0o644)
			writeFile(t, root, "/r/keep.log", "kept\n", 0o644)
			gitBin(t, dir, "add", "a.txt", "script.sh", ".gitignore")
			gitBin(t, dir, "add", "-f", "keep.log")
			gitBin(t, dir, "commit", "-q", "-m", "initial")

			tt.change(t, root, dir)

			porcelain := strings.TrimRight(gitBin(t, dir, "status", "--porcelain"), "\n")
			if (porcelain == "") != tt.wantClean {
				t.Fatalf("git status --porcelain = %q; the scenario expects clean=%v", porcelain, tt.wantClean)
			}
			env := Env{Root: root}
			got := runCheck(t, env, lab.Check{Git: &lab.GitCheck{Repo: "/r", Clean: boolp(true)}})
			dirty := runCheck(t, env, lab.Check{Git: &lab.GitCheck{Repo: "/r", Clean: boolp(false)}})
			if tt.wantClean {
				expect(t, got, Pass, "")
				expect(t, dirty, Fail, "expected uncommitted changes in /r, found a clean work tree")
				return
			}
			msg := tt.msg
			if msg == "" {
				msg = "expected a clean work tree in /r, found 1 change(s): " + porcelain
			}
			expect(t, got, Fail, msg)
			expect(t, dirty, Pass, "")
		})
	}
}

// TestGitConfigIsLocalOnly sets user.email only in the global
// configuration: the check must not see it.
func TestGitConfigIsLocalOnly(t *testing.T) {
	root := gitRoot(t)
	home := t.TempDir()
	writeFile(t, home, "/.gitconfig", "[user]\n\temail = global@example.com\n\tname = Global\n", 0o644)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	env := Env{Root: root}
	expect(t, runCheck(t, env, lab.Check{Git: &lab.GitCheck{Repo: "/root/repo", Config: []string{"user.email"}}}),
		Fail, "expected user.email to be set in /root/repo/.git/config, found it unset or empty")
	expect(t, runCheck(t, env, lab.Check{Git: &lab.GitCheck{Repo: "/root/empty", Config: []string{"user.name"}}}),
		Fail, "expected user.name to be set in /root/empty/.git/config, found it unset or empty")
	expect(t, runCheck(t, env, lab.Check{Git: &lab.GitCheck{Repo: "/root/repo", Config: []string{"user.name"}}}), Pass, "")
}

// TestGitCleanHonoursTheLearnersExcludes: the ignore file git status reads
// from the learner's home (git's default ~/.config/git/ignore, or the file
// core.excludesFile names in ~/.gitconfig or in the repository's own
// configuration) ignores for the check as it does for git, so an editor's
// backup files do not make a clean work tree dirty. One that leads out of
// the learner's home is not read.
func TestGitCleanHonoursTheLearnersExcludes(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(t *testing.T, root, dir string, git func(args ...string) string)
		wantClean bool
		gitAgrees bool
	}{
		{name: "no excludes file", setup: func(*testing.T, string, string, func(...string) string) {}, gitAgrees: true},
		{name: "git's default excludes file", setup: func(t *testing.T, root, _ string, _ func(...string) string) {
			writeFile(t, root, "/root/.config/git/ignore", "# editors\n*~\n*.swp\n", 0o644)
		}, wantClean: true, gitAgrees: true},
		{name: "core.excludesFile in ~/.gitconfig", setup: func(t *testing.T, root, _ string, _ func(...string) string) {
			writeFile(t, root, "/root/.gitconfig", "[user]\n\tname = Lab\n[Core]\n\tExcludesFile = ~/.gitignore_global\n", 0o644)
			writeFile(t, root, "/root/.gitignore_global", "*~\n", 0o644)
		}, wantClean: true, gitAgrees: true},
		{name: "core.excludesFile in the repository's configuration", setup: func(t *testing.T, root, _ string, git func(...string) string) {
			git("config", "core.excludesFile", "~/ignore-here")
			writeFile(t, root, "/root/ignore-here", "deployment.yaml~\n", 0o644)
			writeFile(t, root, "/root/.config/git/ignore", "nothing-of-use\n", 0o644)
		}, wantClean: true, gitAgrees: true},
		{name: "an excludes file that names another pattern", setup: func(t *testing.T, root, _ string, _ func(...string) string) {
			writeFile(t, root, "/root/.config/git/ignore", "*.bak\n", 0o644)
		}, gitAgrees: true},
		{name: "an excludes file behind a link out of the home", setup: func(t *testing.T, root, _ string, _ func(...string) string) {
			writeFile(t, root, "/etc/ignore", "*~\n", 0o644)
			if err := os.MkdirAll(filepath.Join(root, "root/.config/git"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/etc/ignore", filepath.Join(root, "root/.config/git/ignore")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "root/repo")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			git := func(args ...string) string {
				t.Helper()
				return gitAt(t, dir, filepath.Join(root, "root"), args...)
			}
			git("init", "-q", "-b", "main")
			writeFile(t, root, "/root/repo/deployment.yaml", "kind: Deployment\n", 0o644)
			git("add", "deployment.yaml")
			git("commit", "-q", "-m", "initial")
			tt.setup(t, root, dir, git)
			writeFile(t, root, "/root/repo/deployment.yaml~", "kind: Deployment\n", 0o644)

			if tt.gitAgrees {
				porcelain := strings.TrimRight(git("status", "--porcelain"), "\n")
				if (porcelain == "") != tt.wantClean {
					t.Fatalf("git status --porcelain = %q; the scenario expects clean=%v", porcelain, tt.wantClean)
				}
			}
			got := runCheck(t, Env{Root: root}, lab.Check{Git: &lab.GitCheck{Repo: "/root/repo", Clean: boolp(true)}})
			if tt.wantClean {
				expect(t, got, Pass, "")
			} else {
				expect(t, got, Fail, "expected a clean work tree in /root/repo, found 1 change(s): ?? deployment.yaml~")
			}
		})
	}
}
