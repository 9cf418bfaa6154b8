package provision

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// materialiseFixtures writes the lab's fixtures out under base as a
// directory named by their content hash, so the sandbox can bind-mount
// them (an embedded FS has no host path) and a changed fixture set gets a
// new directory, and so a new sandbox. An existing complete directory is
// reused. It returns the directory.
func materialiseFixtures(fsys fs.FS, base, labName string) (string, error) {
	sum, err := hashFS(fsys)
	if err != nil {
		return "", fmt.Errorf("reading the lab's fixtures: %w", err)
	}
	dir := filepath.Join(base, labName+"-"+sum[:16])
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("creating the fixtures cache %s: %w", base, err)
	}
	tmp, err := os.MkdirTemp(base, ".tmp-"+labName+"-")
	if err != nil {
		return "", fmt.Errorf("creating the fixtures cache %s: %w", base, err)
	}
	defer os.RemoveAll(tmp)
	if err := copyFS(fsys, tmp); err != nil {
		return "", fmt.Errorf("writing the lab's fixtures to %s: %w", tmp, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("writing the lab's fixtures: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			return dir, nil // another labctl wrote the same content first
		}
		return "", fmt.Errorf("writing the lab's fixtures to %s: %w", dir, err)
	}
	return dir, nil
}

// hashFS hashes every path, type, executable bit and content of fsys.
func hashFS(fsys fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%v\x00%v\x00", p, d.IsDir(), info.Mode().Perm()&0o111 != 0)
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copyFS writes fsys into dir: directories 0755, files 0644 or 0755 when
// executable. Only directories and regular files are copied.
func copyFS(fsys fs.FS, dir string) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if info.Mode().Perm()&0o111 != 0 {
			mode = 0o755
		}
		src, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, src); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
