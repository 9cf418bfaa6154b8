package labstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"

	"github.com/labctl/labctl/internal/bundle"
	"github.com/labctl/labctl/lab"
)

// readmeFile is the lab's description for people, copied when present.
const readmeFile = "README.md"

// Files lists what of the lab l, loaded from labFile, an install copies
// and a bundle holds: the lab file (as lab.yaml), and from the lab file's
// directory README.md when there is one, fixtures/ and the build directory
// of every image, each directory before what it holds. Links and other
// special files are left out, as up leaves them out of the fixtures.
func Files(labFile string, l *lab.Lab) ([]bundle.File, error) {
	dir := filepath.Dir(labFile)
	files := []bundle.File{{Path: LabFile}}
	if filepath.Base(labFile) != LabFile {
		files[0].From = labFile
	}
	if info, err := os.Lstat(filepath.Join(dir, readmeFile)); err == nil && info.Mode().IsRegular() {
		files = append(files, bundle.File{Path: readmeFile})
	}
	trees := []string{"fixtures"}
	for _, im := range l.Cluster.Images {
		if im.Build == "" {
			continue
		}
		b := path.Clean(filepath.ToSlash(im.Build))
		if !filepath.IsLocal(filepath.FromSlash(b)) || b == "." {
			return nil, fmt.Errorf("image %s: build directory %q is not inside the lab's directory", im.Name, im.Build)
		}
		trees = append(trees, b)
	}
	seen := map[string]bool{LabFile: true, readmeFile: true}
	for i, tree := range trees {
		info, err := os.Stat(filepath.Join(dir, filepath.FromSlash(tree)))
		switch {
		case i == 0 && errors.Is(err, fs.ErrNotExist):
			continue // a lab without fixtures
		case err != nil:
			return nil, fmt.Errorf("reading the lab: %w", err)
		case !info.IsDir():
			return nil, fmt.Errorf("%s in %s is not a directory", tree, dir)
		}
		// The directories above a build directory come first.
		var parents []string
		for p := path.Dir(tree); p != "."; p = path.Dir(p) {
			parents = append([]string{p}, parents...)
		}
		for _, p := range parents {
			if !seen[p] {
				seen[p] = true
				files = append(files, bundle.File{Path: p, Dir: true})
			}
		}
		err = fs.WalkDir(os.DirFS(dir), tree, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if seen[p] {
				return nil
			}
			seen[p] = true
			switch {
			case d.IsDir():
				files = append(files, bundle.File{Path: p, Dir: true})
			case d.Type().IsRegular():
				files = append(files, bundle.File{Path: p})
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading the lab: %w", err)
		}
	}
	return files, nil
}

// Digest identifies an installed lab's files: "sha256:<hex>" over every
// path of files (of the lab in dir) in lexical order, with a file's executable bit and the
// SHA-256 of its content. The same lab installed twice from any source has
// the same digest.
func Digest(dir string, files []bundle.File) (string, error) {
	sorted := append([]bundle.File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	io.WriteString(h, "labctl-installed-lab-v1\n")
	for _, f := range sorted {
		if f.Dir {
			fmt.Fprintf(h, "d %q\n", f.Path)
			continue
		}
		sum, exec, err := hashFile(f.HostPath(dir))
		if err != nil {
			return "", fmt.Errorf("hashing the lab: %w", err)
		}
		fmt.Fprintf(h, "f %q %s %s\n", f.Path, exec, sum)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(p string) (sum, exec string, err error) {
	f, err := os.Open(p)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", "", err
	}
	exec = "-"
	if info.Mode().Perm()&0o111 != 0 {
		exec = "x"
	}
	return hex.EncodeToString(h.Sum(nil)), exec, nil
}

// copyFiles copies files from the lab in src into dst: directories 0755,
// files 0755 when any execute bit is set, else 0644.
func copyFiles(src, dst string, files []bundle.File) error {
	for _, f := range files {
		to := filepath.Join(dst, filepath.FromSlash(f.Path))
		if f.Dir {
			if err := os.MkdirAll(to, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := copyFile(f.HostPath(src), to); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", from)
	}
	mode := os.FileMode(0o644)
	if info.Mode().Perm()&0o111 != 0 {
		mode = 0o755
	}
	return createFile(to, mode, in)
}

// createFile writes what r holds into a new file at path (its directory
// made when missing) with mode, whatever the umask.
func createFile(path string, mode os.FileMode, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
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
	return os.Chmod(path, mode)
}
