package images

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/labctl/labctl/internal/flock"
)

// lockCache takes the cache directory's build lock, so that two labctl
// processes (or parallel tests) never build into the same place at once.
// It waits for the lock as long as ctx allows; the returned func releases it.
func (b *builder) lockCache(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(b.cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the cache directory: %w", err)
	}
	path := filepath.Join(b.cacheDir, "build.lock")
	unlock, err := flock.Lock(ctx, path, flock.Options{
		Poll: time.Second,
		Mode: 0o644,
		Waiting: func() {
			b.progress.note("waiting for another labctl building images (lock %s)", path)
		},
	})
	var held *flock.HeldError
	if errors.As(err, &held) {
		return nil, fmt.Errorf("waiting for the build lock %s: %w", path, held.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("taking the build lock: %w", err)
	}
	return unlock, nil
}
