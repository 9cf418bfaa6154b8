package docker

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/labctl/labctl/internal/terminal"
)

// ExecInTerminal runs o.Cmd in the container with a PTY attached to the
// user's terminal (in and out): raw mode, the size followed on SIGWINCH,
// and the terminal always restored. It returns the process's exit code.
func (e *Engine) ExecInTerminal(ctx context.Context, containerName string, in, out *os.File, o ShellOptions) (int, error) {
	t, err := terminal.OpenTerminal(ctx, in, out)
	if err != nil {
		return -1, err
	}
	defer t.Restore()
	if rows, cols, err := t.Size(); err == nil {
		o.Rows, o.Cols = rows, cols
	}
	sh, err := e.AttachShell(ctx, containerName, o)
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
		return -1, fmt.Errorf("running a command in %s: %w", containerName, context.Cause(t.Context()))
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
