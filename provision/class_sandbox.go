package provision

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/internal/docker"
)

// podSandbox is a learner's sandbox Pod on a class cluster, reached through
// the exec API with cfg: by the instructor's labctl, or by the learner's
// own with an invite.
type podSandbox struct {
	cfg *rest.Config
	cs  kubernetes.Interface
	ns  string
}

// Exec runs o.Cmd in the sandbox container with o's environment and
// directory (the exec API sets neither: shellCommand does).
func (p podSandbox) Exec(ctx context.Context, o docker.ExecOptions) (int, error) {
	return podExec{Namespace: p.ns, Pod: sandboxPod, Container: containerSandbox,
		Cmd:   shellCommand(docker.ShellOptions{Cmd: o.Cmd, Env: o.Env, WorkDir: o.WorkDir}, o.WorkDir),
		Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr}.run(ctx, p.cfg, p.cs)
}

// Attach starts o.Cmd on a PTY in the sandbox container.
func (p podSandbox) Attach(ctx context.Context, o docker.ShellOptions) (Shell, error) {
	return attachExecShell(ctx, p.cfg, p.cs, p.ns, shellCommand(o, o.WorkDir), o), nil
}

// WriteFile writes data to path in the sandbox through a shell, readable by
// root only, replacing the file at once.
func (p podSandbox) WriteFile(ctx context.Context, path string, data []byte) error {
	script := `set -e; umask 077; mkdir -p "$(dirname "$0")"; cat > "$0.labctl"; mv "$0.labctl" "$0"`
	var out bytes.Buffer
	code, err := podExec{Namespace: p.ns, Pod: sandboxPod, Container: containerSandbox,
		Cmd: []string{"sh", "-c", script, path}, Stdin: bytes.NewReader(data), Stdout: &out, Stderr: &out}.run(ctx, p.cfg, p.cs)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit %d: %s", code, lastLines(out.String(), 3))
	}
	if err != nil {
		return fmt.Errorf("in %s: %w", p.ns, err)
	}
	return nil
}

// shellCommand is o's command with its environment and directory, as the
// exec API runs it.
func shellCommand(o docker.ShellOptions, workDir string) []string {
	cmd := o.Cmd
	if len(cmd) == 0 {
		cmd = []string{"bash", "-l"}
	}
	if o.WorkDir != "" {
		workDir = o.WorkDir
	}
	env := append([]string{"env", "HOME=/root"}, o.Env...)
	return append(append(env, "sh", "-c", `cd "$0" && exec "$@"`, workDir), cmd...)
}

// ExecShell is a login shell on a PTY in a Pod, through the Kubernetes
// exec API: reading gives its output, writing types into it.
type ExecShell struct {
	out    *io.PipeReader
	in     *io.PipeWriter
	sizes  *sizeQueue
	cancel context.CancelFunc
	done   chan struct{}
	code   int
	err    error
	close  sync.Once
}

func attachExecShell(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns string, cmd []string, o docker.ShellOptions) *ExecShell {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &ExecShell{out: outR, in: inW, sizes: newSizeQueue(o.Rows, o.Cols), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.code, s.err = podExec{Namespace: ns, Pod: sandboxPod, Container: containerSandbox, Cmd: cmd,
			Stdin: inR, Stdout: outW, TTY: true, Sizes: s.sizes}.run(sctx, cfg, cs)
		s.sizes.close()
		outW.CloseWithError(io.EOF)
	}()
	return s
}

func (s *ExecShell) Read(p []byte) (int, error)  { return s.out.Read(p) }
func (s *ExecShell) Write(p []byte) (int, error) { return s.in.Write(p) }

// Resize sets the PTY's size.
func (s *ExecShell) Resize(_ context.Context, rows, cols uint) error {
	s.sizes.set(rows, cols)
	return nil
}

// Close detaches: the stream ends and the output with it.
func (s *ExecShell) Close() error {
	s.close.Do(func() {
		s.in.Close()
		s.cancel()
		s.out.Close()
	})
	return nil
}

// ExitCode waits for the shell to end and returns its exit code.
func (s *ExecShell) ExitCode(ctx context.Context) (int, error) {
	select {
	case <-s.done:
		if s.err != nil && !errors.Is(s.err, context.Canceled) {
			return -1, s.err
		}
		return s.code, nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}
