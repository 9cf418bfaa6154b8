//go:build e2e

package docker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"golang.org/x/sys/unix"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/terminal"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
	"github.com/labctl/labctl/usecase/shell"
)

// shellTestContainer runs a plain container of the test image with the
// shell integration installed as the sandbox image installs it.
func shellTestContainer(t *testing.T, e *Engine) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b := make([]byte, 4)
	rand.Read(b)
	name := "labctl-shelltest-" + hex.EncodeToString(b)
	_, err := e.cli.ContainerCreate(ctx, &container.Config{
		Image: e2eImage(t), Cmd: []string{"sleep", "infinity"}, Env: []string{"LANG=C.UTF-8", "HOME=/root"},
		Labels: map[string]string{"dev.labctl.test": "shell"},
	}, &container.HostConfig{Init: ptr(true), Mounts: []mount.Mount{
		{Type: mount.TypeBind, Source: t.TempDir(), Target: sandbox.CheckerMount, ReadOnly: true},
	}}, nil, nil, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.cli.ContainerRemove(context.Background(), name, container.RemoveOptions{Force: true}) })
	if err := e.cli.ContainerStart(ctx, name, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("../../images/sandbox/labctl.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CopyFile(ctx, name, "/etc/profile.d/labctl.sh", 0o644, bytes.NewReader(script), int64(len(script))); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := e2eRun(t, e, name, ExecOptions{Cmd: []string{"sh", "-c", `echo '. /etc/profile.d/labctl.sh' >> /etc/bash.bashrc`}})
	if code != 0 {
		t.Fatalf("installing labctl.sh: %s", stderr)
	}
	return name
}

func ptr[T any](v T) *T { return &v }

func shellTestLab() *lab.Lab {
	yes := true
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "shelltest", Title: "Shell test"},
		Steps: []lab.Step{
			{ID: "one", Title: "Make one", Instructions: "Create /root/one.", Hints: []string{"touch /root/one"},
				Checks: []lab.Check{{Name: "one-exists", Points: 1, File: &lab.FileCheck{Path: "/root/one", Exists: &yes}}}},
			{ID: "two", Title: "Make two", Instructions: "Write done into /root/two.",
				Checks: []lab.Check{{Name: "two-done", Points: 1, File: &lab.FileCheck{Path: "/root/two", Contains: []string{"done"}}}}},
		},
	}
}

// TestE2EAttachedShell runs a session over a real PTY attached to a real
// container: prompts are marked, a step's checks run after a command and
// complete it, the lab function is answered, keys pass, the exit code comes
// back and the terminal is restored.
func TestE2EAttachedShell(t *testing.T) {
	e := e2eEngine(t)
	name := shellTestContainer(t, e)
	bin := e2etest.BuildLabctl(t)

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100})
	before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	var scr e2etest.Screen
	go io.Copy(&scr, ptmx)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	term, err := terminal.OpenTerminal(ctx, tty, tty)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if raw.Lflag&unix.ICANON != 0 || raw.Lflag&unix.ECHO != 0 {
		t.Fatalf("terminal not raw: lflag %#x", raw.Lflag)
	}
	attached, err := e.AttachShell(ctx, name, ShellOptions{Env: []string{"LABCTL_SHELL=1", "TERM=xterm"}, Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	l := shellTestLab()
	s, err := shell.New(shell.Config{
		Lab: l, Shell: attached, Terminal: term,
		Check: func(ctx context.Context, r checks.Round) ([]checks.Result, error) {
			return e2eCheckerRound(ctx, e, name, bin, checks.Request{Checks: r.Checks})
		},
		Progress: &shell.StoreProgress{Store: progress.NewStore(t.TempDir()), Lab: l},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(term.Context()) }()
	typeKeys := func(keys string) {
		t.Helper()
		if _, err := ptmx.WriteString(keys); err != nil {
			t.Fatal(err)
		}
	}

	scr.WaitFor(t, "Step 1/2: Make one", 1)
	scr.WaitFor(t, "\x1b]133;A\a", 1)
	typeKeys("echo 日本語テスト 한국어\r")
	scr.WaitFor(t, "日本語テスト 한국어\r\n\x1b]133;D;0\a", 1)

	// The checks run by themselves after a command and complete the step.
	typed := time.Now()
	typeKeys("touch /root/one\r")
	got := scr.WaitFor(t, "Next, step 2/2: Make two", 1)
	t.Logf("from the command to the completion banner: %v (debounce, two checker rounds, the pause between them)", time.Since(typed))
	if !strings.Contains(got, "✓ Step passed: Make one") {
		t.Fatalf("no completion banner:\n%s", got)
	}

	// The lab function: answered before the next prompt, request hidden.
	prompts := strings.Count(scr.String(), "\x1b]133;A\a")
	typed = time.Now()
	typeKeys("lab check\r")
	got = scr.WaitFor(t, "\x1b]133;A\a", prompts+1)
	t.Logf("lab check answered in %v", time.Since(typed))
	if i, j := strings.Index(got, "✗ two-done"), strings.LastIndex(got, "\x1b]133;A\a"); i < 0 || j < i {
		t.Fatalf("lab check's answer missing or after the prompt:\n%s", got)
	}
	if strings.Contains(got, "7707") {
		t.Fatalf("a private request reached the terminal:\n%q", got)
	}
	typeKeys("lab hint; echo rc=$?\r")
	scr.WaitFor(t, "rc=0", 1)
	scr.WaitFor(t, "This step has no hints.", 1)

	// The size reaches the PTY.
	if err := attached.Resize(ctx, 40, 120); err != nil {
		t.Fatal(err)
	}
	typeKeys("stty size\r")
	scr.WaitFor(t, "40 120\r\n\x1b]133;D;0\a", 1)

	// Ctrl-P reaches the program at once (no detach key holds it back),
	// Ctrl-C interrupts.
	typeKeys("cat -v\r")
	scr.WaitFor(t, "\x1b]133;C\a", 6)
	typeKeys("\x10")
	scr.WaitFor(t, "^P", 1)
	typeKeys("\r\x04")
	typeKeys("sleep 600\r")
	scr.WaitFor(t, "\x1b]133;C\a", 7)
	// The mark comes before bash forks sleep: a Ctrl-C that arrives before
	// sleep is the terminal's foreground process goes to bash, which
	// ignores it. Ctrl-C again until sleep is interrupted.
	interrupted := false
	for i := 0; i < 30 && !interrupted; i++ {
		typeKeys("\x03")
		interrupted = scr.Shows("\x1b]133;D;130\a", 1, 2*time.Second)
	}
	if !interrupted {
		scr.WaitFor(t, "\x1b]133;D;130\a", 1)
	}

	typeKeys("exit 3\r")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("session: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the session did not end after exit")
	}
	code, err := attached.ExitCode(ctx)
	if err != nil || code != 3 {
		t.Fatalf("exit code %d, %v; want 3", code, err)
	}
	term.Restore()
	after, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Fatalf("terminal not restored:\nbefore %+v\nafter  %+v", *before, *after)
	}
}
