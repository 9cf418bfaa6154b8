// Package atomicfile replaces files so that a reader, or the next run after
// a crash, finds either the old content or the new, never a part: the
// content goes to a temporary file in the same directory, which is synced
// to disk and renamed over the file, and then the directory is synced.
//
// A crash can leave a temporary file (named ".<name>.tmp-*") beside the
// file; it never takes the file's place.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data, with permission perm. The directory
// must exist.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, os.Rename)
}

// Write replaces path with what fill writes, with permission perm. When
// fill fails, path is left as it was and fill's error is returned. The
// directory must exist.
func Write(path string, perm os.FileMode, fill func(io.Writer) error) error {
	return write(path, perm, fill, os.Rename)
}

// Create is Write for a file that must not exist yet: when path exists,
// before or after fill, it fails with an error that wraps fs.ErrExist.
func Create(path string, perm os.FileMode, fill func(io.Writer) error) error {
	if err := absent(path); err != nil {
		return err
	}
	return write(path, perm, fill, func(tmp, path string) error {
		if err := absent(path); err != nil {
			return err
		}
		return os.Rename(tmp, path)
	})
}

func absent(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return &fs.PathError{Op: "create", Path: path, Err: fs.ErrExist}
	}
	return nil
}

// write writes through a temporary file beside path; commit (os.Rename
// outside of tests) puts it in place.
func write(path string, perm os.FileMode, fill func(io.Writer) error, commit func(tmp, path string) error) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	if err := fill(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := commit(tmp, path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable. It is best effort: the rename has
// happened, and some file systems cannot sync a directory.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
