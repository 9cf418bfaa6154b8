// Package statusline prints kind-style progress lines for long operations:
// "✓ Creating cluster" when a step succeeds, "✗ Creating cluster" when it
// fails, with a spinner while it runs on a terminal and plain lines
// elsewhere (a pipe, a file, TERM=dumb: no spinner, no escape codes). A
// running step can say what it is on now (Update); with Elapsed, its line
// shows how long it has run. It writes to the writer it is given (labctl
// passes stderr).
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
	// off; nil detects it from the writer and TERM (dumb is no terminal).
	Terminal *bool
	// Elapsed shows each step's running time: on the spinner line while it
	// runs, and at the end of its final line.
	Elapsed bool
}

// Logger prints one status line per step. Its methods are safe to call from
// several goroutines. The zero value is not usable: call New.
type Logger struct {
	w        io.Writer
	quiet    bool
	color    bool
	terminal bool
	elapsed  bool
	width    int // the terminal's columns, 0 when unknown

	mu      sync.Mutex
	current string
	detail  string // what the current step is on now
	started time.Time
	stop    chan struct{}
	done    chan struct{}
}

// New returns a Logger writing to w.
func New(w io.Writer, opts Options) *Logger {
	tty := IsTerminal(w)
	if opts.Terminal != nil {
		tty = *opts.Terminal
	}
	_, noColorEnv := os.LookupEnv("NO_COLOR")
	width := 0
	if f, ok := w.(*os.File); ok && tty {
		width, _, _ = term.GetSize(int(f.Fd()))
	}
	return &Logger{
		w:        w,
		width:    width,
		quiet:    opts.Quiet,
		terminal: tty,
		elapsed:  opts.Elapsed,
		color:    tty && !opts.NoColor && !noColorEnv && os.Getenv("TERM") != "dumb",
	}
}

// Discard returns a Logger that prints nothing.
func Discard() *Logger { return New(io.Discard, Options{Quiet: true}) }

// IsTerminal reports whether w is a terminal that takes a spinner and
// erase codes: a terminal device, and TERM is not dumb.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb"
}

// Start begins a step, ending the previous one as successful.
func (l *Logger) Start(msg string) {
	l.End(true)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current, l.detail, l.started = msg, "", time.Now()
	if l.quiet {
		return
	}
	if !l.terminal {
		fmt.Fprintf(l.w, " • %s ...\n", msg)
		return
	}
	l.stop = make(chan struct{})
	l.done = make(chan struct{})
	go l.spin(l.stop, l.done)
}

// setDetail sets what the spinner line shows after the running step,
// printing nothing.
func (l *Logger) setDetail(detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current != "" {
		l.detail = detail
	}
}

// Update says what the running step is on now ("kubelet (2 of 7)"): on a
// terminal the spinner line shows it, elsewhere it is printed once as a
// line of detail.
func (l *Logger) Update(detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == "" || detail == l.detail {
		return
	}
	l.detail = detail
	if l.quiet || l.terminal {
		return
	}
	if l.elapsed {
		fmt.Fprintf(l.w, "   %s (%s in)\n", detail, Elapsed(time.Since(l.started)))
		return
	}
	fmt.Fprintf(l.w, "   %s\n", detail)
}

// End finishes the current step, if any, as a success or a failure.
func (l *Logger) End(ok bool) {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.stop, l.done = nil, nil
	msg := l.current
	if l.elapsed && msg != "" {
		msg += " (" + Elapsed(time.Since(l.started)) + ")"
	}
	l.current, l.detail = "", ""
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

func (l *Logger) spin(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		l.mu.Lock()
		line := l.current
		if l.detail != "" {
			line += ": " + l.detail
		}
		if l.elapsed {
			line += " (" + Elapsed(time.Since(l.started).Truncate(time.Second)) + ")"
		}
		if r := []rune(line); l.width > 8 && len(r) > l.width-4 {
			line = string(r[:l.width-5]) + "…" // a wrapped line could not be erased
		}
		fmt.Fprintf(l.w, "\r\x1b[2K %s %s ", frames[i%len(frames)], line)
		l.mu.Unlock()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// Elapsed renders d as 850ms, 4.2s or 9m41s.
func Elapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// Nested prints the phases of the running step of a Logger (the image
// builds within "Ensuring images") as detail lines under it:
// "• phase ...", then "✓ phase (9m41s)"; what a phase is on shows on the
// step's spinner line, or as a detail line off a terminal.
type Nested struct {
	parent  *Logger
	mu      sync.Mutex
	phase   string
	started time.Time
}

// Nest returns the Nested printer of l's running step.
func (l *Logger) Nest() *Nested { return &Nested{parent: l} }

// Start begins a phase.
func (n *Nested) Start(phase string) {
	n.mu.Lock()
	n.phase, n.started = phase, time.Now()
	n.mu.Unlock()
	n.parent.Printf("• %s ...", phase)
	n.parent.setDetail(phase)
}

// Update says what the running phase is on now.
func (n *Nested) Update(detail string) {
	n.mu.Lock()
	phase := n.phase
	n.mu.Unlock()
	n.parent.Update(phase + ": " + detail)
}

// End finishes the running phase.
func (n *Nested) End(ok bool) {
	n.mu.Lock()
	phase, took := n.phase, time.Since(n.started)
	n.phase = ""
	n.mu.Unlock()
	mark := "✓"
	if !ok {
		mark = "✗"
	}
	n.parent.Printf("%s %s (%s)", mark, phase, Elapsed(took))
	n.parent.setDetail("")
}

// Printf prints a line of detail.
func (n *Nested) Printf(format string, args ...any) { n.parent.Printf(format, args...) }
