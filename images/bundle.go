package images

import (
	"context"
	"fmt"
	"io"
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
	list := []string{refs.Node, refs.Sandbox}
	return save(ctx, opts, list, "Saving "+strings.Join(list, " and ")+" to "+file, command{args: []string{"-o", file}})
}

// SaveTo writes refs, which must all be present, to w as one `docker save`
// tar, streaming: nothing of it is held in memory or on disk.
func SaveTo(ctx context.Context, opts Options, w io.Writer, refs []string) error {
	return save(ctx, opts, refs, "Saving "+strings.Join(refs, ", "), command{stdout: w})
}

// save runs `docker save` of refs with how's arguments (before the refs)
// and standard output.
func save(ctx context.Context, opts Options, refs []string, what string, how command) error {
	b, err := newBuilder(opts)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		ok, err := b.imageExists(ctx, ref)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("image %s is not present: run `labctl images build` first", ref)
		}
	}
	return b.progress.phase(ctx, what, func(ctx context.Context) error {
		args := append(append([]string{"docker", "save"}, how.args...), refs...)
		c := command{args: args, stdout: how.stdout, timeout: 30 * time.Minute, log: b.opts.Log}
		if _, err := c.run(ctx); err != nil {
			return fmt.Errorf("saving images: %w", err)
		}
		return nil
	})
}

// Load reads a bundle written by Save into the local engine and returns
// the images it held.
func Load(ctx context.Context, opts Options, file string) ([]string, error) {
	return load(ctx, opts, "Loading images from "+file, command{args: []string{"-i", file}})
}

// LoadFrom loads a `docker save` tar read from r into the local engine,
// streaming, and returns the images it held; what names r in the status
// line.
func LoadFrom(ctx context.Context, opts Options, r io.Reader, what string) ([]string, error) {
	return load(ctx, opts, "Loading images from "+what, command{stdin: r})
}

func load(ctx context.Context, opts Options, what string, how command) ([]string, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	var loaded []string
	err = b.progress.phase(ctx, what, func(ctx context.Context) error {
		c := command{args: append([]string{"docker", "load"}, how.args...), stdin: how.stdin, timeout: 30 * time.Minute, log: b.opts.Log}
		out, err := c.run(ctx)
		if err != nil {
			return fmt.Errorf("loading images: %w", err)
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

// Present returns the ID of each of refs the local engine has.
func Present(ctx context.Context, opts Options, refs []string) (map[string]string, error) {
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, ref := range refs {
		id, ok, err := b.inspectImage(ctx, ref, "{{.Id}}")
		if err != nil {
			return nil, err
		}
		if ok {
			ids[ref] = strings.TrimSpace(id)
		}
	}
	return ids, nil
}
