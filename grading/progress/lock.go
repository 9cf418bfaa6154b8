package progress

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/labctl/labctl/internal/flock"
)

// lockFile is the file whose flock serialises updates of a lab's progress
// between processes (labctl shell's automatic checks and labctl check in
// another terminal).
const lockFile = ".progress.lock"

// lockWait bounds the wait for the lock when ctx has no deadline.
const lockWait = 10 * time.Second

// lock takes the store's exclusive lock, waiting until ctx ends (or
// lockWait). The returned function releases it.
func (s *Store) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("locking progress: %w", err)
	}
	path := filepath.Join(s.dir, lockFile)
	unlock, err := flock.Lock(ctx, path, flock.Options{Wait: lockWait, Poll: 20 * time.Millisecond, Mode: 0o600})
	var held *flock.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("another labctl holds the progress lock %s: %w (is one still running?)", path, held.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("locking progress: %w", err)
	}
	return unlock, nil
}

// Update reads labName's progress, lets f change it and saves it, holding
// the store's lock throughout so concurrent labctl processes do not lose
// each other's updates. When f returns an error nothing is saved.
func (s *Store) Update(ctx context.Context, labName string, f func(*Progress) error) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	p, err := s.Load(labName)
	if err != nil {
		return err
	}
	if err := f(p); err != nil {
		return err
	}
	return s.Save(p)
}

// Replace saves p under the store's lock, whatever the file held before:
// for `labctl reset`, which is the documented way out of a corrupt file.
func (s *Store) Replace(ctx context.Context, p *Progress) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return s.Save(p)
}
