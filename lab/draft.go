package lab

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Unfinished lists the steps that prove nothing yet: every check a
// placeholder (a command check that runs only false or exit 1, which
// fails whatever the learner did), or a solve that does nothing but fail. labctl lint reports them as problems, or, in a
// lab marked metadata.draft, as warnings.
func (l *Lab) Unfinished() []Warning {
	var ws []Warning
	add := func(p, format string, args ...any) {
		w := Warning{Path: p, Msg: fmt.Sprintf(format, args...)}
		if file, line, col, ok := l.Position(p); ok {
			w.File, w.Line, w.Column = file, line, col
		}
		ws = append(ws, w)
	}
	for i, s := range l.Steps {
		p := joinIndex("steps", i)
		if len(s.Checks) > 0 && !slices.ContainsFunc(s.Checks, func(c Check) bool { return !PlaceholderCheck(c) }) {
			add(p+".checks", "every check of step %q is a placeholder that proves nothing; write the checks that prove the step", s.ID)
		}
		if PlaceholderScript(s.Solve) {
			add(p+".solve", "the solve of step %q does nothing but fail; write the bash script a correct learner runs", s.ID)
		}
	}
	return ws
}

// placeholderLineRE is a line of a script that only fails.
var placeholderLineRE = regexp.MustCompile(`^(false|exit [1-9][0-9]*)$`)

// PlaceholderCheck reports whether c is a command check whose program,
// or shell script, only fails: it says nothing of the learner's work.
func PlaceholderCheck(c Check) bool {
	if c.Command == nil {
		return false
	}
	run := c.Command.Run
	switch {
	case len(run) == 1:
		return run[0] == "false"
	case len(run) == 3 && (run[0] == "sh" || run[0] == "bash" || run[0] == "/bin/sh" || run[0] == "/bin/bash") && run[1] == "-c":
		return PlaceholderScript(run[2])
	}
	return false
}

// PlaceholderScript reports whether a script holds nothing but comments
// and lines that only fail (false, exit 1).
func PlaceholderScript(script string) bool {
	for l := range strings.SplitSeq(script, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if !placeholderLineRE.MatchString(l) {
			return false
		}
	}
	return true
}
