package provision

import (
	"fmt"
	"strings"
	"sync"

	"github.com/labctl/labctl/internal/textsafe"
)

// MaxKept is how much of a process's output labctl keeps for its messages
// when nothing else is said.
const MaxKept = 64 << 10

// KeptOutput keeps the first max bytes (MaxKept when 0) written to it and
// counts the rest, which it drops: what a process of a lab's printed, with
// memory bounded whatever it prints. Its text is escaped (textsafe) as it
// is read: the learner may have written it, to steer the terminal of the
// one who reads it. It is safe for concurrent use.
type KeptOutput struct {
	mu      sync.Mutex
	max     int
	b       []byte
	dropped int64
}

// NewKeptOutput keeps the first max bytes written to it (MaxKept when 0).
func NewKeptOutput(max int) *KeptOutput { return &KeptOutput{max: max} }

func (k *KeptOutput) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	limit := k.max
	if limit <= 0 {
		limit = MaxKept
	}
	n := min(len(p), limit-len(k.b))
	k.b = append(k.b, p[:n]...)
	k.dropped += int64(len(p) - n)
	return len(p), nil
}

// Bytes is the output kept, as the process wrote it, for a reader that
// parses it; messages quote it through LastLines, FirstLine or Text.
func (k *KeptOutput) Bytes() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]byte(nil), k.b...)
}

// Cut says whether output was dropped.
func (k *KeptOutput) Cut() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.dropped > 0
}

// Written is how many bytes were written, the dropped ones included.
func (k *KeptOutput) Written() int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return int64(len(k.b)) + k.dropped
}

// LastLines is the last n lines kept, each escaped and bounded
// (textsafe.QuoteLine), and a note when output was dropped.
func (k *KeptOutput) LastLines(n int) string {
	lines := strings.Split(LastLines(string(k.Bytes()), n), "\n")
	for i, l := range lines {
		lines[i] = textsafe.QuoteLine(l)
	}
	return strings.Join(lines, "\n") + k.cutNote()
}

// FirstLine is the first line kept that is not blank (textsafe.FirstLine),
// and a note when output was dropped; none when every line is blank.
func (k *KeptOutput) FirstLine(none string) string {
	if l := textsafe.FirstLine(string(k.Bytes())); l != "" {
		return l + k.cutNote()
	}
	return none
}

// Text is all that was kept, escaped, and a note when output was dropped.
func (k *KeptOutput) Text() string {
	return textsafe.Escape(string(k.Bytes())) + k.cutNote()
}

func (k *KeptOutput) cutNote() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dropped == 0 {
		return ""
	}
	return fmt.Sprintf(" (output cut: labctl kept its first %d KiB and dropped %d bytes more)", len(k.b)>>10, k.dropped)
}
