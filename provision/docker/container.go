package docker

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/labctl/labctl/sandbox"
)

// callTimeout bounds one ordinary Docker API call.
const callTimeout = 2 * time.Minute

func bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, callTimeout)
}

// ErrImageMissing says the sandbox image is not in the local image store.
var ErrImageMissing = errors.New("image missing")

// EnsureVolume creates the named volume with labels unless it exists, and
// reports whether it created it. An existing volume is reused only when it
// carries the same labels: one that belongs to something else is an error.
func (e *Engine) EnsureVolume(ctx context.Context, name string, labels map[string]string) (created bool, err error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	v, err := e.cli.VolumeInspect(ctx, name)
	if err == nil {
		for k, want := range labels {
			if v.Labels[k] != want {
				return false, fmt.Errorf("volume %s exists but is not labctl's (label %s=%q, want %q): remove it with `docker volume rm %s`", name, k, v.Labels[k], want, name)
			}
		}
		return false, nil
	}
	if !client.IsErrNotFound(err) {
		return false, fmt.Errorf("inspecting volume %s: %w", name, err)
	}
	if _, err := e.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: labels}); err != nil {
		return false, fmt.Errorf("creating volume %s: %w", name, err)
	}
	return true, nil
}

// RemoveVolume removes a volume; a missing one is not an error.
func (e *Engine) RemoveVolume(ctx context.Context, name string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	if err := e.cli.VolumeRemove(ctx, name, true); err != nil && !client.IsErrNotFound(err) {
		return fmt.Errorf("removing volume %s: %w", name, err)
	}
	return nil
}

// EnsureSandbox makes the container described by spec run. A running
// container (not paused nor restarting) with the same image and spec hash is
// reused; anything else under the name is removed and created afresh. It
// reports whether it created one. It does not run anything in a container
// it reuses: RemoveUnresponsive probes the sandbox first.
func (e *Engine) EnsureSandbox(ctx context.Context, spec sandbox.Spec) (created bool, err error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	img, err := e.cli.ImageInspect(ctx, spec.Config.Image)
	if err != nil {
		if client.IsErrNotFound(err) {
			return false, fmt.Errorf("sandbox image %s: %w: build it with `labctl images build --sandbox`", spec.Config.Image, ErrImageMissing)
		}
		return false, fmt.Errorf("inspecting sandbox image %s: %w", spec.Config.Image, err)
	}
	cur, err := e.cli.ContainerInspect(ctx, spec.Name)
	switch {
	case err == nil:
		healthy := stateReason(cur.State) == "" &&
			cur.Image == img.ID && cur.Config != nil && cur.Config.Labels[sandbox.LabelSpecHash] == spec.Hash
		if healthy {
			return false, nil
		}
		if cur.Config != nil && cur.Config.Labels[sandbox.LabelLab] != spec.Config.Labels[sandbox.LabelLab] {
			return false, fmt.Errorf("container %s exists but is not this lab's: remove it with `docker rm -f %s`", spec.Name, spec.Name)
		}
		if err := e.Remove(ctx, spec.Name); err != nil {
			return false, err
		}
	case !client.IsErrNotFound(err):
		return false, fmt.Errorf("inspecting container %s: %w", spec.Name, err)
	}
	if _, err := e.cli.NetworkInspect(ctx, string(spec.Host.NetworkMode), network.InspectOptions{}); err != nil {
		return false, fmt.Errorf("network %s of the sandbox: %w (it is created with the kind cluster: run `labctl up`)", spec.Host.NetworkMode, err)
	}
	resp, err := e.cli.ContainerCreate(ctx, spec.Config, spec.Host, spec.Network, nil, spec.Name)
	if err != nil {
		return false, fmt.Errorf("creating container %s: %w", spec.Name, err)
	}
	if err := e.cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		return true, fmt.Errorf("starting container %s: %w", spec.Name, err)
	}
	return true, nil
}

// Remove force-removes a container; a missing one is not an error.
func (e *Engine) Remove(ctx context.Context, name string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	err := e.cli.ContainerRemove(ctx, name, container.RemoveOptions{Force: true})
	if err != nil && !client.IsErrNotFound(err) {
		return fmt.Errorf("removing container %s: %w", name, err)
	}
	return nil
}

// ContainerState is a container's state as status reports it.
type ContainerState struct {
	// ID is the container's ID; a recreated container has another.
	ID      string
	Exists  bool
	Running bool
	Image   string
	Status  string
}

// State reports whether a container exists and runs.
func (e *Engine) State(ctx context.Context, name string) (ContainerState, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	c, err := e.cli.ContainerInspect(ctx, name)
	if client.IsErrNotFound(err) {
		return ContainerState{}, nil
	}
	if err != nil {
		return ContainerState{}, fmt.Errorf("inspecting container %s: %w", name, err)
	}
	return stateOf(c), nil
}

// stateOf is the state of an inspected container.
func stateOf(c container.InspectResponse) ContainerState {
	st := ContainerState{ID: c.ID, Exists: true}
	if c.State != nil {
		st.Running, st.Status = c.State.Running, c.State.Status
	}
	if c.Config != nil {
		st.Image = c.Config.Image
	}
	return st
}

