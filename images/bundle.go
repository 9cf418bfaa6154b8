package images

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Image is one labctl image in the local engine.
type Image struct {
	Ref     string
	ID      string
	Size    string
	Created string
	// Current is true for the images this labctl builds (NodeRef,
	// SandboxRef and their Debian base).
	Current bool
}

// List returns the labctl/* images in the local engine.
func List(ctx context.Context, opts Options) ([]Image, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	out, err := b.docker(ctx, time.Minute, "image", "ls", "--format", "{{.Repository}}:{{.Tag}}\t{{.ID}}\t{{.Size}}\t{{.CreatedSince}}")
	if err != nil {
		return nil, fmt.Errorf("listing images: %w", err)
	}
	return parseImageList(out), nil
}

func parseImageList(out string) []Image {
	current := map[string]bool{NodeRef(): true, SandboxRef(): true, baseRef(): true}
	var images []Image
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) != 4 || !strings.HasPrefix(f[0], "labctl/") {
			continue
		}
		images = append(images, Image{Ref: f[0], ID: f[1], Size: f[2], Created: f[3], Current: current[f[0]]})
	}
	return images
}

// Save writes refs (both must be present) into one tar file that Load
// reads on another machine.
func Save(ctx context.Context, opts Options, file string, refs Refs) error {
	b, err := newBuilder(opts)
	if err != nil {
		return err
	}
	for _, ref := range []string{refs.Node, refs.Sandbox} {
		ok, err := b.imageExists(ctx, ref)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("image %s is not present: run `labctl images build` first", ref)
		}
	}
	return b.progress.phase(ctx, "Saving "+refs.Node+" and "+refs.Sandbox+" to "+file, func(ctx context.Context) error {
		if _, err := b.docker(ctx, 30*time.Minute, "save", "-o", file, refs.Node, refs.Sandbox); err != nil {
			return fmt.Errorf("saving images: %w", err)
		}
		return nil
	})
}

// Load reads a bundle written by Save into the local engine and returns
// the images it held.
func Load(ctx context.Context, opts Options, file string) ([]string, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	var loaded []string
	err = b.progress.phase(ctx, "Loading images from "+file, func(ctx context.Context) error {
		out, err := b.docker(ctx, 30*time.Minute, "load", "-i", file)
		if err != nil {
			return fmt.Errorf("loading %s: %w", file, err)
		}
		for _, line := range strings.Split(out, "\n") {
			if ref, ok := strings.CutPrefix(strings.TrimSpace(line), "Loaded image: "); ok {
				loaded = append(loaded, ref)
			}
		}
		return nil
	})
	return loaded, err
}
