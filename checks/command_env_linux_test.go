package checks

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/labctl/labctl/lab"
)

// The environment of a command is labctl's: no HOME of the learner's, git
// with no configuration but its own, Python without the user's site
// directory or the working directory on its path.
func TestCommandEnvIsLabctls(t *testing.T) {
	env := commandEnv()
	for _, want := range []string{"HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "PYTHONNOUSERSITE=1", "PYTHONSAFEPATH=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("environment %v lacks %s", env, want)
		}
	}
	for _, kv := range env {
		if strings.Contains(kv, "/root") {
			t.Errorf("%s names the learner's home", kv)
		}
	}
}

// ownRootHome runs f on a thread of its own mount namespace, where /root is
// an empty tmpfs the test fills as a learner would their home: the checks
// run by f see it, nothing else on the machine does.
func ownRootHome(t *testing.T, files map[string]string, f func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the test its own /root")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends with its namespace
		if err := syscall.Unshare(syscall.CLONE_NEWNS); err != nil {
			t.Errorf("unshare: %v", err)
			return
		}
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			t.Errorf("making mounts private: %v", err)
			return
		}
		if err := syscall.Mount("tmpfs", "/root", "tmpfs", 0, "mode=0700"); err != nil {
			t.Errorf("mounting /root: %v", err)
			return
		}
		for name, data := range files {
			p := filepath.Join("/root", name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Error(err)
				return
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				t.Error(err)
				return
			}
		}
		f()
	}()
	<-done
}

// Nothing a learner leaves in their home runs when a command check runs git
// or python3: a ~/.gitconfig's core.fsmonitor, a .pth file of the user's
// site directory.
func TestCommandCheckIgnoresTheLearnersHome(t *testing.T) {
	marks := t.TempDir()
	repo := filepath.Join(marks, "repo")
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	ver := strings.TrimSpace(pythonOut(t, "import sys; print('%d.%d' % sys.version_info[:2])"))
	gitMark, pthMark := filepath.Join(marks, "git-ran"), filepath.Join(marks, "pth-ran")
	ownRootHome(t, map[string]string{
		".gitconfig": "[core]\n\tfsmonitor = \"touch " + gitMark + "; false\"\n[safe]\n\tdirectory = *\n",
		".local/lib/python" + ver + "/site-packages/hook.pth": "import os; open('" + pthMark + "', 'w').close()\n",
	}, func() {
		ctx := context.Background()
		if err := checkCommand(ctx, Env{Root: "/"}, &lab.CommandCheck{Run: []string{"git", "-C", repo, "status"}}); err != nil {
			t.Logf("git status: %v", err)
		}
		if err := checkCommand(ctx, Env{Root: "/"}, &lab.CommandCheck{Run: []string{"python3", "-c", "print(1)"}}); err != nil {
			t.Errorf("python3: %v", err)
		}
	})
	for _, m := range []string{gitMark, pthMark} {
		if _, err := os.Stat(m); err == nil {
			t.Errorf("a file of the learner's home ran code in the grader: %s exists", m)
		}
	}
}

// A repository's own .git/config runs nothing when a command check runs git
// in it: its fsmonitor, a filter of its .gitattributes, its external diff.
func TestCommandCheckRunsNoRepositoryHook(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	mark := filepath.Join(dir, "hook-ran")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = []string{"PATH=" + commandPath, "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=l", "GIT_AUTHOR_EMAIL=l@x", "GIT_COMMITTER_NAME=l", "GIT_COMMITTER_EMAIL=l@x"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-qm", "one")
	hook := "touch " + mark + "; cat"
	git("config", "core.fsmonitor", "touch "+mark+"; false")
	git("config", "filter.evil.clean", hook)
	git("config", "diff.external", "sh -c 'touch "+mark+"'")
	git("config", "core.pager", "touch "+mark+"; cat")
	if err := os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("*.txt filter=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, run := range [][]string{
		{"git", "-C", repo, "status"},
		{"git", "-C", repo, "diff"},
		{"git", "-C", repo, "-p", "log"},
		{"sh", "-c", "cd " + repo + " && git add -A && git status"},
	} {
		err := checkCommand(context.Background(), Env{Root: "/"}, &lab.CommandCheck{Run: run})
		if _, statErr := os.Stat(mark); statErr == nil {
			t.Fatalf("%v ran the repository's hook (check: %v)", run, err)
		}
	}
}

// pythonOut is what python3 prints for code.
func pythonOut(t *testing.T, code string) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", code).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return string(out)
}

// A json.py beside the check's working directory is not imported in place
// of the standard library's.
func TestCommandCheckPythonIgnoresTheWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "json.py"), []byte("print('learner json')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := lab.Check{Command: &lab.CommandCheck{Run: []string{"python3", "-c", "import json; print(json.__file__)"}, Dir: dir, Stdout: `\A/usr/lib/python3[^\n]*/json/__init__\.py\n\z`}}
	expect(t, runCheck(t, Env{Root: "/"}, c), Pass, "")
}

