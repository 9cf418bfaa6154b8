package images

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"
)

// progress prints one line per build phase with its elapsed time:
// "✓ Building Kubernetes binaries (9m41s)". On a terminal the running phase
// is shown and replaced when it ends; elsewhere each phase prints a start
// line and an end line.
type progress struct {
	w   io.Writer
	tty bool
}

func newProgress(w io.Writer) *progress {
	if w == nil {
		w = io.Discard
	}
	f, ok := w.(*os.File)
	return &progress{w: w, tty: ok && term.IsTerminal(int(f.Fd()))}
}

// phase runs fn as one named phase.
func (p *progress) phase(ctx context.Context, name string, fn func(context.Context) error) error {
	start := time.Now()
	if p.tty {
		fmt.Fprintf(p.w, " • %s ...", name)
	} else {
		fmt.Fprintf(p.w, " • %s ...\n", name)
	}
	err := fn(ctx)
	mark := "✓"
	if err != nil {
		mark = "✗"
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[2K")
	}
	fmt.Fprintf(p.w, " %s %s (%s)\n", mark, name, elapsed(time.Since(start)))
	return err
}

// note prints a line of detail.
func (p *progress) note(format string, args ...any) {
	fmt.Fprintf(p.w, "   %s\n", fmt.Sprintf(format, args...))
}

// elapsed renders d as 850ms, 4.2s or 9m41s.
func elapsed(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}
