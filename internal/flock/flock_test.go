package flock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestLockExcludesAndReleases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file %v, %v; want mode 0600", st, err)
	}
	waited := 0
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = Lock(ctx, path, Options{Poll: 10 * time.Millisecond, Waiting: func() { waited++ }})
	var held *HeldError
	if !errors.As(err, &held) || held.Path != path || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Lock while held = %v, want a *HeldError wrapping the deadline", err)
	}
	if waited != 1 {
		t.Errorf("Waiting called %d times, want once", waited)
	}
	unlock()
	again, err := Lock(context.Background(), path, Options{})
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	again()
}

func TestLockWaitBoundsAContextWithoutDeadline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	start := time.Now()
	_, err = Lock(context.Background(), path, Options{Wait: 80 * time.Millisecond, Poll: 10 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock = %v, want the wait to end", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Lock waited %s with Wait 80ms", d)
	}
}

func TestLockHandsOverToTheNextWaiter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	const n = 16
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		inside int
		most   int
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := Lock(context.Background(), path, Options{Wait: 10 * time.Second, Poll: time.Millisecond})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			inside--
			mu.Unlock()
			unlock()
		}()
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d holders at once", most)
	}
}

func TestLockReportsAFileItCannotOpen(t *testing.T) {
	_, err := Lock(context.Background(), filepath.Join(t.TempDir(), "missing", "x.lock"), Options{})
	var held *HeldError
	if err == nil || errors.As(err, &held) {
		t.Errorf("Lock in a missing directory = %v, want an open error", err)
	}
}
