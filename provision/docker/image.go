package docker

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// ImageID returns the ID of the image ref in the engine's local store.
func (e *Engine) ImageID(ctx context.Context, ref string) (string, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	im, err := e.cli.ImageInspect(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("inspecting image %s: %w", ref, err)
	}
	return im.ID, nil
}

// SaveImages streams refs from the engine's local store as one `docker
// save` archive; ctx bounds the whole stream. Close the reader when done.
func (e *Engine) SaveImages(ctx context.Context, refs []string) (io.ReadCloser, error) {
	rc, err := e.cli.ImageSave(ctx, refs)
	if err != nil {
		return nil, fmt.Errorf("saving images %s: %w", strings.Join(refs, ", "), err)
	}
	return rc, nil
}
