// Package statusline prints kind-style progress lines for long operations:
// "✓ Creating cluster" when a step succeeds, "✗ Creating cluster" when it
// fails, with a spinner while it runs on a terminal and plain lines
// elsewhere. It writes to the writer it is given (labctl passes stderr).
package statusline

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// Options control how a Logger prints.
type Options struct {
	// Quiet prints nothing (for -q).
	Quiet bool
	// NoColor prints no colour escapes (for --no-color and NO_COLOR).
	NoColor bool
	// Terminal forces terminal behaviour (spinner, carriage returns) on or
	// off; nil detects it from the writer.
	Terminal *bool
}

// Logger prints one status line per step. Its methods are safe to call from
// several goroutines. The zero value is not usable: call New.
type Logger struct {
	w        io.Writer
	quiet    bool
	color    bool
	terminal bool

	mu      sync.Mutex
	current string
	stop    chan struct{}
	done    chan struct{}
}

// New returns a Logger writing to w.
func New(w io.Writer, opts Options) *Logger {
	tty := isTerminal(w)
	if opts.Terminal != nil {
		tty = *opts.Terminal
	}
	_, noColorEnv := os.LookupEnv("NO_COLOR")
	return &Logger{
		w:        w,
		quiet:    opts.Quiet,
		terminal: tty,
		color:    tty && !opts.NoColor && !noColorEnv && os.Getenv("TERM") != "dumb",
	}
}

// Discard returns a Logger that prints nothing.
func Discard() *Logger { return New(io.Discard, Options{Quiet: true}) }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Start begins a step, ending the previous one as successful.
func (l *Logger) Start(msg string) {
	l.End(true)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current = msg
	if l.quiet {
		return
	}
	if !l.terminal {
		fmt.Fprintf(l.w, " • %s ...\n", msg)
		return
	}
	l.stop = make(chan struct{})
	l.done = make(chan struct{})
	go l.spin(msg, l.stop, l.done)
}

// End finishes the current step, if any, as a success or a failure.
func (l *Logger) End(ok bool) {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.stop, l.done = nil, nil
	msg := l.current
	l.current = ""
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	if msg == "" || l.quiet {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	mark := "✓"
	colour := "\x1b[32m"
	if !ok {
		mark, colour = "✗", "\x1b[31m"
	}
	if l.terminal {
		fmt.Fprint(l.w, "\r\x1b[2K")
	}
	if l.color {
		fmt.Fprintf(l.w, " %s%s\x1b[0m %s\n", colour, mark, msg)
		return
	}
	fmt.Fprintf(l.w, " %s %s\n", mark, msg)
}

// Printf prints a line of detail under the current step (nothing when quiet).
func (l *Logger) Printf(format string, args ...any) {
	if l.quiet {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.terminal {
		fmt.Fprint(l.w, "\r\x1b[2K")
	}
	fmt.Fprintf(l.w, "   "+format+"\n", args...)
}

var frames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (l *Logger) spin(msg string, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		l.mu.Lock()
		fmt.Fprintf(l.w, "\r\x1b[2K %s %s ", frames[i%len(frames)], msg)
		l.mu.Unlock()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}
