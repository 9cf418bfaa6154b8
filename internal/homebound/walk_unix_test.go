//go:build unix

package homebound

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A tree deeper than a path can name is read all the same (the walk goes
// from directory to directory by descriptor), and a tree deeper than the
// bound stops the walk there.
func TestMeasureDeepTrees(t *testing.T) {
	dir := t.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("d", 200)
	for range 30 { // 30 levels of 201 bytes: past PATH_MAX
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
		fd = next
	}
	file, err := unix.Openat(fd, "deep", unix.O_WRONLY|unix.O_CREAT, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Write(file, bytes.Repeat([]byte{1}, 1<<20)); err != nil {
		t.Fatal(err)
	}
	unix.Close(file)
	unix.Close(fd)
	u, err := Measure(dir, Limit{Entries: 100, Depth: 100})
	if err != nil || u.Entries != 32 || u.Depth != 31 || u.Bytes < 1<<20 || u.Unread != 0 {
		t.Errorf("a tree of 30 long levels: %+v, %v, want 32 names 31 deep, the file's MiB counted", u, err)
	}
	u, err = Measure(dir, Limit{Entries: 100, Depth: 10})
	if err != nil || u.Depth != 11 {
		t.Errorf("with a bound of 10 levels: %+v, %v, want the walk to stop at the eleventh", u, err)
	}
}
