//go:build unix

package labread

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

const openFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY

// openDir opens the directory dir, walking its path one component at a
// time from the working directory (or /) without following any link.
func openDir(dir string) (*os.File, error) {
	named, start, shown := dir, ".", ""
	if filepath.IsAbs(dir) {
		start, shown = "/", "/"
		if wd, rel, ok := belowWorkingDir(dir); ok {
			start, shown, dir = ".", wd, rel
		}
	}
	fd, err := unix.Open(start, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("reading the lab %s: %w", named, &fs.PathError{Op: "open", Path: start, Err: err})
	}
	cur := os.NewFile(uintptr(fd), start)
	for _, seg := range strings.Split(dir, "/") {
		if seg == "" || seg == "." {
			continue
		}
		shown = filepath.Join(shown, seg)
		nfd, err := unix.Openat(int(cur.Fd()), seg, openFlags|unix.O_DIRECTORY, 0)
		if err != nil {
			defer cur.Close()
			mode, serr := lstatAt(cur, seg)
			switch {
			case serr == nil && mode&fs.ModeSymlink != 0:
				e := &LinkError{Dir: named, Path: shown, Mode: mode.Type(), InPath: true}
				e.Target, _ = readlinkAt(cur, seg)
				return nil, e
			case serr == nil && !mode.IsDir():
				return nil, fmt.Errorf("%s is not a directory: give a lab's directory or its lab file", shown)
			}
			return nil, fmt.Errorf("reading the lab %s: %w", named, &fs.PathError{Op: "open", Path: shown, Err: err})
		}
		cur.Close()
		cur = os.NewFile(uintptr(nfd), shown)
	}
	return cur, nil
}

// belowWorkingDir is the absolute path dir relative to the working
// directory wd when dir names it or a directory below it, as the shell names
// the working directory ($PWD, which may go through links of the user's
// own directories) or as the system does. The working directory is where
// the user stands, links above it are theirs, not the lab's: only the
// path below it is walked.
func belowWorkingDir(dir string) (wd, rel string, ok bool) {
	var wds []string
	if wd, err := os.Getwd(); err == nil { // $PWD when it is the working directory
		wds = append(wds, wd)
	}
	if wd, err := unix.Getwd(); err == nil {
		wds = append(wds, wd)
	}
	for _, wd := range wds {
		if rel, err := filepath.Rel(wd, dir); err == nil && filepath.IsLocal(rel) {
			return wd, rel, true
		}
	}
	return "", "", false
}

// subdir opens the directory name in d (at p in the lab) without
// following a link; nil, nil when it is missing and optional.
func (r *reader) subdir(d *os.File, name, p string, optional bool) (*os.File, error) {
	mode, err := lstatAt(d, name)
	switch {
	case optional && errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, unix.ENOENT):
		return nil, errMissing
	case err != nil:
		return nil, fmt.Errorf("reading %s in the lab %s: %w", line(p), line(r.dir), err)
	case mode&fs.ModeSymlink != 0 || (!mode.IsDir() && !mode.IsRegular()):
		return nil, r.linkError(d, name, p, mode)
	case !mode.IsDir():
		return nil, fmt.Errorf("%s in the lab %s is not a directory; it must be one", line(p), line(r.dir))
	}
	fd, err := unix.Openat(int(d.Fd()), name, openFlags|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s in the lab %s: %w", line(p), line(r.dir), err)
	}
	return os.NewFile(uintptr(fd), p), nil
}

// file reads the regular file name in d (at p in the lab) within the
// bounds left; nil, nil when it is missing and optional.
func (r *reader) file(d *os.File, name, p string, optional bool) (*File, error) {
	if err := HostToolFile(p); err != nil {
		return nil, err
	}
	mode, err := lstatAt(d, name)
	switch {
	case optional && errors.Is(err, unix.ENOENT):
		return nil, nil
	case errors.Is(err, unix.ENOENT):
		return nil, fmt.Errorf("reading lab file: %w", &fs.PathError{Op: "open", Path: filepath.Join(r.dir, p), Err: err})
	case err != nil:
		return nil, fmt.Errorf("reading %s in the lab %s: %w", line(p), line(r.dir), err)
	case !mode.IsRegular():
		return nil, r.linkError(d, name, p, mode)
	}
	fd, err := unix.Openat(int(d.Fd()), name, openFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s in the lab %s: %w", line(p), line(r.dir), err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s in the lab %s: %w", line(p), line(r.dir), err)
	}
	if !info.Mode().IsRegular() { // swapped since lstat
		return nil, r.linkError(d, name, p, info.Mode())
	}
	left := r.maxBytes - r.bytes
	if info.Size() > left {
		return nil, &LimitError{Dir: r.dir, What: "bytes", Max: r.maxBytes, Path: p}
	}
	data, err := io.ReadAll(io.LimitReader(f, left+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s in the lab %s: %w", line(p), line(r.dir), err)
	}
	if int64(len(data)) > left {
		return nil, &LimitError{Dir: r.dir, What: "bytes", Max: r.maxBytes, Path: p}
	}
	r.bytes += int64(len(data))
	return &File{Path: p, Data: data, Exec: info.Mode().Perm()&0o111 != 0}, nil
}

// lstatAt is the type and permissions of name in d, not following a link.
func lstatAt(d *os.File, name string) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(d.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFREG:
	default:
		mode |= fs.ModeIrregular
	}
	return mode, nil
}

// readlinkAt is where the link name in d points.
func readlinkAt(d *os.File, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(int(d.Fd()), name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
