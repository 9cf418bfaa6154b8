//go:build e2e

package sandbox

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestE2ELabctlShell drives the real `labctl shell` binary in a pseudo
// terminal against the built-in lab, which must be up (`labctl up`). Its
// progress is kept in a fresh state directory, so the shell starts at step
// 1. It types step 1's commands and sees the step complete and step 2 appear
// without asking; `lab hint` and `lab check` answer; resizing the terminal
// reaches `stty size` inside; the shell's exit code is labctl's; and the
// terminal's modes are as before.
func TestE2ELabctlShell(t *testing.T) {
	bin := buildLabctl(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	probe := exec.CommandContext(ctx, bin, "exec", "--", "true")
	probe.Dir = root
	if out, err := probe.CombinedOutput(); err != nil {
		t.Fatalf("the built-in lab must be up for this test (run `labctl up` from %s): %v\n%s", root, err, out)
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "shell")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "LABCTL_STATE_DIR="+state, "LANG=C.UTF-8", "LC_ALL=", "LC_MESSAGES=",
		"TERM=xterm-256color", "NO_COLOR=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}()
	var scr screen
	go io.Copy(&scr, ptmx)
	typeKeys := func(keys string) {
		t.Helper()
		if _, err := ptmx.WriteString(keys); err != nil {
			t.Fatal(err)
		}
	}

	scr.waitFor(t, "ステップ 1/8: 宣言を入れるリポジトリを初期化する", 1)
	scr.waitFor(t, "\x1b]133;A\a", 1)
	typed := time.Now()
	for _, line := range []string{
		"mkdir -p /root/gitops/repo && cd /root/gitops/repo",
		"git init -q",
		`git config user.name "Lab Learner"; git config user.email "learner@example.com"`,
		`printf '# web\n' > README.md; git add README.md`,
		`git commit -q -m "Start the GitOps repository"; cd`,
	} {
		typeKeys(line + "\r")
	}
	got := scr.waitFor(t, "次はステップ 2/8", 1)
	t.Logf("from typing step 1's commands to the completion banner: %v", time.Since(typed))
	if !strings.Contains(got, "ステップ完了: 宣言を入れるリポジトリを初期化する") {
		t.Fatalf("no completion banner:\n%s", got)
	}

	typeKeys("lab hint\r")
	scr.waitFor(t, "ヒント 1/", 1)
	prompts := strings.Count(scr.String(), "\x1b]133;A\a")
	typed = time.Now()
	typeKeys("lab check\r")
	got = scr.waitFor(t, "\x1b]133;A\a", prompts+1)
	t.Logf("lab check answered in %v", time.Since(typed))
	if i, j := strings.Index(got, "ステップ 2/8 を確認しています"), strings.LastIndex(got, "\x1b]133;A\a"); i < 0 || j < i {
		t.Fatalf("lab check's answer missing or after the prompt:\n%s", got)
	}
	if strings.Contains(got, "7707") {
		t.Fatalf("a private request reached the terminal")
	}

	// Resizing the terminal reaches the shell (SIGWINCH to labctl).
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 41, Cols: 123}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(scr.String(), "41 123\r\n\x1b]133;D;0\a") {
		if time.Now().After(deadline) {
			t.Fatalf("stty size inside never showed 41 123:\n%s", scr.String())
		}
		typeKeys("stty size\r")
		time.Sleep(500 * time.Millisecond)
	}

	typeKeys("exit 5\r")
	select {
	case err := <-exited:
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 5 {
			t.Fatalf("labctl shell ended with %v; want exit status 5\n%s", err, scr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("labctl shell did not end after exit")
	}
	after, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Fatalf("terminal not restored:\nbefore %+v\nafter  %+v", *before, *after)
	}
}
