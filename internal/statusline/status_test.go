package statusline

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
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

// TERM=dumb is no terminal: no spinner, no erase codes, even on a tty.
func TestDumbTerminalGetsPlainLines(t *testing.T) {
	t.Setenv("TERM", "dumb")
	if IsTerminal(os.Stderr) {
		t.Fatal("TERM=dumb counted as a terminal")
	}
}

func TestUpdateOnPlainLines(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, Options{Terminal: no()})
	l.Update("ignored: no step runs")
	l.Start("Building Kubernetes binaries")
	l.Update("kubelet (1 of 2)")
	l.Update("kubelet (1 of 2)") // the same: printed once
	l.Update("kubectl (2 of 2)")
	l.End(true)
	want := " • Building Kubernetes binaries ...\n   kubelet (1 of 2)\n   kubectl (2 of 2)\n ✓ Building Kubernetes binaries\n"
	if b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}

func TestElapsed(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, Options{Terminal: no(), Elapsed: true})
	l.Start("Building etcd")
	l.Update("etcd (1 of 1)")
	l.End(false)
	lines := strings.Split(b.String(), "\n")
	if len(lines) != 4 || !regexp.MustCompile(`^   etcd \(1 of 1\) \(\d+(\.\d+)?[µnm]?s in\)$`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^ ✗ Building etcd \(\d+(\.\d+)?[µnm]?s\)$`).MatchString(lines[2]) {
		t.Fatalf("got %q", b.String())
	}
	for d, want := range map[time.Duration]string{
		854 * time.Millisecond: "850ms", 4210 * time.Millisecond: "4.2s", 9*time.Minute + 41400*time.Millisecond: "9m41s",
	} {
		if got := Elapsed(d); got != want {
			t.Errorf("Elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

// On a terminal the spinner line shows the step's detail and running time.
func TestSpinnerShowsDetailAndTime(t *testing.T) {
	t.Setenv("TERM", "xterm")
	var b syncBuffer
	l := New(&b, Options{Terminal: yes(), Elapsed: true, NoColor: true})
	l.Start("Building Kubernetes binaries")
	l.Update("kubelet (2 of 7)")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(b.String(), "Building Kubernetes binaries: kubelet (2 of 7) (0s)") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	l.End(true)
	if out := b.String(); !strings.Contains(out, "Building Kubernetes binaries: kubelet (2 of 7) (0s)") ||
		strings.Contains(out, "   kubelet") {
		t.Fatalf("spinner line without detail and time, or a detail line on a terminal: %q", out)
	}
}

func TestNestedPhasesAreDetailLines(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, Options{Terminal: no()})
	l.Start("Ensuring images")
	n := l.Nest()
	n.Start("Building etcd v3.6.0")
	n.Update("etcd (1 of 1)")
	n.End(true)
	n.Printf("no container registry answers: building locally")
	l.End(true)
	re := regexp.MustCompile(`^ • Ensuring images \.\.\.
   • Building etcd v3\.6\.0 \.\.\.
   Building etcd v3\.6\.0: etcd \(1 of 1\)
   ✓ Building etcd v3\.6\.0 \(\d+(\.\d+)?[µnm]?s\)
   no container registry answers: building locally
 ✓ Ensuring images
$`)
	if !re.MatchString(b.String()) {
		t.Fatalf("got\n%s", b.String())
	}
}
