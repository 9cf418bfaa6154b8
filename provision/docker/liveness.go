package docker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"

	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/sandbox"
)

// ProbeTimeout bounds the liveness probe, one short process run in the
// container: a healthy sandbox answers in milliseconds, and one whose pids
// are used up fails at once or hangs.
const ProbeTimeout = 3 * time.Second

// Probe reports why a container cannot be used: "" when it runs a command
// and has pids left for more, else a short reason (paused, restarting,
// stopped, killed for lack of memory, it cannot start a process, its pids
// are used up). A missing container has no reason: there is nothing to
// repair. It costs one exec.
func (e *Engine) Probe(ctx context.Context, name string) (reason string, err error) {
	c, err := e.inspect(ctx, name)
	if client.IsErrNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if r := stateReason(c.State); r != "" {
		return r, nil
	}
	pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	// One process, which reads the container's pids from its cgroup
	// (v2, else v1): it must start, and leave headroom.
	var out, errOut strings.Builder
	code, err := e.Exec(pctx, name, ExecOptions{Cmd: append([]string{"cat"}, pidsFiles...), Stdout: &out, Stderr: &errOut})
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return probeReason(code, err, out.String(), errOut.String()), nil
}

// probeReason judges the probe's one process from its exit code, error and
// output. A runtime that cannot start the process (no pid left) does not
// always fail the exec: the engine reports exit code 126 with the runtime's
// complaint as output. cat itself exits 1 when one of the cgroup files is
// missing, which is normal (only v1's or v2's exist).
func probeReason(code int, err error, out, errOut string) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("a command did not finish within %s", ProbeTimeout)
	case err != nil:
		return "it cannot start a process: " + textsafe.FirstLine(err.Error())
	case code >= execCannotStart:
		// The sandbox's own cat may have written it: shown escaped.
		why := textsafe.FirstLine(out + "\n" + errOut)
		if why == "" {
			why = fmt.Sprintf("exit code %d", code)
		}
		return "it cannot start a process: " + why
	}
	return pidsReason(out)
}

// execCannotStart is the exit code from 126 up that the engine and shells
// give a command that could not be started.
const execCannotStart = 126

// pidsFiles are the cgroup files, v2 then v1, of a container's pids in use
// and its limit: cat prints those that exist.
var pidsFiles = []string{
	"/sys/fs/cgroup/pids.current", "/sys/fs/cgroup/pids.max",
	"/sys/fs/cgroup/pids/pids.current", "/sys/fs/cgroup/pids/pids.max",
}

// PidsHeadroom is how many pids a sandbox must have left to be usable: a
// kubectl, a git or the shell's next command each take several (a Go
// program's threads count). A learner whose processes hold more, such as a
// fork bomb stopped at the limit, has a sandbox that fails its commands.
const PidsHeadroom = 32

// pidsReason reads "current\nmax\n" from the cgroup files and says when
// fewer than PidsHeadroom pids are left; "" when more are, there is no
// limit, or the files say nothing.
func pidsReason(out string) string {
	f := strings.Fields(out)
	if len(f) != 2 {
		return ""
	}
	cur, err1 := strconv.ParseInt(f[0], 10, 64)
	limit, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || cur+PidsHeadroom <= limit {
		return ""
	}
	return fmt.Sprintf("its processes use %d of its %d pids", cur, limit)
}

// stateReason says why a container in state s cannot run commands, or "".
func stateReason(s *container.State) string {
	switch {
	case s == nil:
		return "its state is unknown"
	case s.Paused:
		return "it is paused"
	case s.Restarting:
		return "it is restarting"
	case s.OOMKilled && !s.Running:
		return "it was killed for lack of memory"
	case s.Dead:
		return "it is dead"
	case !s.Running:
		return "it is stopped"
	}
	return ""
}

// RemoveUnresponsive removes the lab's container name when it exists but
// no longer runs commands, and says why; its volumes are kept, so creating
// it again resumes the learner's work. A container of another lab is an
// error and is left alone.
func (e *Engine) RemoveUnresponsive(ctx context.Context, name, lab string) (reason string, err error) {
	reason, err = e.Probe(ctx, name)
	if err != nil || reason == "" {
		return "", err
	}
	c, err := e.inspect(ctx, name)
	if err != nil {
		return "", err
	}
	if c.Config == nil || c.Config.Labels[sandbox.LabelLab] != lab {
		return "", fmt.Errorf("container %s exists but is not this lab's: remove it with `docker rm -f %s`", name, name)
	}
	if c.State != nil && c.State.Paused {
		// Older engines refuse to kill a paused container.
		uctx, cancel := bounded(ctx)
		_ = e.cli.ContainerUnpause(uctx, name)
		cancel()
	}
	if err := e.Remove(ctx, name); err != nil {
		return "", err
	}
	return reason, nil
}

func (e *Engine) inspect(ctx context.Context, name string) (container.InspectResponse, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	return e.cli.ContainerInspect(ctx, name)
}

// HomeReader is a container, created and never started, that mounts a
// lab's home volume at /root so that its files can be copied out when the
// sandbox is gone.
type HomeReader struct {
	e    *Engine
	Name string
}

// NewHomeReader creates the container name from image (any image present
// will do: it never runs) with volume at /root, labelled with the lab.
func (e *Engine) NewHomeReader(ctx context.Context, name, image, volume, lab string) (*HomeReader, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	if err := e.Remove(ctx, name); err != nil {
		return nil, err
	}
	cfg := &container.Config{
		Image:      image,
		Entrypoint: []string{"true"},
		Labels:     sandbox.Labels(lab, "home-reader"),
	}
	host := &container.HostConfig{
		NetworkMode: "none",
		Mounts:      []mount.Mount{{Type: mount.TypeVolume, Source: volume, Target: "/root", ReadOnly: true}},
	}
	if _, err := e.cli.ContainerCreate(ctx, cfg, host, nil, nil, name); err != nil {
		if client.IsErrNotFound(err) {
			return nil, fmt.Errorf("image %s, needed to read the home volume %s, is not present: load it (`labctl images load FILE`) or build it with `labctl images build --sandbox`", image, volume)
		}
		return nil, fmt.Errorf("creating a container to read the home volume %s: %w", volume, err)
	}
	return &HomeReader{e: e, Name: name}, nil
}

// Close removes the container.
func (h *HomeReader) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return h.e.Remove(ctx, h.Name)
}
