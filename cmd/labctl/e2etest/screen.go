package e2etest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// Screen collects what a pty master shows.
type Screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *Screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// WaitFor waits until the screen has shown want n times, bounded
// generously, and returns all it shows.
func (s *Screen) WaitFor(t testing.TB, want string, n int) string {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		got := s.String()
		if strings.Count(got, want) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q %d times; it shows:\n%s", want, n, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Shows reports whether the screen shows want n times within d.
func (s *Screen) Shows(want string, n int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if strings.Count(s.String(), want) >= n {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}
