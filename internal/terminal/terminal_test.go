package terminal

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ptmx.Close()
		tty.Close()
	})
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	return ptmx, tty
}

func termios(t *testing.T, f *os.File) unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return *tio
}

func TestOpenTerminalRefusesNonTerminals(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := OpenTerminal(context.Background(), r, w); !errors.Is(err, ErrNotTerminal) {
		t.Fatalf("pipes: err = %v, want ErrNotTerminal", err)
	}
	if ErrNotTerminal.Error() != "labctl shell needs a terminal; use labctl exec for scripts" {
		t.Fatalf("message %q", ErrNotTerminal)
	}
}

func TestTerminalRawThenRestoredOnce(t *testing.T) {
	_, tty := openPTY(t)
	before := termios(t, tty)
	term, err := OpenTerminal(context.Background(), tty, tty)
	if err != nil {
		t.Fatal(err)
	}
	raw := termios(t, tty)
	if raw.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != 0 || raw == before {
		t.Fatalf("not raw: lflag %#x", raw.Lflag)
	}
	term.Restore()
	if got := termios(t, tty); got != before {
		t.Fatalf("not restored:\nbefore %+v\nafter  %+v", before, got)
	}
	if term.Context().Err() == nil {
		t.Fatal("the terminal's context goes on after Restore")
	}
	// A second Restore must not put back anything stale.
	if err := unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, &raw); err != nil {
		t.Fatal(err)
	}
	term.Restore()
	if got := termios(t, tty); got != raw {
		t.Fatal("a second Restore changed the terminal again")
	}
}

func TestTerminalRestoredOnHangup(t *testing.T) {
	_, tty := openPTY(t)
	before := termios(t, tty)
	term, err := OpenTerminal(context.Background(), tty, tty)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Restore()
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-term.Context().Done():
	case <-time.After(30 * time.Second):
		t.Fatal("SIGHUP did not end the terminal's context")
	}
	if got := termios(t, tty); got != before {
		t.Fatalf("not restored after SIGHUP:\nbefore %+v\nafter  %+v", before, got)
	}
}

func TestWatchSizeReportsChanges(t *testing.T) {
	ptmx, tty := openPTY(t)
	term, err := OpenTerminal(context.Background(), tty, tty)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Restore()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sizes := make(chan [2]uint, 4)
	go term.WatchSize(ctx, func(rows, cols uint) { sizes <- [2]uint{rows, cols} })
	next := func() [2]uint {
		t.Helper()
		select {
		case sz := <-sizes:
			return sz
		case <-time.After(30 * time.Second):
			t.Fatal("no size reported")
			return [2]uint{}
		}
	}
	if got := next(); got != [2]uint{24, 80} {
		t.Fatalf("first size %v, want 24x80", got)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 132}); err != nil {
		t.Fatal(err)
	}
	// The tty is not this process's controlling terminal: deliver the
	// SIGWINCH the kernel would send.
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
	if got := next(); got != [2]uint{50, 132} {
		t.Fatalf("size after resize %v, want 50x132", got)
	}
}
