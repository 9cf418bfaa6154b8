package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/docker/docker/client"
)

// PathStat describes a path of a container's file system as the engine
// sees it: its image's layers, its writes and its volumes (never the /proc,
// /sys or /dev of a running process).
type PathStat struct {
	Mode    fs.FileMode
	Size    int64
	ModTime time.Time
	// LinkTarget is where a link at the path points, as the engine
	// resolves it within the container's file system (absolute).
	LinkTarget string
}

// Errors of ReadRegular.
var (
	// ErrTooLarge: the file is larger than the limit; nothing was kept.
	ErrTooLarge = errors.New("larger than the limit")
	// ErrNotRegular: what the engine sent is not one regular file.
	ErrNotRegular = errors.New("not a regular file")
)

// StatPath describes p (absolute) in the container without following a
// link at p, from the engine's side: nothing runs in the container. A
// missing p is an error satisfying fs.ErrNotExist.
func (e *Engine) StatPath(ctx context.Context, containerName, p string) (PathStat, error) {
	st, err := e.cli.ContainerStatPath(ctx, containerName, p)
	if client.IsErrNotFound(err) {
		return PathStat{}, fmt.Errorf("%s in %s: %w", p, containerName, fs.ErrNotExist)
	}
	if err != nil && !client.IsErrConnectionFailed(err) && ctx.Err() == nil {
		// The engine follows a link at p to say where it leads; a loop
		// of links fails there, with no word of why (the request is a
		// HEAD, which has no body).
		return PathStat{}, fmt.Errorf("the container engine could not look up %s in the sandbox: a loop of symbolic links there, or a link it cannot follow, does this", p)
	}
	if err != nil {
		return PathStat{}, fmt.Errorf("looking up %s in %s: %w", p, containerName, err)
	}
	return PathStat{Mode: st.Mode, Size: st.Size, ModTime: st.Mtime, LinkTarget: st.LinkTarget}, nil
}

// ReadRegular reads the regular file p (absolute) of the container through
// the engine's archive, at most limit bytes, from the engine's side. The
// archive must hold exactly that one regular file: a link, a directory or
// a device put there since it was looked at is ErrNotRegular, and a file
// over limit is ErrTooLarge, read no further than its header. A missing p
// satisfies fs.ErrNotExist.
func (e *Engine) ReadRegular(ctx context.Context, containerName, p string, limit int64) ([]byte, error) {
	return e.readArchive(ctx, containerName, p, func(r io.Reader) ([]byte, error) { return readOneFile(r, path.Base(p), limit) })
}

// readArchive hands the engine's archive of p (absolute) in the container
// to read, within copyTimeout. A missing p satisfies fs.ErrNotExist.
func (e *Engine) readArchive(ctx context.Context, containerName, p string, read func(io.Reader) ([]byte, error)) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, copyTimeout)
	defer cancel()
	rc, _, err := e.cli.CopyFromContainer(ctx, containerName, p)
	if client.IsErrNotFound(err) {
		return nil, fmt.Errorf("%s in %s: %w", p, containerName, fs.ErrNotExist)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s of %s: %w", p, containerName, err)
	}
	defer rc.Close()
	return read(rc)
}

// readOneFile reads the archive's first entry, which must be the regular
// file name of at most limit bytes; the rest of the archive is not read.
func readOneFile(r io.Reader, name string, limit int64) ([]byte, error) {
	tr := tar.NewReader(r)
	h, err := tr.Next()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if h.Typeflag != tar.TypeReg || path.Clean(h.Name) != name {
		return nil, ErrNotRegular
	}
	if h.Size > limit {
		return nil, ErrTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(tr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, ErrTooLarge
	}
	return data, nil
}

// ReadTree reads the directory p (absolute) of the container through the
// engine's archive, from the engine's side, and returns the archive as the
// engine sends it (a tar whose entries are named below p's base name; the
// engine writes links as links, never following them), at most limit
// bytes: a longer archive is ErrTooLarge, read no further. An archive that
// does not start with the directory p (a link or a file put there since it
// was looked at) is ErrNotRegular. A missing p satisfies fs.ErrNotExist.
func (e *Engine) ReadTree(ctx context.Context, containerName, p string, limit int64) ([]byte, error) {
	return e.readArchive(ctx, containerName, p, func(r io.Reader) ([]byte, error) { return readTree(r, path.Base(p), limit) })
}

// readTree reads an archive of at most limit bytes whose first entry is
// the directory name.
func readTree(r io.Reader, name string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, ErrTooLarge
	}
	h, err := tar.NewReader(bytes.NewReader(data)).Next()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if h.Typeflag != tar.TypeDir || path.Clean(h.Name) != name {
		return nil, ErrNotRegular
	}
	return data, nil
}
