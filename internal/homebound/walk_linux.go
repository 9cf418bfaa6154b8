package homebound

import (
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"
)

// bufSize is the one buffer a walk reads directories into, whatever its
// depth: a directory is read again from where it was left after each of
// its subdirectories (the offset its entry gives), so no level keeps names
// while the walk is deeper.
const bufSize = 32 << 10

type walker struct {
	l, stop Limit
	u       Usage
	buf     []byte
	// seen are the inodes of more than one name (not directories, whose
	// links are their subdirectories' ".."), at most l.Entries of them.
	seen map[[2]uint64]struct{}
}

func measure(dir string, l Limit, stop Limit) (Usage, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return Usage{}, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Usage{}, err
	}
	w := walker{l: l, stop: stop, buf: make([]byte, bufSize), seen: map[[2]uint64]struct{}{}}
	if err := w.count(&st, 0); err != nil {
		return w.u, err
	}
	return w.u, w.dir(fd, 0)
}

// count adds one name at depth and its inode, unless a hard link of an
// inode already counted; errPast at the walk's stop.
func (w *walker) count(st *unix.Stat_t, depth int64) error {
	w.u.Entries++
	w.u.Depth = max(w.u.Depth, depth)
	if w.u.Entries > w.stop.Entries || w.u.Depth > w.stop.Depth {
		w.u.Truncated = true
		return errPast
	}
	if st.Nlink > 1 && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		id := [2]uint64{st.Dev, st.Ino}
		if _, ok := w.seen[id]; ok {
			return nil
		}
		// More hard-linked inodes than the bound has names is past the
		// bound: the walk remembers no more of them than that.
		if int64(len(w.seen)) >= w.l.Entries {
			w.u.Truncated = true
			return errPast
		}
		w.seen[id] = struct{}{}
	}
	w.u.Bytes += st.Blocks * 512
	return nil
}

// dir walks the directory open at fd, at depth. What it cannot read makes
// the measure a lower bound (Truncated), except names removed meanwhile.
func (w *walker) dir(fd int, depth int64) error {
	for {
		n, err := unix.Getdents(fd, w.buf)
		if err != nil {
			// A directory removed while the walk read it answers ENOENT:
			// it is empty, and what it held was removed or moved.
			w.missing(err)
			return nil
		}
		if n == 0 {
			return nil
		}
		resumed := false
		for pos := 0; pos < n && !resumed; {
			off, reclen, name := dirent(w.buf[pos:n])
			if reclen == 0 {
				w.u.Truncated = true
				return nil
			}
			pos += reclen
			if name == "." || name == ".." {
				continue
			}
			var st unix.Stat_t
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				w.missing(err)
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
				w.missing(err)
				continue
			}
			err = w.dir(child, depth+1)
			unix.Close(child)
			if err != nil {
				return err
			}
			// The subdirectory's walk used the buffer: read on from the
			// entry after this one.
			if _, err := unix.Seek(fd, off, 0); err != nil {
				w.u.Unread++
				w.u.Truncated = true
				return nil
			}
			resumed = true
		}
	}
}

// missing counts a name the walk could not read: one removed or replaced
// meanwhile is gone; anything else leaves the measure a lower bound.
func (w *walker) missing(err error) {
	w.u.Unread++
	if !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) && !errors.Is(err, unix.ELOOP) {
		w.u.Truncated = true
	}
}

// dirent reads the linux_dirent64 at the start of b: the offset of the
// entry after it, its length (0 if b holds no whole entry) and its name.
func dirent(b []byte) (off int64, reclen int, name string) {
	const header = 19 // d_ino (8), d_off (8), d_reclen (2), d_type (1)
	if len(b) < header {
		return 0, 0, ""
	}
	off = int64(binary.NativeEndian.Uint64(b[8:16]))
	reclen = int(binary.NativeEndian.Uint16(b[16:18]))
	if reclen < header || reclen > len(b) {
		return 0, 0, ""
	}
	nameb := b[header:reclen]
	for i, c := range nameb {
		if c == 0 {
			nameb = nameb[:i]
			break
		}
	}
	return off, reclen, string(nameb)
}

// usedSpace is how much of the file system that holds dir is used, in
// bytes: one statfs, whatever dir holds.
func usedSpace(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Blocks-st.Bfree) * int64(st.Bsize), nil
}
