//go:build unix

package homebound

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// batch is how many names a walk reads from a directory at once.
const batch = 1024

type walker struct {
	l    Limit
	u    Usage
	seen map[[2]uint64]struct{}
}

func measure(dir string, l Limit) (Usage, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Usage{}, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return Usage{}, err
	}
	w := walker{l: l, seen: map[[2]uint64]struct{}{}}
	if err := w.count(&st, 0); err != nil {
		unix.Close(fd)
		return w.u, err
	}
	err = w.dir(fd, 0)
	return w.u, err
}

// count adds one name at depth and its inode, unless a hard link of an
// inode already counted; errPast past the bound.
func (w *walker) count(st *unix.Stat_t, depth int64) error {
	w.u.Entries++
	w.u.Depth = max(w.u.Depth, depth)
	if w.u.Entries > w.l.Entries || w.u.Depth > w.l.Depth {
		return errPast
	}
	if st.Nlink > 1 {
		id := [2]uint64{uint64(st.Dev), uint64(st.Ino)} // Dev and Ino differ in type between systems
		if _, ok := w.seen[id]; ok {
			return nil
		}
		w.seen[id] = struct{}{}
	}
	w.u.Bytes += int64(st.Blocks) * 512 // Blocks differs in type between systems
	return nil
}

// dir walks the directory open at fd, at depth, and closes fd.
func (w *walker) dir(fd int, depth int64) error {
	f := os.NewFile(uintptr(fd), "")
	defer f.Close()
	for {
		names, err := f.Readdirnames(batch)
		for _, name := range names {
			var st unix.Stat_t
			if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				w.u.Unread++ // removed meanwhile
				continue
			}
			if err := w.count(&st, depth+1); err != nil {
				return err
			}
			if st.Mode&unix.S_IFMT != unix.S_IFDIR {
				continue
			}
			child, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				w.u.Unread++
				continue
			}
			if err := w.dir(child, depth+1); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(names) == 0) {
			return nil
		}
		if err != nil {
			w.u.Unread++
			return nil
		}
	}
}
