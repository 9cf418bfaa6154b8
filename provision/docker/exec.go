package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/labctl/labctl/sandbox"
)

// ExecOptions describe one process run in a container.
type ExecOptions struct {
	Cmd []string
	// Env is added to the container's environment (Docker exec inherits the
	// container's variables; set a variable to override it).
	Env     []string
	WorkDir string
	// User defaults to root.
	User string
	// Stdin, when set, is copied to the process and then closed.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// TTY gives the process a terminal; its output then arrives on Stdout only.
	TTY bool
	// Bare gives the process exactly Env, without the mark (sandbox.ExecMarkVar)
	// that lets a cancel find what it started: for the checker, whose
	// environment is cleared and which starts nothing that outlives it.
	// Cancelling ctx then kills the process alone.
	Bare bool
}

// Exec runs a process in a container and returns its exit code. Cancelling
// ctx detaches from the process and kills it, with every process it started
// that still carries its environment (see killExec).
func (e *Engine) Exec(ctx context.Context, containerName string, o ExecOptions) (int, error) {
	if len(o.Cmd) == 0 {
		return -1, errors.New("exec: no command given")
	}
	user := o.User
	if user == "" {
		user = "root"
	}
	env, mark := o.Env, ""
	if !o.Bare {
		mark = sandbox.NewExecMark()
		env = append(slices.Clip(o.Env), sandbox.ExecMarkVar+"="+mark)
	}
	cctx, cancel := bounded(ctx)
	created, err := e.cli.ContainerExecCreate(cctx, containerName, container.ExecOptions{
		User:         user,
		Tty:          o.TTY,
		AttachStdin:  o.Stdin != nil,
		AttachStdout: true,
		AttachStderr: true,
		Env:          env,
		WorkingDir:   o.WorkDir,
		Cmd:          o.Cmd,
	})
	if err != nil {
		cancel()
		return -1, fmt.Errorf("creating exec of %s in %s: %w", o.Cmd[0], containerName, err)
	}
	conn, err := e.cli.ContainerExecAttach(cctx, created.ID, container.ExecAttachOptions{Tty: o.TTY})
	cancel()
	if err != nil {
		return -1, fmt.Errorf("attaching to exec of %s in %s: %w", o.Cmd[0], containerName, err)
	}
	defer conn.Close()

	stdout, stderr := orDiscard(o.Stdout), orDiscard(o.Stderr)
	outDone := make(chan error, 1)
	go func() {
		var err error
		if o.TTY {
			_, err = io.Copy(stdout, conn.Reader)
		} else {
			_, err = stdcopy.StdCopy(stdout, stderr, conn.Reader)
		}
		outDone <- err
	}()
	if o.Stdin != nil {
		go func() {
			io.Copy(conn.Conn, o.Stdin)
			conn.CloseWrite()
		}()
	}

	select {
	case err := <-outDone:
		if err != nil && ctx.Err() == nil {
			return -1, fmt.Errorf("reading output of %s: %w", o.Cmd[0], err)
		}
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		conn.Close()
		e.killExec(containerName, created.ID, mark)
		return -1, fmt.Errorf("running %s in %s: %w", o.Cmd[0], containerName, ctx.Err())
	}
	return e.execExitCode(ctx, created.ID)
}

// execExitCode waits, bounded, for Docker to record the exec's exit code
// once its output has ended.
func (e *Engine) execExitCode(ctx context.Context, id string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 250*time.Millisecond) {
		st, err := e.cli.ContainerExecInspect(ctx, id)
		if err != nil {
			return -1, fmt.Errorf("inspecting exec: %w", err)
		}
		if !st.Running {
			return st.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return -1, fmt.Errorf("waiting for the exit code of an exec whose output ended: %w", ctx.Err())
		case <-time.After(delay):
		}
	}
}

// killExec kills a detached exec's process and what it started. Docker has
// no API for it: a second exec in the container kills every process that
// carries the exec's mark. When that exec cannot run (a container without
// sh), or the exec was Bare, it signals the host PID Docker reports, when
// the engine runs on this machine and that PID is in the container's
// control groups; the caller treats the process as gone either way.
func (e *Engine) killExec(containerName, id, mark string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := e.cli.ContainerExecInspect(ctx, id)
	if err != nil || !st.Running || st.Pid <= 1 {
		return
	}
	if mark != "" && e.runKiller(ctx, containerName, mark) == nil {
		return
	}
	if e.local() && inContainer(st.Pid, st.ContainerID) {
		_ = syscall.Kill(st.Pid, syscall.SIGKILL)
	}
}

// local says whether the engine listens on this machine's Unix socket,
// where the PIDs it reports are this machine's.
func (e *Engine) local() bool {
	return strings.HasPrefix(e.cli.DaemonHost(), "unix://")
}

// inContainer says whether host process pid is in the control groups of
// container id: a PID that an engine elsewhere, or in another PID
// namespace, reported would name some process of this machine's that is
// not the exec's.
func inContainer(pid int, id string) bool {
	if id == "" {
		return false
	}
	cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	return err == nil && strings.Contains(string(cg), id)
}

// runKiller runs killMarked in the container, as root, and waits for it.
func (e *Engine) runKiller(ctx context.Context, containerName, mark string) error {
	created, err := e.cli.ContainerExecCreate(ctx, containerName, container.ExecOptions{
		User: "root", AttachStdout: true, AttachStderr: true,
		Cmd: sandbox.KillMarkedCmd(mark),
	})
	if err != nil {
		return err
	}
	conn, err := e.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return err
	}
	defer conn.Close()
	// The container's sh is the learner's to replace: one that never ends
	// must not hold labctl past ctx.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := io.Copy(io.Discard, conn.Reader); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	code, err := e.execExitCode(ctx, created.ID)
	if err == nil && code != 0 {
		err = fmt.Errorf("the killer exited %d", code)
	}
	return err
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