// Object is one Docker object found by label.
type Object struct {
	Kind   string // "container", "volume" or "network"
	Name   string
	ID     string
	Labels map[string]string
}

// ListByLabel lists every container (running or not), volume and network
// carrying all the given labels, sorted by kind and name.
func (e *Engine) ListByLabel(ctx context.Context, labels map[string]string) ([]Object, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	f := filters.NewArgs()
	for k, v := range labels {
		f.Add("label", k+"="+v)
	}
	var out []Object
	cs, err := e.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("listing containers: %w", err)
	}
	for _, c := range cs {
		name := c.ID
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, Object{Kind: "container", Name: name, ID: c.ID, Labels: c.Labels})
	}
	vs, err := e.cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("listing volumes: %w", err)
	}
	for _, v := range vs.Volumes {
		out = append(out, Object{Kind: "volume", Name: v.Name, ID: v.Name, Labels: v.Labels})
	}
	ns, err := e.cli.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("listing networks: %w", err)
	}
	for _, n := range ns {
		out = append(out, Object{Kind: "network", Name: n.Name, ID: n.ID, Labels: n.Labels})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// RemoveNetwork removes a network; a missing one is not an error.
func (e *Engine) RemoveNetwork(ctx context.Context, name string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	if err := e.cli.NetworkRemove(ctx, name); err != nil && !client.IsErrNotFound(err) {
		return fmt.Errorf("removing network %s: %w", name, err)
	}
	return nil
}

// NetworkExists reports whether the Docker network exists.
func (e *Engine) NetworkExists(ctx context.Context, name string) (bool, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	_, err := e.cli.NetworkInspect(ctx, name, network.InspectOptions{})
	if client.IsErrNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("inspecting network %s: %w", name, err)
	}
	return true, nil
}

// SandboxState is State and, for a sandbox that runs, SandboxSettings, from
// one look at the container.
func (e *Engine) SandboxState(ctx context.Context, name string) (ContainerState, sandbox.Settings, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	c, err := e.cli.ContainerInspect(ctx, name)
	if client.IsErrNotFound(err) {
		return ContainerState{}, sandbox.Settings{}, nil
	}
	if err != nil {
		return ContainerState{}, sandbox.Settings{}, fmt.Errorf("inspecting container %s: %w", name, err)
	}
	st := stateOf(c)
	if !st.Running {
		return st, sandbox.Settings{}, nil
	}
	s, err := settingsOf(name, c)
	return st, s, err
}

// SandboxSettings recovers the Settings a sandbox container was created
// with, so it can be recreated the same way.
func (e *Engine) SandboxSettings(ctx context.Context, name string) (sandbox.Settings, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	c, err := e.cli.ContainerInspect(ctx, name)
	if err != nil {
		return sandbox.Settings{}, fmt.Errorf("inspecting container %s: %w", name, err)
	}
	return settingsOf(name, c)
}

// settingsOf reads the Settings of sandbox container name from its
// inspection.
func settingsOf(name string, c container.InspectResponse) (sandbox.Settings, error) {
	if c.Config == nil || c.HostConfig == nil || c.Config.Labels[sandbox.LabelRole] != sandbox.RoleSandbox {
		return sandbox.Settings{}, fmt.Errorf("container %s is not a labctl sandbox", name)
	}
	s := sandbox.Settings{
		Lab:     c.Config.Labels[sandbox.LabelLab],
		Image:   c.Config.Image,
		WorkDir: c.Config.WorkingDir,
		Network: string(c.HostConfig.NetworkMode),
	}
	for _, m := range c.HostConfig.Mounts {
		switch {
		case m.Type == mount.TypeBind && m.ReadOnly:
			s.FixturesDir, s.FixturesMount = m.Source, m.Target
		}
	}
	return s, nil
}

// ImagePresent reports whether an image is in the engine's local store.
func (e *Engine) ImagePresent(ctx context.Context, ref string) (bool, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	_, err := e.cli.ImageInspect(ctx, ref)
	if client.IsErrNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("inspecting image %s: %w", ref, err)
	}
	return true, nil
}

// stopTimeout is how long a stopped container's processes get to end before
// they are killed.
const stopTimeout = 10

// Stop stops a running container, keeping it; a stopped one is left as it
// is.
func (e *Engine) Stop(ctx context.Context, name string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	t := stopTimeout
	if err := e.cli.ContainerStop(ctx, name, container.StopOptions{Timeout: &t}); err != nil {
		return fmt.Errorf("stopping container %s: %w", name, err)
	}
	return nil
}

// Start starts a stopped container; a running one is left as it is.
func (e *Engine) Start(ctx context.Context, name string) error {
	ctx, cancel := bounded(ctx)
	defer cancel()
	if err := e.cli.ContainerStart(ctx, name, container.StartOptions{}); err != nil {
		return fmt.Errorf("starting container %s: %w", name, err)
	}
	return nil
}

// Addresses returns a container's IP address on each of its networks, by
// network name.
func (e *Engine) Addresses(ctx context.Context, name string) (map[string]string, error) {
	c, err := e.inspect(ctx, name)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	if c.NetworkSettings != nil {
		for net, ep := range c.NetworkSettings.Networks {
			if ep != nil && ep.IPAddress != "" {
				out[net] = ep.IPAddress
			}
		}
	}
	return out, nil
}
