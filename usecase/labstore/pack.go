package labstore

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/labctl/labctl/internal/bundle"
	"github.com/labctl/labctl/lab"
)

// BundleSuffix ends the name of a bundle file.
const BundleSuffix = ".labctl.tar"

// BundleName is the bundle file's default name for lab l:
// <name>-<version>.labctl.tar, or <name>.labctl.tar for a lab without a
// version.
func BundleName(l *lab.Lab) string {
	if v := l.Metadata.Version; v != "" && filepath.Base(v) == v && v != "." && v != ".." {
		return l.Metadata.Name + "-" + v + BundleSuffix
	}
	return l.Metadata.Name + BundleSuffix
}

// PackOptions say what Pack writes.
type PackOptions struct {
	// LabFile is the lab's file and Lab the lab loaded from it.
	LabFile string
	Lab     *lab.Lab
	// Output is the bundle file to write (replaced when it exists).
	Output string
	// Labctl is this labctl's version, recorded in the manifest.
	Labctl string
	// Images are the images the bundle holds, and SaveImages writes them
	// as one `docker save` tar.
	Images     []bundle.Image
	SaveImages func(ctx context.Context, w io.Writer) error
}

// Pack writes the lab and its images into one bundle file, through a
// temporary file beside it: on any error or interrupt the output is left
// as it was.
func Pack(ctx context.Context, o PackOptions) (m *bundle.Manifest, err error) {
	if o.Lab.Metadata.Name == BuiltIn {
		return nil, fmt.Errorf("lab %s is built into every labctl and needs no bundle: to carry its images, use `labctl images save FILE`", BuiltIn)
	}
	for _, im := range o.Images {
		if ReservedImage(im.Ref) {
			return nil, fmt.Errorf("image %s is labctl's own, and a bundle never carries it (install refuses it): leave it out, and move it with `labctl images save` and `labctl images load`", im.Ref)
		}
	}
	// The lab is read once; what was read is written to a private
	// directory, hashed and packed from there.
	read, l, err := Read(o.LabFile)
	if err != nil {
		return nil, err
	}
	if l.Metadata.Name != o.Lab.Metadata.Name {
		return nil, fmt.Errorf("%s changed while it was packed: pack it again", o.LabFile)
	}
	dir, err := os.MkdirTemp("", "labctl-pack-")
	if err != nil {
		return nil, fmt.Errorf("packing the lab: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := read.Write(filepath.Join(dir, "lab"), LabFile); err != nil {
		return nil, fmt.Errorf("packing the lab: %w", err)
	}
	dir = filepath.Join(dir, "lab")
	files := Files(read)
	digest := DigestOf(read)
	out, err := os.CreateTemp(filepath.Dir(o.Output), "."+filepath.Base(o.Output)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("writing the bundle: %w", err)
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(out.Name())
		}
	}()
	m, err = bundle.Write(ctx, out, bundle.WriteOptions{
		LabDir: dir,
		Files:  files,
		Lab: bundle.Lab{
			Name: o.Lab.Metadata.Name, Title: o.Lab.Metadata.Title, Version: o.Lab.Metadata.Version, Digest: digest,
		},
		Labctl:     o.Labctl,
		Images:     o.Images,
		SaveImages: o.SaveImages,
	})
	if err != nil {
		return nil, err
	}
	if err := out.Chmod(0o644); err != nil {
		return nil, err
	}
	if err := out.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(out.Name(), o.Output); err != nil {
		return nil, fmt.Errorf("writing the bundle: %w", err)
	}
	return m, nil
}
