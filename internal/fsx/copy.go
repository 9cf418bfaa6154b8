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
func CopyTree(fsys fs.FS, dir string, exec Executable) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
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
		return copyFile(fsys, p, info, dst, exec)
	})
}

func copyFile(fsys fs.FS, p string, info fs.FileInfo, dst string, exec Executable) error {
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
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
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
	return os.Chmod(dst, mode)
}
