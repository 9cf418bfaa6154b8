package class

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/labctl/labctl/internal/podexec"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/sandbox"
)

// podSandbox is a learner's sandbox Pod on a class cluster, reached through
// the exec API with cfg: by the instructor's labctl, or by the learner's
// own with an invite.
type podSandbox struct {
	learnerPods
}

// Exec runs o.Cmd in the sandbox container with o's environment and
// directory (the exec API sets neither: shellCommand does). Cancelling ctx
// kills the process and what it started, as on Docker (the exec API only
// closes the streams): the process carries a mark in its environment, and a
// second exec kills what holds it.
func (p podSandbox) Exec(ctx context.Context, o provision.ExecOptions) (int, error) {
	mark := sandbox.NewExecMark()
	env := append(slices.Clip(o.Env), sandbox.ExecMarkVar+"="+mark)
	code, _, err := p.run(ctx, podCommand{pod: sandboxPod, container: containerSandbox,
		cmd:   shellCommand(provision.ShellOptions{Cmd: o.Cmd, Env: env, WorkDir: o.WorkDir}, o.WorkDir),
		stdin: o.Stdin, stdout: o.Stdout, stderr: o.Stderr})
	if ctx.Err() != nil {
		kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killWait)
		_, _, _ = p.run(kctx, podCommand{pod: sandboxPod, container: containerSandbox, cmd: sandbox.KillMarkedCmd(mark)})
		cancel()
	}
	return code, err
}

// killWait bounds the exec that kills what a cancelled exec left running.
const killWait = 10 * time.Second

// Attach starts o.Cmd on a PTY in the sandbox container.
func (p podSandbox) Attach(ctx context.Context, o provision.ShellOptions) (provision.Shell, error) {
	return podexec.Attach(ctx, p.cfg, p.cs, p.ns, sandboxPod, containerSandbox, shellCommand(o, o.WorkDir), o.Rows, o.Cols), nil
}

// WriteFile writes data to path in the sandbox through a shell, readable by
// root only, replacing the file at once.
func (p podSandbox) WriteFile(ctx context.Context, path string, data []byte) error {
	script := `set -e; umask 077; mkdir -p "$(dirname "$0")"; cat > "$0.labctl"; mv "$0.labctl" "$0"`
	code, out, err := p.run(ctx, podCommand{pod: sandboxPod, container: containerSandbox,
		cmd: []string{"sh", "-c", script, path}, stdin: bytes.NewReader(data), wait: fileWait})
	if err == nil && code != 0 {
		err = fmt.Errorf("exit %d: %s", code, out.LastLines(3))
	}
	if err != nil {
		return fmt.Errorf("in %s: %w", p.ns, err)
	}
	return nil
}

// shellCommand is o's command with its environment and directory, as the
// exec API runs it.
func shellCommand(o provision.ShellOptions, workDir string) []string {
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
