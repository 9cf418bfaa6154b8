package shell

import (
	"bytes"
	"strconv"
	"strings"
)

// MarkKind says which shell mark or request a scanned sequence was.
type MarkKind int

// The marks the scanner reports.
const (
	// PromptStart is OSC 133 A: the shell is about to print its prompt.
	PromptStart MarkKind = iota + 1
	// CommandStart is OSC 133 C: the shell has read a command and runs it.
	CommandStart
	// CommandDone is OSC 133 D: a command finished; Mark.ExitCode holds its status.
	CommandDone
	// Request is a private labctl request from the lab function.
	Request
)

// Mark is one sequence found in the shell's output.
type Mark struct {
	Kind MarkKind
	// ExitCode is the status carried by CommandDone, or -1 when it had none.
	ExitCode int
	// Verb and Nonce are the fields of a Request.
	Verb  string
	Nonce string
}

const (
	esc = 0x1b
	bel = 0x07
	// maxPayload bounds the bytes held for one sequence; a longer one is
	// not a mark (133) or is a malformed request and dropped (7707).
	maxPayload = 256
)

var (
	markPrefix    = []byte("\x1b]133;")
	requestPrefix = []byte("\x1b]" + requestOSC + ";" + requestTag + ";")
)

type scanState int

const (
	stText       scanState = iota
	stPrefix               // held is a proper prefix of markPrefix or requestPrefix
	stPayload              // after a full prefix, before the terminator
	stPayloadEsc           // an ESC inside the payload: ST or abort
)

// Scanner finds OSC 133 marks and private requests in a stream of terminal
// output that arrives in pieces split anywhere. Everything but the private
// requests passes through byte for byte, in order; the marks themselves pass
// through too, since the user's terminal may use them.
//
// A Scanner holds back only the bytes of a sequence that might still become
// a mark or a request, never more than maxPayload bytes plus a prefix.
type Scanner struct {
	state   scanState
	held    []byte // bytes kept back: prefix, payload and terminator so far
	private bool   // held is a request (stripped), not a mark (passed through)
}

// Feed scans p. It calls out with the bytes to pass on and mark with every
// mark or request found, in stream order: a mark is reported before its own
// bytes are passed on, so a caller may write something just before a prompt.
// out's argument is only valid during the call.
func (s *Scanner) Feed(p []byte, out func([]byte), mark func(Mark)) {
	for len(p) > 0 {
		if s.state == stText {
			i := bytes.IndexByte(p, esc)
			if i < 0 {
				out(p)
				return
			}
			if i > 0 {
				out(p[:i])
			}
			s.held = append(s.held[:0], esc)
			s.state = stPrefix
			p = p[i+1:]
			continue
		}
		if s.step(p[0], out, mark) {
			p = p[1:]
		}
	}
}

// step consumes b in a non-text state. It reports false when b was not
// consumed and must be scanned again from the text state.
func (s *Scanner) step(b byte, out func([]byte), mark func(Mark)) bool {
	switch s.state {
	case stPrefix:
		s.held = append(s.held, b)
		switch {
		case bytes.Equal(s.held, markPrefix):
			s.state, s.private = stPayload, false
		case bytes.Equal(s.held, requestPrefix):
			s.state, s.private = stPayload, true
		case bytes.HasPrefix(markPrefix, s.held), bytes.HasPrefix(requestPrefix, s.held):
		default:
			s.held = s.held[:len(s.held)-1]
			s.abort(out)
			return false
		}
		return true
	case stPayload:
		switch {
		case b == bel:
			s.held = append(s.held, b)
			s.finish(out, mark)
		case b == esc:
			s.held = append(s.held, b)
			s.state = stPayloadEsc
		case b < 0x20 || b >= 0x7f || len(s.held) >= maxPayload+len(requestPrefix):
			s.abort(out)
			return false
		default:
			s.held = append(s.held, b)
		}
		return true
	case stPayloadEsc:
		if b == '\\' {
			s.held = append(s.held, b)
			s.finish(out, mark)
			return true
		}
		// The ESC starts something new: give up this sequence, rescan the ESC.
		s.held = s.held[:len(s.held)-1]
		s.abort(out)
		s.held = append(s.held[:0], esc)
		s.state = stPrefix
		return false
	}
	return true
}

// abort ends a sequence that is neither a mark nor a request: held output
// passes on, a broken request is dropped.
func (s *Scanner) abort(out func([]byte)) {
	if !s.private && len(s.held) > 0 {
		out(s.held)
	}
	s.reset()
}

func (s *Scanner) reset() {
	s.held = s.held[:0]
	s.state = stText
	s.private = false
}

// finish handles a complete sequence in held.
func (s *Scanner) finish(out func([]byte), mark func(Mark)) {
	payload := s.held
	if s.private {
		payload = payload[len(requestPrefix):]
	} else {
		payload = payload[len(markPrefix):]
	}
	payload = bytes.TrimSuffix(bytes.TrimSuffix(payload, []byte{bel}), []byte{esc, '\\'})
	if s.private {
		if m, ok := parseRequest(string(payload)); ok {
			mark(m)
		}
		s.reset()
		return
	}
	if m, ok := parseMark(string(payload)); ok {
		mark(m)
	}
	out(s.held)
	s.reset()
}

// Pending reports whether bytes are held back waiting for the rest of a
// sequence.
func (s *Scanner) Pending() bool { return s.state != stText }

// Flush passes on what is held back when the stream has gone quiet: a lone
// ESC or the start of a mark that never finished. A started request stays
// held (it is never shown).
func (s *Scanner) Flush(out func([]byte)) {
	if s.state == stText || s.private {
		return
	}
	out(s.held)
	s.reset()
}

// parseMark reads the payload of OSC 133 after "133;".
func parseMark(p string) (Mark, bool) {
	kind, rest, _ := strings.Cut(p, ";")
	switch kind {
	case "A":
		return Mark{Kind: PromptStart, ExitCode: -1}, true
	case "C":
		return Mark{Kind: CommandStart, ExitCode: -1}, true
	case "D":
		code := -1
		first, _, _ := strings.Cut(rest, ";")
		if n, err := strconv.Atoi(first); err == nil && n >= 0 {
			code = n
		}
		return Mark{Kind: CommandDone, ExitCode: code}, true
	}
	return Mark{}, false
}

// parseRequest reads the payload of a request after "7707;labctl;": the
// verb and, optionally, ";" and the nonce.
func parseRequest(p string) (Mark, bool) {
	verb, nonce, _ := strings.Cut(p, ";")
	if verb == "" || !isToken(verb) || !isToken(nonce) {
		return Mark{}, false
	}
	return Mark{Kind: Request, ExitCode: -1, Verb: verb, Nonce: nonce}, true
}

// isToken reports whether s holds only letters, digits and '-'.
func isToken(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return len(s) <= 64
}
