package checks

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

func TestCommandCheck(t *testing.T) {
	t.Setenv("LABCTL_SECRET", "must-not-leak")
	dir := t.TempDir()
	env := Env{Root: "/"}
	cmd := func(cc lab.CommandCheck) lab.Check { return lab.Check{Command: &cc} }
	tests := []struct {
		name   string
		check  lab.Check
		status Status
		msg    string
	}{
		{"environment is labctl's", cmd(lab.CommandCheck{Run: []string{"env"}, Stdout: `\A` + regexp.QuoteMeta(strings.Join(commandEnv(), "\n")) + `\n\z`}), Pass, ""},
		{"stdout matches", cmd(lab.CommandCheck{Run: []string{"echo", "ready"}, Stdout: `^ready$`}), Pass, ""},
		{"stdout does not match", cmd(lab.CommandCheck{Run: []string{"echo", "not ready"}, Stdout: `^ready$`}), Fail, "expected the output of `echo 'not ready'` to match \"^ready$\", found \"not ready\""},
		{"exit code", cmd(lab.CommandCheck{Run: []string{"sh", "-c", "exit 3"}, ExitCode: intp(3)}), Pass, ""},
		{"exit code differs", cmd(lab.CommandCheck{Run: []string{"sh", "-c", "echo oops >&2; exit 3"}}), Fail, "expected exit code 0 from `sh -c 'echo oops >&2; exit 3'`, found 3; output: \"oops\""},
		{"runs in dir", cmd(lab.CommandCheck{Run: []string{"pwd"}, Dir: dir, Stdout: "^" + dir + "$"}), Pass, ""},
		{"missing dir", cmd(lab.CommandCheck{Run: []string{"pwd"}, Dir: dir + "/nope"}), Fail, "expected a directory " + dir + "/nope to run `pwd` in, found none"},
		{"default dir is /", cmd(lab.CommandCheck{Run: []string{"pwd"}, Stdout: `^/$`}), Pass, ""},
		{"program not found", cmd(lab.CommandCheck{Run: []string{"no-such-program"}}), Error, `program "no-such-program" not found in /usr/sbin:/usr/bin:/sbin:/bin`},
		{"bad expression", cmd(lab.CommandCheck{Run: []string{"true"}, Stdout: `(`}), Error, "invalid regular expression \"(\": error parsing regexp: missing closing ): `(?m)(`"},
		{"empty run", cmd(lab.CommandCheck{}), Error, "command check has an empty run list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, runCheck(t, env, tt.check), tt.status, tt.msg)
		})
	}
}

// TestCommandCheckTimeout runs a command that would sleep for ten minutes
// and leaves a grandchild behind: the check is an error at its deadline and
// the whole process group is killed.
func TestCommandCheckTimeout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	c := lab.Check{
		Name:    "slow",
		Timeout: lab.Duration{Duration: 300 * time.Millisecond},
		Command: &lab.CommandCheck{Run: []string{"sh", "-c", "sleep 600 & echo $! > " + pidFile + "; wait"}},
	}
	done := make(chan Result, 1)
	go func() { done <- runCheck(t, Env{Root: "/"}, c) }()
	var r Result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Run did not return long after the check's deadline")
	}
	expect(t, r, Error, "timed out after 300ms")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the command did not start: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// SIGKILL was sent to the group before the check returned; wait for
	// the kernel to finish the grandchild (it may stay a zombie until
	// reaped, which counts as gone).
	for i := 0; ; i++ {
		if !running(pid) {
			break
		}
		if i == 1000 {
			t.Fatalf("the command's background process %d is still running after its group was killed", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(stat))
	return len(fields) > 2 && fields[2] != "Z"
}
