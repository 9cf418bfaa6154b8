package docker

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/docker/docker/client"
)

// Top lists the container's processes as the engine's host sees them: the
// engine runs the host's ps with psArgs and keeps the rows of the
// container's processes. Nothing runs inside the container.
func (e *Engine) Top(ctx context.Context, containerName string, psArgs []string) (titles []string, rows [][]string, err error) {
	top, err := e.cli.ContainerTop(ctx, containerName, psArgs)
	if client.IsErrNotFound(err) {
		return nil, nil, fmt.Errorf("listing the processes of %s: %w (%v)", containerName, fs.ErrNotExist, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("listing the processes of %s: %w", containerName, err)
	}
	return top.Titles, top.Processes, nil
}
