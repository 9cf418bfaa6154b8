package provision

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/labctl/labctl/internal/terminal"
)

// login is cmd run like the learner's shell runs it: as root, HOME=/root,
// in the lab's workDir.
func (e *Live) login(cmd []string, in io.Reader, out, errOut io.Writer) ExecOptions {
	return ExecOptions{Cmd: cmd, Env: []string{"HOME=/root"}, WorkDir: e.workDir(), User: "root",
		Stdin: in, Stdout: out, Stderr: errOut}
}

// RunScript runs a bash script in the sandbox as the learner would: a login
// shell, as root, HOME=/root, in the lab's workDir. It returns the script's
// exit code.
func (e *Live) RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	return e.rt.Exec(ctx, e.login([]string{"bash", "-l", "-c", script}, nil, stdout, stderr))
}

// RunScripts runs scripts one after another in one login shell of the
// sandbox (see runScripts).
func (e *Live) RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (failed, code int, err error) {
	return runScripts(scripts, stdout, started, func(cmd []string, out io.Writer) (int, error) {
		return e.rt.Exec(ctx, e.login(cmd, nil, out, stderr))
	})
}

// ExecLogin runs cmd in the sandbox like the learner's shell runs it, with
// the given streams, and returns its exit code.
func (e *Live) ExecLogin(ctx context.Context, cmd []string, in io.Reader, out, errOut io.Writer) (int, error) {
	return e.rt.Exec(ctx, e.login(cmd, in, out, errOut))
}

// AttachShell starts the learner's login shell (or o.Cmd) on a PTY in the
// sandbox, in the lab's workDir unless o says otherwise.
func (e *Live) AttachShell(ctx context.Context, o ShellOptions) (Shell, error) {
	if o.WorkDir == "" {
		o.WorkDir = e.workDir()
	}
	o.User = "root"
	o.Env = append([]string{"HOME=/root"}, o.Env...)
	return e.rt.Attach(ctx, o)
}

// ExecInTerminal runs cmd like ExecLogin does, on a PTY wired to the user's
// terminal (raw mode, its size followed); term is the TERM to give it.
func (e *Live) ExecInTerminal(ctx context.Context, cmd []string, in, out *os.File, term string) (int, error) {
	t, err := terminal.OpenTerminal(ctx, in, out)
	if err != nil {
		return -1, err
	}
	defer t.Restore()
	o := ShellOptions{Cmd: cmd}
	if term != "" {
		o.Env = []string{"TERM=" + term}
	}
	if rows, cols, err := t.Size(); err == nil {
		o.Rows, o.Cols = rows, cols
	}
	sh, err := e.AttachShell(ctx, o)
	if err != nil {
		return -1, err
	}
	defer sh.Close()
	go func() {
		defer restoreOnPanic(t)
		t.WatchSize(t.Context(), func(rows, cols uint) { _ = sh.Resize(t.Context(), rows, cols) })
	}()
	go func() {
		defer restoreOnPanic(t)
		_, _ = io.Copy(sh, t)
	}()
	outDone := make(chan error, 1)
	go func() {
		defer restoreOnPanic(t)
		_, err := io.Copy(t, sh)
		outDone <- err
	}()
	select {
	case <-outDone:
	case <-t.Context().Done():
		sh.Close()
		t.Restore()
		return -1, fmt.Errorf("running a command in the sandbox: %w", context.Cause(t.Context()))
	}
	t.Restore()
	return sh.ExitCode(ctx)
}

// restoreOnPanic gives the terminal back before a panic in a goroutine
// that touches it ends the program.
func restoreOnPanic(t *terminal.Terminal) {
	if p := recover(); p != nil {
		t.Restore()
		panic(p)
	}
}

// RunAdminScript runs a probe's script with the probe's identity, never in
// the sandbox (the runtime's RunAdminScript).
func (e *Live) RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error) {
	return e.rt.RunAdminScript(ctx, script, out)
}
