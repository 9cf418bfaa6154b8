package checks

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/labctl/labctl/lab"
)

// hostileRepo makes a real repository at the lab path /root/<name> with
// the git program: one commit holding app.yaml.
func hostileRepo(t *testing.T, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, "root", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitBin(t, dir, "init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "app.yaml"), []byte("replicas: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitBin(t, dir, "add", "app.yaml")
	gitBin(t, dir, "commit", "-q", "-m", "feat: app")
	return dir
}

func gitChecks(repo string) map[string]lab.Check {
	return map[string]lab.Check{
		"commits": {Git: &lab.GitCheck{Repo: repo, Commits: &lab.Range{Min: intp(1)}}},
		"message": {Git: &lab.GitCheck{Repo: repo, Message: &lab.MessageAssert{Matches: "^feat"}}},
		"field":   {Git: &lab.GitCheck{Repo: repo, Field: &lab.GitFieldAssert{File: "app.yaml", FieldAssert: lab.FieldAssert{Path: "replicas", Assert: lab.Assert{Equals: lit(3)}}}}},
		"clean":   {Git: &lab.GitCheck{Repo: repo, Clean: boolp(true)}},
		"config":  {Git: &lab.GitCheck{Repo: repo, Config: []string{"core.bare"}}},
	}
}

// TestHostileRepositoriesFail: every kind of git check on a repository made
// hostile ends failed, with a message, within the deadline.
func TestHostileRepositoriesFail(t *testing.T) {
	root := t.TempDir()
	other := hostileRepo(t, root, "other")
	for i, tc := range hostileCases(other) {
		t.Run(tc.name, func(t *testing.T) {
			name := "repo" + string(rune('a'+i))
			dir := hostileRepo(t, root, name)
			tc.setup(t, dir)
			for kind, c := range gitChecks("/root/" + name) {
				if tc.only != nil && !contains(tc.only, kind) {
					continue
				}
				r := runHostile(t, Env{Root: root}, c)
				if !strings.Contains(r.Message, tc.message) {
					t.Errorf("%s check: message %q, want it to hold %q", kind, r.Message, tc.message)
				}
			}
		})
	}
}

// hostileCase makes a repository hostile.
type hostileCase struct {
	name    string
	setup   func(t *testing.T, dir string)
	message string // a part every check's message holds
	only    []string
	// sandbox is the part every message holds when the repository is
	// read from the sandbox, if it differs.
	sandbox string
}

// hostileCases are the ways of making a repository hostile; other is the
// directory of another repository.
func hostileCases(other string) []hostileCase {
	return []hostileCase{
		{"a .git file pointing elsewhere", func(t *testing.T, dir string) {
			must(t, os.RemoveAll(filepath.Join(dir, ".git")))
			must(t, os.WriteFile(filepath.Join(dir, ".git"), []byte("gitdir: "+filepath.Join(other, ".git")+"\n"), 0o644))
		}, "/.git is a file that points to a repository elsewhere", nil, ""},
		{"a symlinked .git", func(t *testing.T, dir string) {
			must(t, os.RemoveAll(filepath.Join(dir, ".git")))
			must(t, os.Symlink(filepath.Join(other, ".git"), filepath.Join(dir, ".git")))
		}, "/.git is a symbolic link", nil, ""},
		{"alternates to another repository", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, ".git/objects/info/alternates"), []byte(filepath.Join(other, ".git/objects")+"\n"), 0o644))
		}, "has objects/info/alternates, which borrows another repository's files", nil, ""},
		{"alternates to /proc", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, ".git/objects/info/alternates"), []byte("/proc/self/root\n"), 0o644))
		}, "has objects/info/alternates", nil, ""},
		{"a commondir file", func(t *testing.T, dir string) {
			must(t, os.WriteFile(filepath.Join(dir, ".git/commondir"), []byte(filepath.Join(other, ".git")+"\n"), 0o644))
		}, "has commondir", nil, ""},
		{"a symlinked objects directory", func(t *testing.T, dir string) {
			must(t, os.RemoveAll(filepath.Join(dir, ".git/objects")))
			must(t, os.Symlink(filepath.Join(other, ".git/objects"), filepath.Join(dir, ".git/objects")))
		}, "/.git/objects is a symbolic link", []string{"commits", "message", "field"}, ""},
		{"a symlinked pack directory", func(t *testing.T, dir string) {
			gitBin(t, dir, "gc", "-q")
			pack := filepath.Join(dir, ".git/objects/pack")
			must(t, os.Rename(pack, filepath.Join(other, "pack-moved")))
			must(t, os.Symlink(filepath.Join(other, "pack-moved"), pack))
		}, "/.git/objects/pack is a symbolic link", []string{"commits", "message", "field"}, ""},
		{"HEAD is a FIFO", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, ".git/HEAD")))
			must(t, syscall.Mkfifo(filepath.Join(dir, ".git/HEAD"), 0o644))
		}, "/.git/HEAD is a named pipe (FIFO), not a regular file", nil, ""},
		{"config is a link to /dev/zero", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, ".git/config")))
			must(t, os.Symlink("/dev/zero", filepath.Join(dir, ".git/config")))
		}, "/.git/config is a symbolic link (to /dev/zero)", []string{"config"}, ""},
		{"the index is a FIFO", func(t *testing.T, dir string) {
			must(t, os.Remove(filepath.Join(dir, ".git/index")))
			must(t, syscall.Mkfifo(filepath.Join(dir, ".git/index"), 0o644))
		}, "/.git/index is a named pipe (FIFO), not a regular file", []string{"clean"}, ""},
		{"a FIFO in the work tree", func(t *testing.T, dir string) {
			must(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
			must(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("x\n"), 0o644))
			must(t, os.Remove(filepath.Join(dir, ".gitignore")))
			must(t, syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o644))
		}, "is a named pipe (FIFO), not a regular file", []string{"clean"}, ""},
		{"a huge sparse packfile", func(t *testing.T, dir string) {
			gitBin(t, dir, "gc", "-q")
			packs, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/*.pack"))
			if len(packs) != 1 {
				t.Fatalf("git gc made %d packs", len(packs))
			}
			must(t, os.Truncate(packs[0], 10<<30))
		}, "is larger than 64 MiB, more than any check reads", []string{"commits", "message", "field"},
			", with its work tree, is larger than 8 MiB"},
	}
}

// TestRepositoryWithoutItsObjectsFails: a repository whose objects were
// removed fails the checks that read them, and the message does not blame
// an alternates file it does not have (go-git looks there for an object it
// cannot find).
func TestRepositoryWithoutItsObjectsFails(t *testing.T) {
	root := t.TempDir()
	dir := hostileRepo(t, root, "gone")
	gitBin(t, dir, "gc", "-q")
	packs, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/*"))
	if len(packs) == 0 {
		t.Fatal("git gc made no pack")
	}
	for _, p := range packs {
		must(t, os.Remove(p))
	}
	for _, kind := range []string{"commits", "message", "field"} {
		r := runHostile(t, Env{Root: root}, gitChecks("/root/gone")[kind])
		if r.Status != Fail || strings.Contains(r.Message, "alternates") || !strings.Contains(r.Message, "lacks objects its history needs") {
			t.Errorf("%s check: %s %q, want a failure saying an object is not found, without alternates", kind, r.Status, r.Message)
		}
	}
	// With an alternates file, the file is still what is named.
	must(t, os.WriteFile(filepath.Join(dir, ".git/objects/info/alternates"), []byte("/proc/self/root\n"), 0o644))
	r := runHostile(t, Env{Root: root}, gitChecks("/root/gone")["commits"])
	if r.Status != Fail || !strings.Contains(r.Message, "has objects/info/alternates") {
		t.Errorf("with alternates: %s %q", r.Status, r.Message)
	}
}

// TestOversizedObjectsFail: a 100 MiB blob and a 10 MiB commit message are
// refused before they are read into memory.
func TestOversizedObjectsFail(t *testing.T) {
	root := t.TempDir()
	dir := hostileRepo(t, root, "big")
	big, err := os.Create(filepath.Join(dir, "app.yaml"))
	must(t, err)
	must(t, big.Truncate(100<<20))
	big.Close()
	gitBin(t, dir, "add", "app.yaml")
	gitBin(t, dir, "commit", "-q", "-m", "feat: big")
	c := gitChecks("/root/big")["field"]
	r := runHostile(t, Env{Root: root}, c)
	if !strings.Contains(r.Message, "blob object") || !strings.Contains(r.Message, "larger than 8 MiB") {
		t.Errorf("message %q, want the blob refused as larger than 8 MiB", r.Message)
	}

	msgFile := filepath.Join(t.TempDir(), "msg")
	must(t, os.WriteFile(msgFile, []byte("feat: "+strings.Repeat("long ", 2<<20)), 0o644))
	gitBin(t, dir, "commit", "-q", "--allow-empty", "-F", msgFile)
	for _, kind := range []string{"commits", "message"} {
		r := runHostile(t, Env{Root: root}, gitChecks("/root/big")[kind])
		if !strings.Contains(r.Message, "commit object") || !strings.Contains(r.Message, "larger than 8 MiB") {
			t.Errorf("%s check: message %q, want the commit refused as larger than 8 MiB", kind, r.Message)
		}
	}
}

// TestFIFOAsRepositoryDoesNotHang: a FIFO where the repository or its
// .git should be is no repository, at once.
func TestFIFOAsRepositoryDoesNotHang(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "root/withpipe"), 0o755))
	must(t, syscall.Mkfifo(filepath.Join(root, "root/pipe"), 0o644))
	must(t, syscall.Mkfifo(filepath.Join(root, "root/withpipe/.git"), 0o644))
	r := runHostile(t, Env{Root: root}, gitChecks("/root/pipe")["commits"])
	expect(t, r, Fail, "expected a git repository at /root/pipe, found none")
	r = runHostile(t, Env{Root: root}, gitChecks("/root/withpipe")["commits"])
	expect(t, r, Fail, "/root/withpipe/.git is a named pipe (FIFO); expected the repository's own .git directory")
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
