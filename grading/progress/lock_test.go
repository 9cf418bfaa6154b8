package progress

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestUpdateSerialisesWriters(t *testing.T) {
	s := NewStore(t.TempDir())
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.Update(context.Background(), "lab1", func(p *Progress) error {
				if p.Attempts == nil {
					p.Attempts = map[string]int{}
				}
				p.Attempts["x"]++
				return nil
			})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.Load("lab1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Attempts["x"] != n {
		t.Errorf("attempts %d after %d concurrent updates: updates were lost", p.Attempts["x"], n)
	}
}

func TestUpdateGivesUpOnAHeldLock(t *testing.T) {
	s := NewStore(t.TempDir())
	unlock, err := s.lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = s.Update(ctx, "lab1", func(*Progress) error { t.Error("f ran without the lock"); return nil })
	if err == nil || !strings.Contains(err.Error(), "another labctl holds the progress lock") {
		t.Errorf("Update with the lock held = %v", err)
	}
	unlock()
	if err := s.Update(context.Background(), "lab1", func(*Progress) error { return nil }); err != nil {
		t.Errorf("Update after unlock: %v", err)
	}
}

func TestUpdateSavesNothingOnError(t *testing.T) {
	s := NewStore(t.TempDir())
	boom := errors.New("boom")
	err := s.Update(context.Background(), "lab1", func(p *Progress) error { p.Current = "x"; return boom })
	if !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if _, err := os.Stat(s.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed update wrote the file")
	}
	// A corrupt file is reported by Update and replaced only by Replace.
	os.WriteFile(s.Path(), []byte("{"), 0o600)
	var ce *CorruptError
	if err := s.Update(context.Background(), "lab1", func(*Progress) error { return nil }); !errors.As(err, &ce) {
		t.Errorf("Update on a corrupt file = %v", err)
	}
	if err := s.Replace(context.Background(), New("lab1")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("lab1"); err != nil {
		t.Errorf("after Replace: %v", err)
	}
}
