//go:build e2e

package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/internal/msg"
)

// shellE2ELab is the name of this test's copy of the built-in lab, so its
// cluster, sandbox and volume stay apart from every other lab's.
const shellE2ELab = "shell-e2e"

// TestE2ELabctlShell drives the real `labctl shell` binary in a pseudo
// terminal against a copy of the built-in lab that it brings up (and takes
// down at the end). Progress is kept in a fresh state directory, so the
// shell starts at step 1. It types step 1's commands and sees the step
// complete and step 2 appear without asking; `lab hint` and `lab check`
// answer; resizing the terminal reaches `stty size` inside; the shell's exit
// code is labctl's; and the terminal's modes are as before.
func TestE2ELabctlShell(t *testing.T) {
	bin := e2etest.BuildLabctl(t)
	labFile, l := e2etest.CopyLab(t, t.TempDir(), shellE2ELab)
	state := t.TempDir()
	if l.Metadata.Language != "ja" || len(l.Steps) < 2 {
		t.Fatalf("this test expects the built-in Japanese lab with steps to go through; lab.yaml is %s with %d steps", l.Metadata.Language, len(l.Steps))
	}
	cat := msg.New(msg.Japanese) // LANG=C.UTF-8 and a Japanese lab

	upCtx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	started := time.Now()
	e2etest.NewLabctl(t, bin, labFile, state).UpFresh(upCtx)
	t.Logf("labctl up took %v", time.Since(started))

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
	cmd := exec.Command(bin, "--lab", labFile, "shell", "--watch")
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
	var scr e2etest.Screen
	go io.Copy(&scr, ptmx)
	typeKeys := func(keys string) {
		t.Helper()
		if _, err := ptmx.WriteString(keys); err != nil {
			t.Fatal(err)
		}
	}

	n := len(l.Steps)
	first, second := l.Steps[0], l.Steps[1]
	scr.WaitFor(t, fmt.Sprintf("ステップ 1/%d: %s", n, first.Title), 1)
	scr.WaitFor(t, "\x1b]133;A\a", 1)
	// Type step 1's solve script line by line, as a learner would, without
	// its `set -e` (which would end an interactive shell at the first error).
	typed := time.Now()
	for _, line := range strings.Split(strings.TrimSpace(first.Solve), "\n") {
		if !strings.HasPrefix(line, "set -") {
			typeKeys(line + "\r")
		}
	}
	typeKeys("cd\r")
	got := scr.WaitFor(t, fmt.Sprintf(cat.NextStep, 2, n, second.Title), 1)
	t.Logf("from typing step 1's commands to the completion banner: %v", time.Since(typed))
	if !strings.Contains(got, fmt.Sprintf(cat.StepPassed, first.Title)) {
		t.Fatalf("no completion banner:\n%s", got)
	}

	// Each answer ends with a fresh prompt: count them to know when one is
	// complete (the hint's text comes before its prompt).
	prompts := strings.Count(scr.String(), "\x1b]133;A\a")
	typeKeys("lab hint\r")
	scr.WaitFor(t, "ヒント 1/", 1)
	scr.WaitFor(t, "\x1b]133;A\a", prompts+1)
	typed = time.Now()
	typeKeys("lab check\r")
	got = scr.WaitFor(t, "\x1b]133;A\a", prompts+2)
	t.Logf("lab check answered in %v", time.Since(typed))
	checking := fmt.Sprintf(cat.Checking, 2, n, second.Title)
	if i, j := strings.Index(got, checking), strings.LastIndex(got, "\x1b]133;A\a"); i < 0 || j < i {
		t.Fatalf("lab check's answer missing or after the prompt:\n%s", got)
	}
	if strings.Contains(got, "7707") {
		t.Fatalf("a private request reached the terminal")
	}

	// --watch: an edit of the lab's file reaches the shell; a broken one
	// keeps the lab and says why.
	orig, err := os.ReadFile(labFile)
	if err != nil {
		t.Fatal(err)
	}
	edited := second.Title + " (edited)"
	if !strings.Contains(string(orig), "title: "+second.Title+"\n") {
		t.Fatalf("step 2's title %q is not written as a plain scalar in %s", second.Title, labFile)
	}
	if err := os.WriteFile(labFile, []byte(strings.Replace(string(orig), "title: "+second.Title+"\n", "title: "+edited+"\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := time.Now()
	reloaded := fmt.Sprintf(cat.LabReloaded, "lab.yaml", n)
	for !strings.Contains(scr.String(), reloaded) {
		if time.Since(saved) > time.Minute {
			t.Fatalf("the shell never said %q:\n%s", reloaded, scr.String())
		}
		typeKeys("true\r")
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("from saving the edit to the shell saying so: %v", time.Since(saved))
	prompts = strings.Count(scr.String(), "\x1b]133;A\a")
	typeKeys("lab step\r")
	scr.WaitFor(t, fmt.Sprintf(cat.ShellStep, 2, n, edited), 1)
	scr.WaitFor(t, "\x1b]133;A\a", prompts+1)
	if err := os.WriteFile(labFile, append(append([]byte(nil), orig...), "\nsteps: [oops\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	stays := strings.SplitN(cat.LabNotReloaded, "%s", 3)[1]
	for saved = time.Now(); !strings.Contains(scr.String(), stays); time.Sleep(200 * time.Millisecond) {
		if time.Since(saved) > time.Minute {
			t.Fatalf("the shell never said %q:\n%s", stays, scr.String())
		}
		typeKeys("true\r")
	}
	prompts = strings.Count(scr.String(), "\x1b]133;A\a")
	typeKeys("lab step\r")
	scr.WaitFor(t, "\x1b]133;A\a", prompts+1)
	if !strings.Contains(scr.String()[strings.LastIndex(scr.String(), fmt.Sprintf(cat.ShellStep, 2, n, "")):], edited) {
		t.Errorf("after a broken edit lab step does not show the last good lab's title %q", edited)
	}
	if err := os.WriteFile(labFile, orig, 0o644); err != nil {
		t.Fatal(err)
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
