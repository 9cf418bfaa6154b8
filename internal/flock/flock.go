// Package flock takes an exclusive advisory lock (flock(2)) on a file, so
// that labctl processes that share a directory take turns.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Options tune Lock.
type Options struct {
	// Wait bounds the wait when ctx has no deadline; zero waits as long as
	// ctx allows.
	Wait time.Duration
	// Poll is the pause between tries; zero is 50ms.
	Poll time.Duration
	// Mode is the lock file's permission when Lock creates it; zero is 0600.
	Mode os.FileMode
	// Waiting, when set, is called once when the lock is held elsewhere and
	// Lock starts to wait for it.
	Waiting func()
}

// HeldError reports a lock another process still held when the wait for it
// ended. Err is the context's error.
type HeldError struct {
	Path string
	Err  error
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("waiting for the lock %s: %v", e.Path, e.Err)
}

func (e *HeldError) Unwrap() error { return e.Err }

// Lock takes the exclusive lock of the file at path, creating the file (not
// its directory) when missing. It tries again while another process holds
// the lock, and when a signal interrupts the call, until ctx ends or
// opts.Wait passes: then the error is a *HeldError. The returned func
// releases the lock.
func Lock(ctx context.Context, path string, opts Options) (func(), error) {
	if _, ok := ctx.Deadline(); !ok && opts.Wait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Wait)
		defer cancel()
	}
	poll := opts.Poll
	if poll <= 0 {
		poll = 50 * time.Millisecond
	}
	mode := opts.Mode
	if mode == 0 {
		mode = 0o600
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, mode)
	if err != nil {
		return nil, fmt.Errorf("opening the lock %s: %w", path, err)
	}
	waiting := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if errors.Is(err, syscall.EINTR) && ctx.Err() == nil {
			continue // a signal came before the answer: ask again
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("taking the lock %s: %w", path, err)
		}
		if !waiting && opts.Waiting != nil {
			opts.Waiting()
		}
		waiting = true
		timer := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			f.Close()
			return nil, &HeldError{Path: path, Err: ctx.Err()}
		case <-timer.C:
		}
	}
}
