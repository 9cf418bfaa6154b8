package lab

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem found in a lab file, with where it was written.
// Line and Column are 1-based; zero means the position is unknown (a Lab
// built in Go rather than parsed).
type Error struct {
	File   string
	Line   int
	Column int
	// Path names the field, e.g. steps[3].checks[1].file.exists; empty for
	// problems with the file as a whole.
	Path string
	Msg  string
}

// Error formats the problem as file:line:column: path: message.
func (e Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, "%d:", e.Column)
		}
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in a lab file, sorted by position.
type Errors []Error

// Error lists the problems, one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// sortByPosition orders problems by line and column; problems without a
// position come last, in the order they were found.
func (es Errors) sortByPosition() {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if (a.Line == 0) != (b.Line == 0) {
			return b.Line == 0
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// orNil returns es as an error, or nil when there is no problem.
func (es Errors) orNil() error {
	if len(es) == 0 {
		return nil
	}
	es.sortByPosition()
	return es
}
