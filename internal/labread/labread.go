// Package labread is the one way labctl reads a lab from disk: every
// command that takes a lab's directory or file (up, test, shell, ui, their
// --watch, class, lint, install, pack, and import's check of what it
// wrote) reads it here, once, into memory, and then hashes and copies what
// it read, never the disk again.
//
// A lab is read through no link at any level. The path the user names is
// walked one component at a time from the working directory (or from /),
// each opened by descriptor without following a link, so a component that
// is a symbolic link (a repository's committed "labs -> ../../somewhere")
// is refused, not followed; what is beneath is opened relative to the
// directory already open, so nothing swapped in later is read either. The
// lab file, README.md, fixtures/ and every image's build directory, and
// every entry below them, must each be a regular file or a directory:
// links, FIFOs, devices and sockets are refused before anything is opened
// (a file is opened with O_NOFOLLOW|O_NONBLOCK and checked again, so one
// swapped for a FIFO still never blocks), as is any file a tool on the host
// reads as its configuration (.git, go.work, .envrc, …). What is read is
// bounded in bytes and in files.
package labread

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/labctl/labctl/internal/fsx"
)

// errMissing is a directory that is not there.
var errMissing = errors.New("missing")

// Bounds on what one lab may hold, read into memory.
const (
	// MaxBytes bounds the bytes of all of a lab's files together.
	MaxBytes = 256 << 20
	// MaxFiles bounds how many files and directories a lab holds.
	MaxFiles = 10000
	// MaxLabFile bounds the lab file, which is parsed whole (a lab file
	// of labctl's own labs is under 200 KiB).
	MaxLabFile = 16 << 20
	// maxDepth bounds how deep its directories nest.
	maxDepth = 64
)

// LabFile is the name a lab's file has in an installed lab or a bundle.
const LabFile = "lab.yaml"

// Readme is the lab's description for people, read when present.
const Readme = "README.md"

// Fixtures is the directory of the lab's fixtures.
const Fixtures = "fixtures"

// File is one entry of a lab as read.
type File struct {
	// Path is slash-separated, relative to the lab's directory.
	Path string
	Dir  bool
	// Exec says any execute bit was set.
	Exec bool
	Data []byte
}

// Lab is a lab as read from disk.
type Lab struct {
	// Dir is the lab's directory as named (made absolute), for messages.
	Dir string
	// Name is the lab file's name in Dir.
	Name string
	// Source is the lab file's content.
	Source []byte
	// Files are README.md, fixtures/ and the image build directories with
	// what they hold, each directory before its entries (the lab file is
	// not among them).
	Files []File
}

// Options tune a Read.
type Options struct {
	// Trees returns the directories, besides fixtures/, that the lab
	// holds (its images' build directories), from the lab file's content.
	// nil reads fixtures/ only.
	Trees func(source []byte) ([]string, error)
	// MaxBytes and MaxFiles override the bounds (zero: MaxBytes,
	// MaxFiles).
	MaxBytes int64
	MaxFiles int
}

// Read reads the lab whose lab file is file, as the package says.
func Read(file string, o Options) (*Lab, error) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = MaxBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = MaxFiles
	}
	dirName, base := filepath.Split(filepath.Clean(file))
	if dirName == "" {
		dirName = "."
	}
	dirName = filepath.Clean(dirName)
	if base == "" || base == "." || base == ".." || base == "/" {
		return nil, fmt.Errorf("%s names no lab file", file)
	}
	d, err := openDir(dirName)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	r := &reader{dir: shown(dirName), maxBytes: o.MaxBytes, maxFiles: o.MaxFiles}
	l := &Lab{Dir: r.dir, Name: base}
	src, err := r.labFile(d, base)
	if err != nil {
		return nil, err
	}
	l.Source = src.Data
	if f, err := r.file(d, Readme, Readme, true); err != nil {
		return nil, err
	} else if f != nil {
		r.files = append(r.files, *f)
	}
	trees := []string{Fixtures}
	if o.Trees != nil {
		more, err := o.Trees(src.Data)
		if err != nil {
			return nil, err
		}
		for _, t := range more {
			c := path.Clean(filepath.ToSlash(t))
			if !filepath.IsLocal(filepath.FromSlash(c)) || c == "." {
				return nil, fmt.Errorf("the directory %q is not inside the lab's directory %s", t, line(dirName))
			}
			trees = append(trees, c)
		}
	}
	for i, t := range trees {
		if err := r.tree(d, t, i == 0); err != nil {
			return nil, err
		}
	}
	l.Files = r.files
	return l, nil
}

// shown is dir as messages name it: absolute when it can be.
func shown(dir string) string {
	if a, err := filepath.Abs(dir); err == nil {
		return a
	}
	return dir
}

// reader is one Read's state: what was read and the bounds left.
type reader struct {
	dir      string
	maxBytes int64
	maxFiles int
	bytes    int64
	count    int
	files    []File
	seen     map[string]bool
}

// add records f once (trees may share parents, or one hold another).
func (r *reader) add(f File) bool {
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if r.seen[f.Path] {
		return false
	}
	r.seen[f.Path] = true
	r.files = append(r.files, f)
	return true
}

