package labstore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/labctl/labctl/internal/bundle"
	"github.com/labctl/labctl/internal/fsx"
	"github.com/labctl/labctl/internal/labread"
	"github.com/labctl/labctl/lab"
)

// readmeFile is the lab's description for people, copied when present.
const readmeFile = labread.Readme

// LinkError refuses a lab that holds a link, a device, a FIFO or a socket
// (see labread).
type LinkError = labread.LinkError

// HostToolFileError refuses a lab that holds a file a host tool reads as
// its configuration (see labread).
type HostToolFileError = labread.HostToolFileError

// hostToolFile returns the error for p, a slash-separated path in a lab,
// when any of its components is a host tool's configuration.
func hostToolFile(p string) error { return labread.HostToolFile(p) }

// Read reads the lab whose lab file is labFile from disk, the one way a
// lab is read (labread: no link at any level, no FIFO or device, bounded),
// and loads it: the lab file parsed (its problems as lab.Errors) and its
// images' build directories read with its fixtures. What Read returns is
// what is then hashed, copied and packed: the disk is not read again.
func Read(labFile string) (*labread.Lab, *lab.Lab, error) {
	var l *lab.Lab
	read, err := labread.Read(labFile, labread.Options{Trees: func(src []byte) ([]string, error) {
		var err error
		if l, err = lab.Parse(labFile, src); err != nil {
			return nil, err
		}
		var dirs []string
		for _, im := range l.Cluster.Images {
			if im.Build != "" {
				dirs = append(dirs, im.Build)
			}
		}
		return dirs, nil
	}})
	if err != nil {
		return nil, nil, err
	}
	return read, l, nil
}

// Files lists what of the lab read an install copies and a bundle holds:
// the lab file (as lab.yaml), README.md when there is one, fixtures/ and
// the build directory of every image, each directory before what it holds.
func Files(read *labread.Lab) []bundle.File {
	files := []bundle.File{{Path: LabFile}}
	for _, f := range read.Files {
		files = append(files, bundle.File{Path: f.Path, Dir: f.Dir})
	}
	return files
}

// DigestOf identifies a lab's files as read: "sha256:<hex>" over every
// path (the lab file as lab.yaml) in lexical order, with a file's
// executable bit and the SHA-256 of its content. The same lab installed
// twice from any source has the same digest.
func DigestOf(read *labread.Lab) string {
	all := append([]labread.File{{Path: LabFile, Data: read.Source}}, read.Files...)
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	h := sha256.New()
	io.WriteString(h, "labctl-installed-lab-v1\n")
	for _, f := range all {
		if f.Dir {
			fmt.Fprintf(h, "d %q\n", f.Path)
			continue
		}
		exec := "-"
		if f.Exec {
			exec = "x"
		}
		sum := sha256.Sum256(f.Data)
		fmt.Fprintf(h, "f %q %s %s\n", f.Path, exec, hex.EncodeToString(sum[:]))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Digest is DigestOf for files of the lab in dir, read from there: for a
// lab labctl itself wrote (a staged or bundled lab).
func Digest(dir string, files []bundle.File) (string, error) {
	read := &labread.Lab{}
	for _, f := range files {
		if f.Dir {
			read.Files = append(read.Files, labread.File{Path: f.Path, Dir: true})
			continue
		}
		data, exec, err := readFile(f.HostPath(dir))
		if err != nil {
			return "", fmt.Errorf("hashing the lab: %w", err)
		}
		if f.Path == LabFile {
			read.Source = data
			continue
		}
		read.Files = append(read.Files, labread.File{Path: f.Path, Data: data, Exec: exec})
	}
	return DigestOf(read), nil
}

func readFile(p string) ([]byte, bool, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if !info.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file", p)
	}
	data, err := io.ReadAll(f)
	return data, info.Mode().Perm()&0o111 != 0, err
}

// createFile writes what r holds into a new file at path (its directory
// made when missing) with mode, whatever the umask.
func createFile(path string, mode os.FileMode, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsx.CreateFile(path, mode, r)
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
