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
	"syscall"

	"github.com/labctl/labctl/internal/bundle"
	"github.com/labctl/labctl/lab"
)

// readmeFile is the lab's description for people, copied when present.
const readmeFile = "README.md"

// Files lists what of the lab l, loaded from labFile, an install copies
// and a bundle holds: the lab file (as lab.yaml), and from the lab file's
// directory README.md when there is one, fixtures/ and the build directory
// of every image, each directory before what it holds. Nothing outside the
// lab file's directory is read: a link anywhere (the lab file, a tree's
// root, a directory above a build directory, an entry of a tree) is an
// error, as are devices, FIFOs and sockets, and a file that a tool on the
// host reads as its configuration (*HostToolFileError: .git, go.work, …).
func Files(labFile string, l *lab.Lab) ([]bundle.File, error) {
	dir := filepath.Dir(labFile)
	files := []bundle.File{{Path: LabFile}}
	if filepath.Base(labFile) != LabFile {
		files[0].From = labFile
	}
	if err := regular(labFile, filepath.Base(labFile)); err != nil {
		return nil, err
	}
	switch info, err := os.Lstat(filepath.Join(dir, readmeFile)); {
	case err == nil && info.Mode().IsRegular():
		files = append(files, bundle.File{Path: readmeFile})
	case err == nil:
		return nil, linkError(dir, readmeFile, info.Mode())
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
		if err := hostToolFile(tree); err != nil {
			return nil, err
		}
		// The directories above a build directory come first; each of
		// them, and the tree itself, must be a directory, not a link.
		var parents []string
		for p := tree; p != "."; p = path.Dir(p) {
			parents = append([]string{p}, parents...)
		}
		missing := false
		for _, p := range parents {
			info, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
			switch {
			case i == 0 && errors.Is(err, fs.ErrNotExist):
				missing = true // a lab without fixtures
			case err != nil:
				return nil, fmt.Errorf("reading the lab: %w", err)
			case info.Mode()&fs.ModeSymlink != 0:
				return nil, linkError(dir, p, info.Mode())
			case !info.IsDir():
				return nil, fmt.Errorf("%s in %s is not a directory", p, dir)
			}
		}
		if missing {
			continue
		}
		for _, p := range parents[:len(parents)-1] {
			if !seen[p] {
				seen[p] = true
				files = append(files, bundle.File{Path: p, Dir: true})
			}
		}
		err := fs.WalkDir(os.DirFS(dir), tree, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := hostToolFile(p); err != nil {
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
			default:
				return linkError(dir, p, d.Type())
			}
			return nil
		})
		var hostErr *HostToolFileError
		var linkErr *LinkError
		switch {
		case errors.As(err, &hostErr), errors.As(err, &linkErr):
			return nil, err
		case err != nil:
			return nil, fmt.Errorf("reading the lab: %w", err)
		}
	}
	return files, nil
}

// LinkError refuses a lab that holds a link, a device, a FIFO or a socket:
// an install never reads outside the lab's directory.
type LinkError struct {
	Dir, Path string
	Mode      fs.FileMode
}

func (e *LinkError) Error() string {
	what := "a symbolic link"
	switch {
	case e.Mode&fs.ModeSymlink != 0:
	case e.Mode&fs.ModeNamedPipe != 0:
		what = "a FIFO"
	case e.Mode&fs.ModeSocket != 0:
		what = "a socket"
	case e.Mode&fs.ModeDevice != 0:
		what = "a device"
	default:
		what = "no regular file or directory"
	}
	return fmt.Sprintf("%s in the lab %s is %s: a lab holds only regular files and directories, and nothing of it is read through a link; "+
		"put the file itself there, or remove it", e.Path, e.Dir, what)
}

func linkError(dir, p string, mode fs.FileMode) error {
	return &LinkError{Dir: dir, Path: p, Mode: mode.Type()}
}

// regular checks that file (shown as name) is a regular file, not a link.
func regular(file, name string) error {
	info, err := os.Lstat(file)
	if err != nil {
		return fmt.Errorf("reading the lab: %w", err)
	}
	if !info.Mode().IsRegular() {
		return linkError(filepath.Dir(file), name, info.Mode())
	}
	return nil
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
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
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
	in, err := os.OpenFile(from, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
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

// strays lists, in lexical order, what dir holds beyond files (and the
// names in also, at its top): what the lab's file list, and so its digest,
// does not cover.
func strays(dir string, files []bundle.File, also ...string) ([]string, error) {
	covered := map[string]bool{".": true}
	for _, f := range files {
		covered[f.Path] = true
	}
	for _, a := range also {
		covered[a] = true
	}
	var out []string
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !covered[p] || (!d.IsDir() && !d.Type().IsRegular()) {
			out = append(out, p)
			if d.IsDir() {
				return fs.SkipDir
			}
		}
		return nil
	})
	return out, err
}
