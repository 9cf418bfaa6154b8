package app

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/labctl/labctl/internal/textsafe"
)

// goTraceLine matches the lines a Go runtime prints when a program panics or
// dies (a checker out of threads, a crashed kubectl): they help a developer
// reading -v, never a learner. goFrame matches a stack frame's file line and
// goCall the call line above it, for the tail of a trace whose head was cut
// off (the last lines of a script's output).
var (
	goTraceLine = regexp.MustCompile(`(^|: )(goroutine \d+ \[|runtime: |panic: |fatal error: |\[signal |runtime/cgo: )`)
	goFrame     = regexp.MustCompile(`^(/\S+\.go:\d+( \+0x[0-9a-f]+)?|created by \S+)`)
	goCall      = regexp.MustCompile(`^[\w./*()\[\]-]+\(.*\)$`)
)

// shortenGoTrace cuts s at the first line of a Go runtime trace in it,
// keeping that line when it says what happened, and reports whether it cut
// anything.
func shortenGoTrace(s string) (string, bool) {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		line = strings.TrimSpace(line)
		keep := i
		switch {
		case goTraceLine.MatchString(line):
			keep = i + 1
		case goFrame.MatchString(line):
			if i > 0 && goCall.MatchString(strings.TrimSpace(lines[i-1])) {
				keep = i - 1
			}
		default:
			continue
		}
		if strings.TrimSpace(strings.Join(lines[keep:], "\n")) == "" {
			return s, false
		}
		short := strings.TrimRight(strings.Join(lines[:keep], "\n"), " \n:")
		if short == "" {
			short = "a program crashed"
		}
		return short, true
	}
	return s, false
}

// detailed is an error that carries more text than its message, for -v.
type detailed interface {
	error
	Detail() string
}

// printError prints err as labctl's one message: a Go runtime trace in it is
// reduced to its first line unless verbose, and an error's detail is shown
// only when verbose. Both are escaped (textsafe): an error may quote what a
// lab's author or a learner wrote.
func printError(w io.Writer, err error, verbose bool) {
	msg := textsafe.Escape(err.Error())
	if short, cut := shortenGoTrace(msg); cut && !verbose {
		msg = short + "\n(a program's crash report was left out: run again with -v to see it)"
	}
	fmt.Fprintf(w, "labctl: %s\n", msg)
	var d detailed
	if verbose && errors.As(err, &d) && strings.TrimSpace(d.Detail()) != "" {
		fmt.Fprintf(w, "detail:\n%s\n", strings.TrimRight(textsafe.Escape(d.Detail()), "\n"))
	}
}

// internalErrorCode is labctl's exit code for a bug of its own.
const internalErrorCode = 2

// printPanic reports a panic of labctl itself in one line, with the stack
// only when verbose, and returns the exit code.
func printPanic(w io.Writer, p any, stack []byte, verbose bool) int {
	what, _, _ := strings.Cut(strings.TrimSpace(textsafe.Escape(fmt.Sprint(p))), "\n")
	fmt.Fprintf(w, "labctl: internal error, please report it (with the output of the same command run with -v): %s\n", what)
	if verbose {
		fmt.Fprintf(w, "%s\n", stack)
	}
	return internalErrorCode
}
