package images

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// lockCache takes the cache directory's build lock, so that two labctl
// processes (or parallel tests) never build into the same place at once.
// It waits for the lock as long as ctx allows; the returned func releases it.
func (b *builder) lockCache(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(b.cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the cache directory: %w", err)
	}
	path := filepath.Join(b.cacheDir, "build.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the build lock: %w", err)
	}
	waited := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("taking the build lock %s: %w", path, err)
		}
		if !waited {
			b.progress.note("waiting for another labctl building images (lock %s)", path)
			waited = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the build lock %s: %w", path, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
