package kind

import (
	"context"
	"errors"
	"io"

	"github.com/labctl/labctl/provision/docker"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// repairSandbox removes the lab's sandbox container when it exists but no
// longer runs a command (stopped, paused, restarting, its pids or memory
// used up), so that EnsureSandbox creates it again on the same home
// volume: the learner's /root is kept. It returns why it removed it, or "".
func (r *upRun) repairSandbox(ctx context.Context, name string) (string, error) {
	return r.engine.RemoveUnresponsive(ctx, name, r.lab.Metadata.Name)
}

// ErrNoHome says that the lab has no home volume to save.
var ErrNoHome = errors.New("the lab has no home volume")

// Home is the learner's /root of a lab, readable as a tar stream whether
// the sandbox runs, is stopped, or was taken down with its home kept.
type Home struct {
	engine    *docker.Engine
	container string
	reader    *docker.HomeReader
}

// OpenHome finds the lab's home: through its sandbox container when there
// is one, else through a container made only to read the home volume, from
// image (empty means the lab's sandbox image; it is never started). It returns ErrNoHome when
// the volume does not exist.
func OpenHome(ctx context.Context, l *lab.Lab, image string) (*Home, error) {
	if l == nil || l.Metadata.Name == "" {
		return nil, errors.New("provision: no lab given")
	}
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		return nil, err
	}
	name := l.Metadata.Name
	h := &Home{engine: engine, container: sandbox.ContainerName(name)}
	st, err := engine.State(ctx, h.container)
	if err != nil {
		engine.Close()
		return nil, err
	}
	if st.Exists {
		return h, nil
	}
	objs, err := engine.ListByLabel(ctx, sandbox.Labels(name, sandbox.RoleHome))
	if err != nil {
		engine.Close()
		return nil, err
	}
	found := false
	for _, o := range objs {
		found = found || (o.Kind == "volume" && o.Name == sandbox.VolumeName(name))
	}
	if !found {
		engine.Close()
		return nil, ErrNoHome
	}
	if image == "" {
		image = l.Sandbox.Image
	}
	if image == "" {
		image = images.SandboxRef()
	}
	h.reader, err = engine.NewHomeReader(ctx, "labctl-"+name+"-home-reader", image, sandbox.VolumeName(name), name)
	if err != nil {
		engine.Close()
		return nil, err
	}
	h.container = h.reader.Name
	return h, nil
}

// BackupHome streams /root out as a tar (entries root/...).
func (h *Home) BackupHome(ctx context.Context, w io.Writer) error {
	return copyHome(ctx, h.engine, h.container, w)
}

// Close removes the reading container, if one was made.
func (h *Home) Close() error {
	var err error
	if h.reader != nil {
		err = h.reader.Close()
	}
	h.engine.Close()
	return err
}