// tree reads the directory t (slash-separated, in the lab) and all it
// holds; the directories above it are recorded too. A missing tree is an
// error unless optional.
func (r *reader) tree(root *os.File, t string, optional bool) error {
	if err := HostToolFile(t); err != nil {
		return err
	}
	segs := strings.Split(t, "/")
	cur := root
	defer func() {
		if cur != root {
			cur.Close()
		}
	}()
	for i, seg := range segs {
		p := strings.Join(segs[:i+1], "/")
		next, err := r.subdir(cur, seg, p, optional && i == len(segs)-1)
		if errors.Is(err, errMissing) {
			return fmt.Errorf("%s does not exist in the lab %s, whose lab file names it (an image's build directory): create it, or correct the lab file", line(t), line(r.dir))
		}
		if err != nil || next == nil {
			return err
		}
		if cur != root {
			cur.Close()
		}
		cur = next
		if i < len(segs)-1 && !r.seen[p] {
			r.add(File{Path: p, Dir: true})
		}
	}
	if r.seen[t] {
		return nil // read already, inside another tree
	}
	if err := r.count1(t); err != nil {
		return err
	}
	r.add(File{Path: t, Dir: true})
	return r.walk(cur, t, 1)
}

func (r *reader) count1(p string) error {
	r.count++
	if r.count > r.maxFiles {
		return &LimitError{Dir: r.dir, What: "files", Max: int64(r.maxFiles), Path: p}
	}
	return nil
}

// walk reads what the open directory d, at p in the lab, holds.
func (r *reader) walk(d *os.File, p string, depth int) error {
	if depth > maxDepth {
		return &LimitError{Dir: r.dir, What: "depth", Max: maxDepth, Path: p}
	}
	names, err := d.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("reading %s in the lab %s: %w", line(p), line(r.dir), err)
	}
	slices.Sort(names)
	for _, name := range names {
		q := p + "/" + name
		if err := HostToolFile(q); err != nil {
			return err
		}
		if r.seen[q] {
			continue
		}
		if err := r.count1(q); err != nil {
			return err
		}
		mode, err := lstatAt(d, name)
		if err != nil {
			return fmt.Errorf("reading %s in the lab %s: %w", line(q), line(r.dir), err)
		}
		switch {
		case mode.IsDir():
			sub, err := r.subdir(d, name, q, false)
			if err != nil {
				return err
			}
			r.add(File{Path: q, Dir: true})
			err = r.walk(sub, q, depth+1)
			sub.Close()
			if err != nil {
				return err
			}
		case mode.IsRegular():
			f, err := r.file(d, name, q, false)
			if err != nil {
				return err
			}
			r.add(*f)
		default:
			return r.linkError(d, name, q, mode)
		}
	}
	return nil
}

func (r *reader) linkError(d *os.File, name, p string, mode fs.FileMode) error {
	e := &LinkError{Dir: r.dir, Path: p, Mode: mode.Type()}
	if mode&fs.ModeSymlink != 0 {
		e.Target, _ = readlinkAt(d, name)
	}
	return e
}

// FS is the lab's directory dir (e.g. Fixtures) as a file system held in
// memory: empty when the lab has none.
func (l *Lab) FS(dir string) fs.FS { return l.mapFS(dir + "/") }

// tree is every file of the lab read, but its lab file, as a file system
// held in memory.
func (l *Lab) tree() fs.FS { return l.mapFS("") }

// mapFS is the lab's files whose paths start with prefix, by the rest of
// their paths: directories 0755, files 0755 when any execute bit was set,
// else 0644.
func (l *Lab) mapFS(prefix string) fstest.MapFS {
	m := fstest.MapFS{}
	for _, f := range l.Files {
		if !strings.HasPrefix(f.Path, prefix) {
			continue
		}
		rel := strings.TrimPrefix(f.Path, prefix)
		switch {
		case f.Dir:
			m[rel] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		case f.Exec:
			m[rel] = &fstest.MapFile{Data: f.Data, Mode: 0o755}
		default:
			m[rel] = &fstest.MapFile{Data: f.Data, Mode: 0o644}
		}
	}
	return m
}

// Write writes the lab as read into dst, which must not hold any of its
// files: the lab file as name, directories 0755, files 0755 when any
// execute bit was set, else 0644, whatever the umask (fsx.CreateTree).
func (l *Lab) Write(dst, name string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := fsx.CreateFile(filepath.Join(dst, name), 0o644, bytes.NewReader(l.Source)); err != nil {
		return err
	}
	return fsx.CreateTree(l.tree(), dst, fsx.ExecBit)
}

// ReadFile reads one lab file, as Read reads it, without the rest of the
// lab.
func ReadFile(file string) ([]byte, error) {
	dirName, base := filepath.Split(filepath.Clean(file))
	if dirName == "" {
		dirName = "."
	}
	dirName = filepath.Clean(dirName)
	d, err := openDir(dirName)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	r := &reader{dir: shown(dirName), maxBytes: MaxBytes, maxFiles: MaxFiles}
	f, err := r.labFile(d, base)
	if err != nil {
		return nil, err
	}
	return f.Data, nil
}

// labFile reads the lab file name in d, within MaxLabFile as well as the
// lab's bounds.
func (r *reader) labFile(d *os.File, name string) (*File, error) {
	all := r.maxBytes
	r.maxBytes = min(all, MaxLabFile)
	f, err := r.file(d, name, name, false)
	r.maxBytes = all
	var le *LimitError
	if errors.As(err, &le) && le.What == "bytes" && r.maxBytes > MaxLabFile {
		le.What, le.Max = "lab file", MaxLabFile
	}
	return f, err
}
