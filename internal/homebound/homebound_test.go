package homebound

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Measure counts what the home holds on its disk: a sparse file by what it
// allocated, a hard-linked file once, every name; and it stops counting at
// the bound of names.
func TestMeasure(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("x"), 1<<20)
	if err := os.WriteFile(filepath.Join(dir, "full"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := os.Link(filepath.Join(dir, "full"), filepath.Join(dir, "link"+string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	sparse, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sparse.Truncate(1 << 40); err != nil {
		t.Fatal(err)
	}
	sparse.Close()
	// A directory its owner made unreadable.
	hidden := filepath.Join(dir, "hidden")
	if err := os.Mkdir(hidden, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hidden, "more"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(hidden, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(hidden, 0o755) })

	u, err := Measure(dir, Limit{Bytes: 1, Entries: 100, Depth: 10})
	if err != nil {
		t.Fatal(err)
	}
	// dir, full, three links, sparse, hidden, hidden/more (root reads a
	// directory of mode 0, as the warden does with DAC_OVERRIDE).
	want := int64(8)
	if os.Geteuid() != 0 {
		want = 7
	}
	if u.Entries != want {
		t.Errorf("entries %d, want %d (%+v)", u.Entries, want, u)
	}
	if u.Bytes < 1<<20 || u.Bytes > 3<<20 {
		t.Errorf("bytes %d: want the file once (and the hidden one as root), not its links or the sparse file's length", u.Bytes)
	}
	if os.Geteuid() == 0 && (u.Bytes < 2<<20 || u.Unread != 0) {
		t.Errorf("as root the unreadable directory counts: %+v", u)
	}

	u, err = Measure(dir, Limit{Entries: 3, Depth: 10})
	if err != nil || u.Entries != 7 || !u.Truncated || !strings.HasPrefix(u.String(), "at least ") {
		t.Errorf("with a bound of 3 names: %+v, %v, want the walk to stop at the seventh, twice the bound, and say so", u, err)
	}
	if _, err := Measure(filepath.Join(dir, "none"), Limit{Entries: 3, Depth: 10}); err == nil {
		t.Error("a home that is not there measured")
	}
}

// The ratchet stops a sandbox at the first look past the bound; one started
// again over a home past it may shrink it but not grow it; back within the
// bound, anything goes again.
func TestRatchet(t *testing.T) {
	gib := int64(1 << 30)
	r := Ratchet{Limit: Limit{Bytes: 2 * gib, Entries: 100, Depth: 5}}
	steps := []struct {
		running bool
		u       Usage
		stop    bool
		why     string
	}{
		{true, Usage{Bytes: gib, Entries: 10}, false, "within the bound"},
		{true, Usage{Bytes: 3 * gib, Entries: 10}, true, "first look past the bytes"},
		{true, Usage{Bytes: 3*gib + 1, Entries: 10}, true, "the evicted sandbox wrote on while it ended"},
		{false, Usage{Bytes: 3*gib + 5, Entries: 10}, false, "no sandbox runs: where a new one begins"},
		{true, Usage{Bytes: 3*gib + 5, Entries: 10}, false, "a new sandbox over the same home"},
		{true, Usage{Bytes: 2*gib + 7, Entries: 10}, false, "it deleted"},
		{true, Usage{Bytes: 2*gib + 9, Entries: 10}, true, "it grew again past the smallest"},
		{false, Usage{Bytes: 2*gib + 9, Entries: 10}, false, "stopped"},
		{true, Usage{Bytes: gib, Entries: 10}, false, "back within the bound"},
		{true, Usage{Bytes: 2 * gib, Entries: 10}, false, "at the bound"},
		{true, Usage{Bytes: gib, Entries: 101}, true, "past the names"},
		{true, Usage{Bytes: gib, Entries: 10}, false, "back"},
		{true, Usage{Bytes: gib, Entries: 10, Depth: 6}, true, "past the levels"},
		{false, Usage{Bytes: gib, Entries: 150}, false, "stopped past the names"},
		{true, Usage{Bytes: gib, Entries: 120}, false, "shrinking"},
		{true, Usage{Bytes: gib, Entries: 120, Truncated: true}, true, "a walk that saw part of the tree cannot show it shrank"},
		{true, Usage{Bytes: gib, Entries: 10, Truncated: true}, true, "nor that it is within the bound"},
	}
	for _, s := range steps {
		var stop bool
		if s.running {
			stop = r.Judge(s.u)
		} else {
			r.Settle(s.u)
		}
		if stop != s.stop {
			t.Errorf("%s (%v): stop %v, want %v", s.why, s.u, stop, s.stop)
		}
	}
}

// fakeSandbox writes a little more into dir while it ends, as a sandbox's
// processes do between the eviction and their end; with fail, its stop
// fails (the API server did not answer).
type fakeSandbox struct {
	dir     string
	running bool
	fail    bool
	stopped []string
}

func (f *fakeSandbox) Running(context.Context) (bool, error) { return f.running, nil }
func (f *fakeSandbox) Stop(_ context.Context, why string) error {
	f.stopped = append(f.stopped, why)
	if f.fail {
		return errors.New("no answer")
	}
	f.running = false
	return os.WriteFile(filepath.Join(f.dir, "while-ending"), bytes.Repeat([]byte{1}, 64<<10), 0o644)
}

// The warden's look stops a running sandbox past the bound and says why,
// with sizes a person reads.
func TestWardenStopsTheSandboxPastTheBound(t *testing.T) {
	dir := t.TempDir()
	sb := &fakeSandbox{dir: dir, running: true}
	var log bytes.Buffer
	w := Warden{Dir: dir, Limit: Limit{Bytes: 64 << 10, Entries: 1000, Depth: 10}, Sandbox: sb, Log: &log}
	w.Look(context.Background())
	if len(sb.stopped) != 0 {
		t.Fatalf("stopped within the bound: %q", sb.stopped)
	}
	if err := os.WriteFile(filepath.Join(dir, "big"), bytes.Repeat([]byte{1}, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Look(context.Background())
	if len(sb.stopped) != 1 || !strings.Contains(sb.stopped[0], "beyond its bound of 64.0 KiB, 1000 names or 10 levels") ||
		!strings.Contains(sb.stopped[0], "/root holds 1.0 MiB") {
		t.Fatalf("stops %q", sb.stopped)
	}
	if !strings.Contains(log.String(), "stopped the sandbox") {
		t.Errorf("log %q", log.String())
	}
	// A sandbox started again over the same home before another look
	// (what the stopped one wrote while it ended included) is left alone;
	// one that grows it is stopped.
	sb.running = true
	w.Look(context.Background())
	if len(sb.stopped) != 1 {
		t.Fatalf("a new sandbox over the same home was stopped: %q", sb.stopped)
	}
	if err := os.WriteFile(filepath.Join(dir, "more"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Look(context.Background())
	if len(sb.stopped) != 2 {
		t.Errorf("a sandbox that grew a home past its bound was not stopped: %q", sb.stopped)
	}
	// A stop that failed is tried again at the next look.
	sb.running, sb.fail = true, true
	if err := os.WriteFile(filepath.Join(dir, "more2"), bytes.Repeat([]byte{1}, 64<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	w.Look(context.Background())
	sb.fail = false
	w.Look(context.Background())
	if len(sb.stopped) != 4 || sb.running {
		t.Errorf("a failed stop was not tried again: %d stops, running %v", len(sb.stopped), sb.running)
	}
}
