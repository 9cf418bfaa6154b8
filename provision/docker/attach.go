package docker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
)

// shellDetachKeys replace Docker's default detach keys (Ctrl-P Ctrl-Q, which
// hold back every Ctrl-P until the next key). An empty setting means the
// default, so the shell names a sequence nobody types; the cost is that a
// lone Ctrl-], rare in a shell, reaches it with the next key.
const shellDetachKeys = "ctrl-],ctrl-^,ctrl-],ctrl-^,ctrl-],ctrl-^"

// ShellOptions describe a login shell attached through a PTY.
type ShellOptions struct {
	// Cmd defaults to bash -l.
	Cmd []string
	// Env is added to the container's environment, e.g. LABCTL_SHELL=1 and TERM.
	Env []string
	// WorkDir defaults to /root; User to root.
	WorkDir, User string
	// Rows and Cols are the PTY's first size; 0 leaves Docker's default.
	Rows, Cols uint
}

// AttachedShell is a process running with a PTY in a container, attached
// through a hijacked connection: reading gives its output, writing types
// into it.
type AttachedShell struct {
	engine *Engine
	id     string
	conn   types.HijackedResponse
	close  sync.Once
}

// AttachShell starts o.Cmd in the container with a PTY and attaches to it.
func (e *Engine) AttachShell(ctx context.Context, containerName string, o ShellOptions) (*AttachedShell, error) {
	cmd := o.Cmd
	if len(cmd) == 0 {
		cmd = []string{"bash", "-l"}
	}
	opts := shellExecOptions(cmd, o)
	cctx, cancel := bounded(ctx)
	defer cancel()
	created, err := e.cli.ContainerExecCreate(cctx, containerName, opts)
	if err != nil {
		return nil, fmt.Errorf("creating a shell in %s: %w", containerName, err)
	}
	conn, err := e.cli.ContainerExecAttach(cctx, created.ID, container.ExecAttachOptions{Tty: true, ConsoleSize: opts.ConsoleSize})
	if err != nil {
		return nil, fmt.Errorf("attaching to the shell in %s: %w", containerName, err)
	}
	return &AttachedShell{engine: e, id: created.ID, conn: conn}, nil
}

// shellExecOptions is the exec a shell runs as: a TTY with stdin, as root
// in /root unless told otherwise.
func shellExecOptions(cmd []string, o ShellOptions) container.ExecOptions {
	user, dir := o.User, o.WorkDir
	if user == "" {
		user = "root"
	}
	if dir == "" {
		dir = "/root"
	}
	opts := container.ExecOptions{
		User:         user,
		Tty:          true,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		DetachKeys:   shellDetachKeys,
		Env:          o.Env,
		WorkingDir:   dir,
		Cmd:          cmd,
	}
	if o.Rows > 0 && o.Cols > 0 {
		opts.ConsoleSize = &[2]uint{o.Rows, o.Cols}
	}
	return opts
}

// Read reads the shell's output (raw: a PTY merges stdout and stderr).
func (s *AttachedShell) Read(p []byte) (int, error) { return s.conn.Reader.Read(p) }

// Write types p into the shell.
func (s *AttachedShell) Write(p []byte) (int, error) { return s.conn.Conn.Write(p) }

// Close detaches from the shell; its output then ends.
func (s *AttachedShell) Close() error {
	s.close.Do(s.conn.Close)
	return nil
}

// Resize sets the PTY's size. It fails while the process has not started.
func (s *AttachedShell) Resize(ctx context.Context, rows, cols uint) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := s.engine.cli.ContainerExecResize(ctx, s.id, container.ResizeOptions{Height: rows, Width: cols}); err != nil {
		return fmt.Errorf("resizing the shell's terminal: %w", err)
	}
	return nil
}

// ExitCode waits, bounded, for the shell's exit code once its output ended.
func (s *AttachedShell) ExitCode(ctx context.Context) (int, error) {
	code, err := s.engine.execExitCode(ctx, s.id)
	if err != nil {
		return -1, fmt.Errorf("reading the shell's exit code: %w", err)
	}
	return code, nil
}
