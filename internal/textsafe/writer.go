package textsafe

import (
	"io"
	"sync"
	"unicode/utf8"
)

// Writer escapes (Escape) what is written through it before it reaches w:
// for streams of text someone else chose, such as a lab's script output
// shown with -v. A character split between two writes is held back until
// it is whole (at most utf8.UTFMax-1 bytes). It is safe for concurrent
// use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write escapes p and writes it; it reports len(p) written unless w fails.
func (e *Writer) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	buf := append(e.pending, p...)
	cut := len(buf)
	// Hold back an incomplete UTF-8 sequence at the end.
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	e.pending = append([]byte(nil), buf[cut:]...)
	if cut == 0 {
		return len(p), nil
	}
	if _, err := io.WriteString(e.w, Escape(string(buf[:cut]))); err != nil {
		return 0, err
	}
	return len(p), nil
}
