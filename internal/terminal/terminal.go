// Package terminal puts the host's terminal in raw mode for `labctl shell`
// and restores it, and follows its size.
package terminal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/term"
)

// ErrNotTerminal says an interactive shell was asked for without a terminal.
var ErrNotTerminal = errors.New("labctl shell needs a terminal; use labctl exec for scripts")

// Terminal is the user's terminal switched to raw mode for an attached
// shell. Restore gives it back; it runs once however often it is called:
// by the caller's defer, by the signal handler, by a recovering goroutine.
type Terminal struct {
	in, out *os.File
	state   *term.State
	once    sync.Once
	ctx     context.Context
	cancel  context.CancelFunc
	stopSig func()
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return f != nil && term.IsTerminal(int(f.Fd())) }

// OpenTerminal puts in, which must be a terminal (and out too), into raw
// mode. SIGHUP, SIGTERM and SIGQUIT then restore the terminal and end the
// Terminal's Context, so the caller unwinds instead of dying in raw mode.
func OpenTerminal(ctx context.Context, in, out *os.File) (*Terminal, error) {
	if !IsTerminal(in) || !IsTerminal(out) {
		return nil, ErrNotTerminal
	}
	state, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return nil, fmt.Errorf("switching the terminal to raw mode: %w", err)
	}
	t := &Terminal{in: in, out: out, state: state}
	t.ctx, t.cancel = context.WithCancel(ctx)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGTERM, syscall.SIGQUIT)
	done := make(chan struct{})
	t.stopSig = sync.OnceFunc(func() {
		signal.Stop(sigs)
		close(done)
	})
	go func() {
		select {
		case <-sigs:
			t.Restore()
		case <-done:
		}
	}()
	return t, nil
}

// Context ends when the terminal was restored by a signal or by Restore.
func (t *Terminal) Context() context.Context { return t.ctx }

// Restore puts the terminal back as it was; later calls do nothing.
func (t *Terminal) Restore() {
	t.once.Do(func() {
		_ = term.Restore(int(t.in.Fd()), t.state)
		t.cancel()
		t.stopSig()
	})
}

// Read reads keystrokes.
func (t *Terminal) Read(p []byte) (int, error) { return t.in.Read(p) }

// Write writes to the screen.
func (t *Terminal) Write(p []byte) (int, error) { return t.out.Write(p) }

// Size is the terminal's size in rows and columns.
func (t *Terminal) Size() (rows, cols uint, err error) {
	w, h, err := term.GetSize(int(t.out.Fd()))
	if err != nil {
		return 0, 0, fmt.Errorf("reading the terminal size: %w", err)
	}
	return uint(h), uint(w), nil
}

// WatchSize calls resized with the terminal's size now and after every
// SIGWINCH, until ctx ends or the terminal is restored.
func (t *Terminal) WatchSize(ctx context.Context, resized func(rows, cols uint)) {
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)
	last := [2]uint{}
	for {
		if rows, cols, err := t.Size(); err == nil && rows > 0 && cols > 0 && [2]uint{rows, cols} != last {
			last = [2]uint{rows, cols}
			resized(rows, cols)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.ctx.Done():
			return
		case <-winch:
		}
	}
}