// A command's processes cannot reach the checker's: not its stdout through
// /proc (to forge an answer), not its stdin (the request and the grader's
// credentials). The test process stands for the checker here; the real one
// is non-dumpable besides.
func TestCommandCannotReachTheChecker(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the checker switches users only as root")
	}
	self := strconv.Itoa(os.Getpid())
	for _, script := range []string{
		"printf '{\"results\":[]}' > /proc/" + self + "/fd/1",
		"head -c1 /proc/" + self + "/fd/0",
		"kill -0 " + self,
	} {
		c := lab.Check{Command: &lab.CommandCheck{Run: []string{"sh", "-c", script}}}
		if r := runCheck(t, Env{Root: "/"}, c); r.Status != Fail {
			t.Errorf("%s: %s %q, want a fail: the command reached the checker", script, r.Status, r.Message)
		}
	}
}

// A process a command leaves behind, even in a session of its own, is
// killed when the check ends.
func TestCommandLeavesNoProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the checker switches users only as root")
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	c := lab.Check{Command: &lab.CommandCheck{Run: []string{"sh", "-c", "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > " + pidFile}}}
	expect(t, runCheck(t, Env{Root: "/"}, c), Pass, "")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if running(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("process %d the command left is still running", pid)
	}
}

// handleScript asks for a handle of / and opens it again by that handle
// (name_to_handle_at, then open_by_handle_at): what a forged handle to
// the root of a file system outside every mount needs. It exits 0 only if
// the file opened.
const handleScript = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Handle(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint), ("type", ctypes.c_int), ("data", ctypes.c_ubyte * 128)]
h, mnt = Handle(size=128), ctypes.c_int()
if libc.name_to_handle_at(-100, b"/", ctypes.byref(h), ctypes.byref(mnt), 0) != 0:
    print("name_to_handle_at:", os.strerror(ctypes.get_errno()))
    sys.exit(2)
fd = libc.open_by_handle_at(os.open("/", os.O_RDONLY), ctypes.byref(h), os.O_RDONLY)
if fd < 0:
    print("open_by_handle_at:", os.strerror(ctypes.get_errno()))
    sys.exit(1)
print("opened")
`

// Without DAC_READ_SEARCH the kernel itself refuses open_by_handle_at, with
// no seccomp profile in the way (the test runs under none): a command
// check's user, which keeps DAC_OVERRIDE only, cannot open a file by a
// handle. The same script as root with DAC_READ_SEARCH opens it, so the
// check proves the refusal is the capability's.
func TestCommandCheckCannotOpenByHandle(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the checker switches users only as root")
	}
	if out, err := exec.Command("python3", "-c", handleScript).CombinedOutput(); err != nil || !strings.Contains(string(out), "opened") {
		t.Skipf("root here cannot open by handle either (%v, %s): nothing to prove", err, out)
	}
	c := lab.Check{Command: &lab.CommandCheck{Run: []string{"python3", "-c", handleScript}}}
	if r := runCheck(t, Env{Root: "/"}, c); r.Status != Fail || !strings.Contains(r.Message, `open_by_handle_at: Operation not permitted`) {
		t.Errorf("a command check opening / by its handle: %s %q, want a fail with EPERM", r.Status, r.Message)
	}
}

// A command's user, with DAC_OVERRIDE alone, reads a file of mode 000 in a
// directory of mode 000: the learner who chmods their work gets a result.
func TestCommandCheckReadsModeZero(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the checker switches users only as root")
	}
	dir := filepath.Join(t.TempDir(), "locked")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("secret\n"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	c := lab.Check{Command: &lab.CommandCheck{Run: []string{"cat", "f"}, Dir: dir, Stdout: `^secret$`}}
	expect(t, runCheck(t, Env{Root: "/"}, c), Pass, "")
}

// A grader made before command checks ran as a user of their own (no
// SETUID) gets a message that says how to recreate it.
func TestCommandCheckWithoutSetuidSaysWhatToDo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the checker switches users only as root")
	}
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // never unlocked: the thread ends without its capabilities
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if e := unix.Capget(&hdr, &data[0]); e != nil {
			t.Error(e)
			return
		}
		data[0].Effective &^= 1 << unix.CAP_SETUID
		data[0].Permitted &^= 1 << unix.CAP_SETUID
		if e := unix.Capset(&hdr, &data[0]); e != nil {
			t.Error(e)
			return
		}
		err = checkCommand(context.Background(), Env{Root: "/"}, &lab.CommandCheck{Run: []string{"true"}})
	}()
	<-done
	if err == nil || !strings.Contains(err.Error(), "run `labctl up` to recreate the grader") {
		t.Errorf("err = %v, want one saying to recreate the grader", err)
	}
}
