//go:build linux

package homebound

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	if err != nil || u.Depth != 21 || !u.Truncated {
		t.Errorf("with a bound of 10 levels: %+v, %v, want the walk to stop at the 21st, twice the bound", u, err)
	}
}

// A directory read in many buffers, its subdirectories among its files, is
// walked whole: each is read on from where a subdirectory's walk left it.
func TestMeasureResumesADirectoryAfterEachSubdirectory(t *testing.T) {
	dir := t.TempDir()
	pad := strings.Repeat("f", 200)
	for i := range 3000 {
		name := filepath.Join(dir, pad+strconv.Itoa(i))
		if i%60 == 0 {
			if err := os.Mkdir(name, 0o755); err != nil {
				t.Fatal(err)
			}
			name = filepath.Join(name, "inner")
		}
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	u, err := Measure(dir, Limit{Entries: 10000, Depth: 10})
	// The top, 3000 names in it, and one file in each of its 50
	// subdirectories.
	if err != nil || u.Entries != 3051 || u.Depth != 2 || u.Truncated || u.Unread != 0 {
		t.Errorf("%+v, %v, want 3051 names 2 deep, all read", u, err)
	}
}

// The walk holds no level's names while it is deeper: a tree of many levels
// of many long names costs it about one buffer, not levels × names.
func TestMeasureHoldsNoNamesPerLevel(t *testing.T) {
	dir := t.TempDir()
	pad := strings.Repeat("n", 240)
	cur := dir
	for level := range 150 {
		for i := range 200 {
			if err := os.WriteFile(filepath.Join(cur, pad+strconv.Itoa(i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// The subdirectory's name sorts and lists last or first at
		// random: either way, 200 names were read at this level.
		cur = filepath.Join(cur, "d"+strconv.Itoa(level))
		if err := os.Mkdir(cur, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[1].Value.Uint64()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
		}
	}()
	u, err := Measure(dir, Limit{Entries: 100000, Depth: 1000})
	close(done)
	if err != nil || u.Entries != 150*201+1 {
		t.Fatalf("%+v, %v", u, err)
	}
	// 150 levels of 200 names of 250 bytes kept at once would be 7 MiB.
	if grew := int64(peak.Load()) - int64(base); grew > 6<<20 {
		t.Errorf("the walk's heap grew by %d KiB: it holds names per level", grew>>10)
	}
}

// BenchmarkMeasure walks a home of 20,000 files in 100 directories, and
// reports what a look at a home of the bound's 500,000 names takes at that
// pace (s-per-500k-names; the warden has a quarter of a core, so four
// times as long in the class).
//
//	go test -run '^$' -bench Measure -benchtime 20x ./internal/homebound/
func BenchmarkMeasure(b *testing.B) {
	dir := b.TempDir()
	for d := range 100 {
		sub := filepath.Join(dir, "dir"+strconv.Itoa(d))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 200 {
			if err := os.WriteFile(filepath.Join(sub, "file-with-a-name-of-usual-length-"+strconv.Itoa(f)), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	l := Limit{Bytes: 1 << 40, Entries: 1 << 20, Depth: 100}
	var u Usage
	for b.Loop() {
		var err error
		if u, err = Measure(dir, l); err != nil {
			b.Fatal(err)
		}
	}
	perName := b.Elapsed().Seconds() / (float64(u.Entries) * float64(b.N))
	b.ReportMetric(perName*500000, "s-per-500k-names")
}

// A directory removed while the walk reads it is empty: the look is whole.
// More hard-linked inodes than the bound's names end the walk, so that
// what it remembers of them stays within the bound.
func TestMeasureRemovedDirectoriesAndManyHardLinks(t *testing.T) {
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(gone, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	w := walker{l: Limit{Entries: 10, Depth: 10}, stop: Limit{Entries: 20, Depth: 20}, buf: make([]byte, bufSize), seen: map[[2]uint64]struct{}{}}
	if err := w.dir(fd, 1); err != nil || w.u.Truncated {
		t.Errorf("a directory removed mid-walk: %+v, %v, want a whole look", w.u, err)
	}

	for i := range 3 {
		name := filepath.Join(dir, "f"+strconv.Itoa(i))
		if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(name, name+"-link"); err != nil {
			t.Fatal(err)
		}
	}
	u, err := measure(dir, Limit{Entries: 2, Depth: 10}, Limit{Entries: 100, Depth: 20})
	if !errors.Is(err, errPast) || !u.Truncated {
		t.Errorf("three hard-linked inodes, a bound of two names: %+v, %v, want the walk ended", u, err)
	}
	if u, err := Measure(dir, Limit{Entries: 10, Depth: 10}); err != nil || u.Truncated || u.Entries != 7 {
		t.Errorf("within the bound: %+v, %v", u, err)
	}
}

// signalSandbox runs until stopped, and says on looked each time the
// warden asks whether it runs, and on stopped why it was stopped.
type signalSandbox struct {
	looked  chan struct{}
	stopped chan string
}

func (s *signalSandbox) Running(context.Context) (bool, error) {
	select {
	case s.looked <- struct{}{}:
	default:
	}
	return true, nil
}

func (s *signalSandbox) Stop(_ context.Context, why string) error {
	s.stopped <- why
	return nil
}

// One allocation that takes the home past its bound is seen at once, not
// at the next look: the file system that holds the home grew by more than
// the home may still take, and the warden looks.
func TestWardenLooksAtOnceWhenTheFileSystemGrows(t *testing.T) {
	dir := t.TempDir()
	sb := &signalSandbox{looked: make(chan struct{}, 1), stopped: make(chan string, 4)}
	var log syncBuffer
	w := Warden{Dir: dir, Limit: Limit{Bytes: 1 << 20, Entries: 1000, Depth: 10}, Sandbox: sb,
		Every: time.Hour, Poll: 20 * time.Millisecond, Log: &log}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-sb.looked
	f, err := os.Create(filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := time.Now()
	if err := unix.Fallocate(int(f.Fd()), 0, 0, 64<<20); err != nil {
		t.Fatalf("allocating: %v", err)
	}
	select {
	case why := <-sb.stopped:
		t.Logf("stopped %s after the allocation: %s", time.Since(start).Round(time.Millisecond), why)
		if !strings.Contains(why, "/root holds 64.0 MiB") {
			t.Errorf("stopped for %q", why)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("64 MiB allocated past a bound of 1 MiB, and no look in 5 s; log:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "looking now") {
		t.Errorf("the log does not say why the warden looked: %q", log.String())
	}
}

// syncBuffer is a bytes.Buffer safe for the warden's goroutine and the
// test's.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
