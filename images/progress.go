package images

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/labctl/labctl/internal/textsafe"
)

// Status shows a build's phases as they run: each phase starts and ends,
// and a long one says what it is on now (which binary, which layer).
// labctl's *statusline.Logger is the real one.
type Status interface {
	Start(phase string)
	// Update says what the running phase is on now, e.g. "kubelet (2 of 7)".
	Update(detail string)
	End(ok bool)
	// Printf prints a line of detail.
	Printf(format string, args ...any)
}

// progress reports the build's phases to a Status, or nowhere.
type progress struct{ st Status }

func newProgress(st Status) *progress { return &progress{st: st} }

// phase runs fn as one named phase.
func (p *progress) phase(ctx context.Context, name string, fn func(context.Context) error) error {
	if p.st == nil {
		return fn(ctx)
	}
	p.st.Start(name)
	err := fn(ctx)
	p.st.End(err == nil)
	return err
}

// step says what the running phase is on now.
func (p *progress) step(format string, args ...any) {
	if p.st != nil {
		p.st.Update(fmt.Sprintf(format, args...))
	}
}

// note prints a line of detail.
func (p *progress) note(format string, args ...any) {
	if p.st != nil {
		p.st.Printf(format, args...)
	}
}

// Build steps as `docker build` prints them: BuildKit's "#7 [3/6] RUN ..."
// and the classic builder's "Step 3/6 : RUN ...".
var (
	buildkitStep = regexp.MustCompile(`^#\d+ \[(?:\S+ )?(\d+/\d+)\] (.+)$`)
	classicStep  = regexp.MustCompile(`^Step (\d+/\d+) : (.+)$`)
)

// buildLayer turns a line of `docker build` output that starts a build
// step into "layer 3/6: RUN apt-get ...", and reports whether it was one.
func buildLayer(line string) (string, bool) {
	m := buildkitStep.FindStringSubmatch(line)
	if m == nil {
		m = classicStep.FindStringSubmatch(line)
	}
	if m == nil {
		return "", false
	}
	what := textsafe.EscapeLine(strings.Join(strings.Fields(m[2]), " "))
	if r := []rune(what); len(r) > 60 {
		what = string(r[:59]) + "…"
	}
	return "layer " + m[1] + ": " + what, true
}

// lineWriter calls fn with each complete line written to it.
type lineWriter struct {
	fn func(string)

	mu      sync.Mutex
	partial []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := strings.IndexByte(string(w.partial), '\n')
		if i < 0 {
			break
		}
		w.fn(strings.TrimRight(string(w.partial[:i]), "\r"))
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}
