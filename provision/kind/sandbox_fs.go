package kind

import (
	"context"
	"errors"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/provision/docker"
)

// SandboxFS is the sandbox container's file system as the engine sees it,
// read from the host's side through the engine's archive API: nothing runs
// in the sandbox, and the engine resolves every path within the
// container's own file system (its image, its writes and its volumes; the
// /proc, /sys and /dev of its processes are not in that view).
func (k *kindRuntime) SandboxFS() checks.SandboxFS {
	return engineFS{engine: k.engine, container: k.container}
}

type engineFS struct {
	engine    *docker.Engine
	container string
}

func (f engineFS) Lstat(ctx context.Context, p string) (checks.SandboxStat, error) {
	st, err := f.engine.StatPath(ctx, f.container, p)
	if err != nil {
		return checks.SandboxStat{}, err
	}
	return checks.SandboxStat{Mode: st.Mode, Size: st.Size, ModTime: st.ModTime, LinkTarget: st.LinkTarget}, nil
}

func (f engineFS) ReadFile(ctx context.Context, p string, limit int64) ([]byte, error) {
	return readAs(f.engine.ReadRegular(ctx, f.container, p, limit))
}

func (f engineFS) ReadTree(ctx context.Context, p string, limit int64) ([]byte, error) {
	return readAs(f.engine.ReadTree(ctx, f.container, p, limit))
}

// readAs gives the engine's read errors the meaning the checks give them.
func readAs(data []byte, err error) ([]byte, error) {
	switch {
	case errors.Is(err, docker.ErrTooLarge):
		return nil, checks.ErrTooLarge
	case errors.Is(err, docker.ErrNotRegular):
		return nil, checks.ErrChanged
	}
	return data, err
}
