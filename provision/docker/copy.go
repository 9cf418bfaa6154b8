package docker

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
)

// copyTimeout bounds one copy into or out of a container.
const copyTimeout = 5 * time.Minute

// CopyFile writes size bytes from data to dstPath (absolute) in the
// container with the given mode, owned by root. Missing parent directories
// are created with mode 0755.
func (e *Engine) CopyFile(ctx context.Context, containerName, dstPath string, mode int64, data io.Reader, size int64) error {
	if !path.IsAbs(dstPath) || path.Clean(dstPath) != dstPath || dstPath == "/" {
		return fmt.Errorf("copying into %s: %q is not a clean absolute file path", containerName, dstPath)
	}
	ctx, cancel := context.WithTimeout(ctx, copyTimeout)
	defer cancel()
	base, missing, err := e.existingAncestor(ctx, containerName, path.Dir(dstPath))
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeTar(pw, missing, 0o755, relTo(base, dstPath), mode, data, size))
	}()
	err = e.cli.CopyToContainer(ctx, containerName, base, pr, container.CopyToContainerOptions{})
	pr.Close()
	if err != nil {
		return fmt.Errorf("copying %s into %s: %w", dstPath, containerName, err)
	}
	return nil
}

// existingAncestor finds the deepest existing directory on the way to dir
// and the path components below it that are missing, relative to it.
func (e *Engine) existingAncestor(ctx context.Context, containerName, dir string) (string, []string, error) {
	var missing []string
	for {
		st, err := e.cli.ContainerStatPath(ctx, containerName, dir)
		if err == nil {
			if !st.Mode.IsDir() {
				return "", nil, fmt.Errorf("copying into %s: %s is not a directory", containerName, dir)
			}
			for i, j := 0, len(missing)-1; i < j; i, j = i+1, j-1 {
				missing[i], missing[j] = missing[j], missing[i]
			}
			return dir, missing, nil
		}
		if !client.IsErrNotFound(err) {
			return "", nil, fmt.Errorf("looking up %s in %s: %w", dir, containerName, err)
		}
		if dir == "/" {
			return "", nil, fmt.Errorf("looking up / in %s: %w", containerName, err)
		}
		missing = append(missing, path.Base(dir))
		dir = path.Dir(dir)
	}
}

func relTo(base, p string) string {
	return strings.TrimPrefix(strings.TrimPrefix(p, base), "/")
}

// writeTar writes a tar stream of the directories dirs (each nested in the
// one before, relative to the extraction point) followed by one file at
// name.
func writeTar(w io.Writer, dirs []string, dirMode int64, name string, mode int64, data io.Reader, size int64) error {
	tw := tar.NewWriter(w)
	now := time.Now()
	prefix := ""
	for _, d := range dirs {
		prefix = path.Join(prefix, d)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: prefix + "/", Mode: dirMode, ModTime: now}); err != nil {
			return err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: size, ModTime: now}); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, data, size); err != nil {
		return fmt.Errorf("reading the content of %s: %w", name, err)
	}
	return tw.Close()
}

// CopyOut streams srcPath (a file or a directory) out of the container as a
// tar archive whose entries are named from srcPath's base name. The caller
// closes it; ctx bounds the whole read.
func (e *Engine) CopyOut(ctx context.Context, containerName, srcPath string) (io.ReadCloser, error) {
	rc, _, err := e.cli.CopyFromContainer(ctx, containerName, srcPath)
	if client.IsErrNotFound(err) {
		// The container or the path is missing: errors.Is(err, fs.ErrNotExist).
		return nil, fmt.Errorf("copying %s out of %s: %w (%v)", srcPath, containerName, fs.ErrNotExist, err)
	}
	if err != nil {
		return nil, fmt.Errorf("copying %s out of %s: %w", srcPath, containerName, err)
	}
	return rc, nil
}
