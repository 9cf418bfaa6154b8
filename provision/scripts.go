package provision

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

// runScripts is RunScripts for any sandbox: run starts cmd there as the
// learner's shell would, with its stdout to out.
func runScripts(scripts []string, stdout io.Writer, started func(int), run func(cmd []string, out io.Writer) (int, error)) (failed, code int, err error) {
	if len(scripts) == 0 {
		return -1, 0, nil
	}
	cmd, mark, err := scriptsCommand(scripts)
	if err != nil {
		return -1, 0, err
	}
	return runMarked(scripts, mark, started, func(out io.Writer) (int, error) { return run(cmd, out) }, stdout)
}

// scriptsCommand returns the command that runs scripts in order, and the
// mark it prints, alone on a line of its stdout, with a script's index
// before the script starts. The scripts are the command's arguments, never
// part of its text, so nothing in them is quoted or interpreted by it.
func scriptsCommand(scripts []string) (cmd []string, mark string, err error) {
	var nonce [12]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return nil, "", fmt.Errorf("marking the scripts' output: %w", err)
	}
	mark = "labctl-script-" + hex.EncodeToString(nonce[:])
	driver := `i=0
for s in "$@"; do
	printf '\n` + mark + ` %d\n' "$i"
	bash -l -c "$s" || exit
	i=$((i+1))
done`
	return append([]string{"bash", "-c", driver, "labctl-scripts"}, scripts...), mark, nil
}

// runMarked runs run with stdout filtered through a markWriter and works
// out which script failed from the marks seen.
func runMarked(scripts []string, mark string, started func(int), run func(io.Writer) (int, error), stdout io.Writer) (failed, code int, err error) {
	last := -1
	mw := newMarkWriter(stdout, mark, func(i int) {
		last = i
		if started != nil {
			started(i)
		}
	})
	code, err = run(mw)
	if ferr := mw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return -1, code, err
	}
	if code == 0 {
		if last != len(scripts)-1 {
			return -1, 0, fmt.Errorf("the scripts stopped after %d of %d without an error", last+1, len(scripts))
		}
		return -1, 0, nil
	}
	if last < 0 {
		return -1, code, fmt.Errorf("the scripts could not start (exit status %d)", code)
	}
	return last, code, nil
}

// markWriter passes what is written through to w, except the lines
// "<mark> <index>" (with the newline before them), which it reports to
// started. Call Flush when the writing is done.
type markWriter struct {
	mu      sync.Mutex
	w       io.Writer
	mark    []byte
	started func(int)
	pending []byte
}

func newMarkWriter(w io.Writer, mark string, started func(int)) *markWriter {
	if w == nil {
		w = io.Discard
	}
	return &markWriter{w: w, mark: []byte("\n" + mark + " "), started: started}
}

func (m *markWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = append(m.pending, p...)
	for {
		i := bytes.Index(m.pending, m.mark)
		if i < 0 {
			// Hold back only an end that may begin a mark.
			return len(p), m.pass(len(m.pending) - prefixAtEnd(m.pending, m.mark))
		}
		end := bytes.IndexByte(m.pending[i+len(m.mark):], '\n')
		if end < 0 {
			return len(p), m.pass(i)
		}
		if err := m.pass(i); err != nil {
			return len(p), err
		}
		n, err := strconv.Atoi(string(m.pending[len(m.mark) : len(m.mark)+end]))
		if err != nil {
			// Not a mark after all: pass it on.
			if err := m.pass(len(m.mark) + end + 1); err != nil {
				return len(p), err
			}
			continue
		}
		m.pending = m.pending[len(m.mark)+end+1:]
		m.started(n)
	}
}

// pass writes the first n pending bytes through.
func (m *markWriter) pass(n int) error {
	if n <= 0 {
		return nil
	}
	_, err := m.w.Write(m.pending[:n])
	m.pending = m.pending[n:]
	return err
}

// Flush writes through what is still held back.
func (m *markWriter) Flush() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pass(len(m.pending))
}

// prefixAtEnd is the length of the longest end of b that begins mark.
func prefixAtEnd(b, mark []byte) int {
	for k := min(len(mark)-1, len(b)); k > 0; k-- {
		if bytes.HasSuffix(b, mark[:k]) {
			return k
		}
	}
	return 0
}

// LastLines is the last n lines of a command's output, for an error that
// quotes it.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
