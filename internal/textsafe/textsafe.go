// Package textsafe shows text the learner controls (file names and
// contents, commit messages, cluster values quoted in check messages) on a
// terminal or in XML without letting it act: control characters become
// visible escapes, so a file named "a\x1b[1Ab" cannot move the cursor and
// rewrite what an instructor reads, and a right-to-left override cannot
// reorder a line.
package textsafe

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Escape returns s with every character that can steer a terminal or a
// text renderer written as a visible escape, keeping line feeds (and tabs)
// so a multi-line message stays multi-line: C0 controls, DEL and C1
// controls as \xHH (ESC is \x1b, CR \x0d), the line and paragraph
// separators U+2028 and U+2029, and the bidirectional marks, embeddings,
// overrides and isolates (U+061C, U+200E, U+200F, U+202A–U+202E,
// U+2066–U+2069) as \uHHHH; a byte that is not UTF-8 as \xHH. Everything
// it returns is also allowed in XML 1.0. Text without such characters is
// returned unchanged.
func Escape(s string) string {
	return escape(s, true)
}

// EscapeLine is Escape for a single line: line feeds are escaped as well.
func EscapeLine(s string) string {
	return escape(s, false)
}

func escape(s string, keepNewlines bool) string {
	i := firstUnsafe(s, keepNewlines)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			writeHex(&b, `\x`, uint32(s[i]), 2)
		case unsafeRune(r, keepNewlines) && r < 0x100:
			writeHex(&b, `\x`, uint32(r), 2)
		case unsafeRune(r, keepNewlines):
			writeHex(&b, `\u`, uint32(r), 4)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// firstUnsafe is the byte offset of the first character Escape changes,
// or -1.
func firstUnsafe(s string, keepNewlines bool) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return i
			}
		}
		if unsafeRune(r, keepNewlines) {
			return i
		}
	}
	return -1
}

func unsafeRune(r rune, keepNewlines bool) bool {
	switch {
	case r == '\n':
		return !keepNewlines
	case r == '\t':
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0xfffe, r == 0xffff:
		return true // not characters in XML 1.0
	}
	return false
}

func writeHex(b *strings.Builder, prefix string, v uint32, width int) {
	h := strconv.FormatUint(uint64(v), 16)
	b.WriteString(prefix)
	b.WriteString(strings.Repeat("0", width-len(h)))
	b.WriteString(h)
}

// MaxQuotedLine bounds a line of a program's output a message quotes.
const MaxQuotedLine = 300

// QuoteLine is a line of a program's output as a message quotes it:
// escaped (EscapeLine), and cut to MaxQuotedLine bytes at the start of a
// character, "…" marking the cut.
func QuoteLine(l string) string {
	if len(l) <= MaxQuotedLine {
		return EscapeLine(l)
	}
	cut := MaxQuotedLine
	for i := cut; i > cut-utf8.UTFMax; i-- {
		if utf8.RuneStart(l[i]) {
			cut = i
			break
		}
	}
	return EscapeLine(l[:cut]) + "…"
}

// FirstLine is the first line of a program's output that is not blank,
// trimmed and quoted (QuoteLine): enough to say what went wrong, never the
// rest (a Go runtime's goroutine dump after its first line). It is "" when
// every line is blank.
func FirstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return QuoteLine(l)
		}
	}
	return ""
}
