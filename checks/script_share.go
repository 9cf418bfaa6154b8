package checks

import (
	"strings"
	"unicode"
)

// scriptLetters counts the letters of text that a script share weighs and,
// of those, the ones in table. Letters in code never count: inline code
// spans (`kubectl apply`, or a double-backtick span holding a backtick),
// fenced code blocks (``` or ~~~) and indented code blocks (four spaces or
// a tab, after a blank line or at the start). Unless the script is Latin, a
// word of ASCII letters outside code weighs as one letter, not one per
// letter: a Korean note that names kubectl commands outside backquotes is
// weighed by its Korean, and an English note with a Korean word sprinkled
// in is still weighed as English.
func scriptLetters(text string, table *unicode.RangeTable, latin bool) (letters, in int) {
	count := func(s string) {
		inWord := false
		for _, r := range s {
			if !latin && r <= unicode.MaxASCII && unicode.IsLetter(r) {
				if !inWord {
					letters++
				}
				inWord = true
				continue
			}
			inWord = false
			if !unicode.IsLetter(r) {
				continue
			}
			letters++
			if unicode.Is(table, r) {
				in++
			}
		}
	}
	for _, prose := range proseOutsideCode(text) {
		count(prose)
	}
	return letters, in
}

// proseOutsideCode returns the parts of text that are not code, line by
// line, following Markdown's rules for fences, indented blocks and code
// spans closely enough for notes written in a terminal.
func proseOutsideCode(text string) []string {
	var out []string
	fence := ""         // the opening fence while inside a fenced block
	afterBlank := true  // the previous line was blank (or there was none)
	inIndented := false // the previous line was part of an indented block
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		blank := strings.TrimSpace(line) == ""
		if fence != "" {
			if closesFence(line, fence) {
				fence = ""
			}
			afterBlank = blank
			continue
		}
		if f := opensFence(line); f != "" {
			fence, inIndented, afterBlank = f, false, false
			continue
		}
		if !blank && (afterBlank || inIndented) && indentedCode(line) {
			inIndented, afterBlank = true, false
			continue
		}
		if !blank {
			inIndented = false
		}
		afterBlank = blank
		out = append(out, outsideCodeSpans(line))
	}
	return out
}

// indentedCode reports whether line starts with four columns of white space.
func indentedCode(line string) bool {
	return strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "    ") ||
		strings.HasPrefix(line, " \t") || strings.HasPrefix(line, "  \t") || strings.HasPrefix(line, "   \t")
}

// opensFence returns the fence (three or more backticks or tildes, indented
// by at most three spaces) that line opens, or "".
func opensFence(line string) string {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || len(trimmed) < 3 {
		return ""
	}
	c := trimmed[0]
	if c != '`' && c != '~' {
		return ""
	}
	n := 0
	for n < len(trimmed) && trimmed[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.ContainsRune(trimmed[n:], '`')) {
		return ""
	}
	return trimmed[:n]
}

// closesFence reports whether line closes a block opened by fence: the same
// character, at least as many, and nothing else on the line.
func closesFence(line, fence string) bool {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 {
		return false
	}
	trimmed = strings.TrimRight(trimmed, " \t")
	return len(trimmed) >= len(fence) && strings.Trim(trimmed, fence[:1]) == ""
}

// outsideCodeSpans removes code spans from one line: a run of backticks
// opens a span that the next run of exactly as many backticks closes; a run
// that is never closed is text.
func outsideCodeSpans(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); {
		if line[i] != '`' {
			b.WriteByte(line[i])
			i++
			continue
		}
		n := backticks(line, i)
		end := closingRun(line, i+n, n)
		if end < 0 {
			b.WriteString(line[i : i+n])
			i += n
			continue
		}
		i = end + n
	}
	return b.String()
}

// closingRun returns where, from i, a run of exactly n backticks starts, or -1.
func closingRun(line string, i, n int) int {
	for i < len(line) {
		if line[i] != '`' {
			i++
			continue
		}
		m := backticks(line, i)
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func backticks(line string, i int) int {
	n := 0
	for i+n < len(line) && line[i+n] == '`' {
		n++
	}
	return n
}
