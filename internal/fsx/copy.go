// Package fsx copies a file tree out of an fs.FS (a directory, or files
// embedded in the binary) onto the host.
package fsx

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Executable decides whether a copied file gets mode 0755 rather than 0644,
// from its slash-separated path in the tree, its info and its first bytes
// (up to 512).
type Executable func(path string, info fs.FileInfo, head []byte) bool

// ExecBit keeps a file executable when any of its execute bits is set.
func ExecBit(_ string, info fs.FileInfo, _ []byte) bool { return info.Mode().Perm()&0o111 != 0 }

// Script makes a file executable when it starts with "#!".
func Script(_ string, _ fs.FileInfo, head []byte) bool {
	return len(head) >= 2 && head[0] == '#' && head[1] == '!'
}

// CopyTree copies fsys into dir: directories with mode 0755, regular files
// with 0755 or 0644 as exec says, replacing files that exist. Anything else
// (links, devices) is left out.
func CopyTree(fsys fs.FS, dir string, exec Executable) error { return copyTree(fsys, dir, exec, false) }

// CreateTree writes fsys into dir as CopyTree does, but only as new files
// and directories: one that exists fails it rather than being replaced or
// written through. dir itself is made when missing, its mode left as it is.
func CreateTree(fsys fs.FS, dir string, exec Executable) error {
	return copyTree(fsys, dir, exec, true)
}

func copyTree(fsys fs.FS, dir string, exec Executable, create bool) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			switch {
			case create && p == ".":
				return os.MkdirAll(dst, 0o755)
			case create:
				if err := os.Mkdir(dst, 0o755); err != nil {
					return err
				}
			default:
				if err := os.MkdirAll(dst, 0o755); err != nil {
					return err
				}
			}
			return os.Chmod(dst, 0o755) // whatever the umask
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(fsys, p, info, dst, exec, create)
	})
}

func copyFile(fsys fs.FS, p string, info fs.FileInfo, dst string, exec Executable, create bool) error {
	src, err := fsys.Open(p)
	if err != nil {
		return err
	}
	defer src.Close()
	r := bufio.NewReaderSize(src, 512)
	head, err := r.Peek(512)
	if err != nil && err != io.EOF {
		return err
	}
	mode := os.FileMode(0o644)
	if exec(p, info, head) {
		mode = 0o755
	}
	if create {
		return CreateFile(dst, mode, r)
	}
	return writeFile(dst, os.O_TRUNC, mode, r)
}

// CreateFile writes what r holds into a new file at path with mode,
// whatever the umask; it fails when path exists.
func CreateFile(path string, mode os.FileMode, r io.Reader) error {
	return writeFile(path, os.O_EXCL, mode, r)
}

// writeFile writes r into path, opened with flag (O_TRUNC or O_EXCL) on
// top of O_WRONLY|O_CREATE, and sets mode.
func writeFile(path string, flag int, mode os.FileMode, r io.Reader) error {
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|flag, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	// A file that existed keeps its mode through O_TRUNC, and the umask
	// may have narrowed a new one: set it.
	return os.Chmod(path, mode)
}
