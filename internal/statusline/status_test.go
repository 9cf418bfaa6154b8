package statusline

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// syncBuffer lets the spinner goroutine and the test share a buffer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func TestPlainLines(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	var b bytes.Buffer
	l := New(&b, Options{Terminal: no()})
	l.Start("Ensuring images")
	l.Start("Creating cluster")
	l.End(false)
	l.End(true) // nothing running: prints nothing
	want := " • Ensuring images ...\n ✓ Ensuring images\n • Creating cluster ...\n ✗ Creating cluster\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Fatalf("escape codes on a non-terminal: %q", b.String())
	}
}

func TestQuietPrintsNothing(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, Options{Quiet: true, Terminal: yes()})
	l.Start("Ensuring images")
	l.Printf("detail %d", 1)
	l.End(false)
	if b.Len() != 0 {
		t.Fatalf("quiet logger printed %q", b.String())
	}
}

func TestTerminalColourAndNoColor(t *testing.T) {
	for _, tc := range []struct {
		name      string
		noColor   bool
		wantColor bool
	}{
		{"colour", false, true},
		{"no-color flag", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TERM", "xterm")
			var b syncBuffer
			l := New(&b, Options{NoColor: tc.noColor, Terminal: yes()})
			l.Start("Creating cluster")
			l.End(true)
			out := b.String()
			if !strings.Contains(out, "Creating cluster\n") || !strings.Contains(out, "✓") {
				t.Fatalf("no success line in %q", out)
			}
			if got := strings.Contains(out, "\x1b[32m"); got != tc.wantColor {
				t.Fatalf("colour = %v, want %v in %q", got, tc.wantColor, out)
			}
			if !strings.Contains(out, "\r") {
				t.Fatalf("terminal output does not rewrite the line: %q", out)
			}
		})
	}
}

func TestNoColorEnvironment(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	t.Setenv("TERM", "xterm")
	var b syncBuffer
	l := New(&b, Options{Terminal: yes()})
	l.Start("Ready")
	l.End(false)
	if out := b.String(); strings.Contains(out, "\x1b[3") || !strings.Contains(out, "✗ Ready\n") {
		t.Fatalf("NO_COLOR not honoured: %q", out)
	}
}
