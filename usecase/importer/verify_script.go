package importer

import (
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/labctl/labctl/lab"
)

// commandVerify is the check that runs a whole verify script: with the
// interpreter its first line names, in the learner's home as the
// platform ran it, for as long as the script's own waits take.
func commandVerify(script string) check {
	script = strings.TrimSpace(script)
	if ip := interpreter(script); ip != "python" && ip != "python3" {
		script, _ = logsOutsideHome(script)
	}
	run := []string{"bash", "-c", failMessage(script)}
	switch interpreter(script) {
	case "sh", "dash":
		if !strings.Contains(script, "fail-message") { // sh names no function with a '-'
			run = []string{"sh", "-c", script}
		}
	case "python", "python3":
		run = []string{"python3", "-c", script}
	}
	if (run[0] == "bash" || run[0] == "sh") && kUseRE.MatchString(script) {
		// Scenarios alias kubectl as k; a script sees no aliases.
		run[2] = "k() { kubectl \"$@\"; }\n" + run[2]
	}
	c := check{
		Name:        "verify-script",
		Description: "the scenario's verify script passes (it runs in the sandbox with the learner's kubectl: rewrite it as typed checks)",
		Command:     &commandCheck{Run: run, Dir: lab.HomeDir},
	}
	if d := waits(script); d > 0 {
		c.Timeout = (d + lab.DefaultCheckTimeout).String()
	}
	return c
}

var (
	shebangRE = lazyRegexp(`^#![ \t]*(\S+)(?:[ \t]+(\S+))?`)
	// waitRE is what bounds a wait of a script: --timeout=120s, timeout 60,
	// sleep 5.
	waitRE = lazyRegexp(`(?:--timeout[= ]|\btimeout\s+|\bsleep\s+)([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?\b`)
)

// interpreter is the program a script's first line (#!) names: bash, sh,
// python3 ...; "" without one.
func interpreter(script string) string {
	m := shebangRE.FindStringSubmatch(script)
	if m == nil {
		return ""
	}
	prog := path.Base(m[1])
	if prog == "env" && m[2] != "" {
		prog = path.Base(m[2])
	}
	return prog
}

// maxCheckWait bounds the timeout an imported check takes from its script.
const maxCheckWait = 10 * time.Minute

// waits is how long the script's own waits (kubectl wait --timeout,
// timeout N, sleep N) may take in all.
func waits(script string) time.Duration {
	var total time.Duration
	for _, m := range waitRE.FindAllStringSubmatch(script, -1) {
		unit := m[2]
		if unit == "" {
			unit = "s"
		}
		d, err := time.ParseDuration(m[1] + unit)
		if err == nil {
			total += d
		}
	}
	return min(total, maxCheckWait)
}

// shellWords splits a command line with single and double quotes and no
// expansions; false when it has any ($, `, \, a pipe or a list).
func shellWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, false
			}
			q := s[i+1 : i+1+end]
			if c == '"' && strings.ContainsAny(q, "$`\\") {
				return nil, false
			}
			cur.WriteString(q)
			inWord = true
			i += end + 1
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.IndexByte("$`\\|;&<>()", c) >= 0:
			return nil, false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// grepPatternRE is a grep pattern that reads the same as an RE2
// expression: letters, digits and . _ : / = - and space, anchored or not.
var grepPatternRE = lazyRegexp(`^\^?[A-Za-z0-9 ._:/=-]+\$?$`)

// grepRegexp is the expression a string field must match for grep with
// flags (q, w, F) to find pattern in what jsonpath printed, line by line;
// false when there is none as exact.
func grepRegexp(flags, pattern string) (string, bool) {
	var re string
	switch {
	case strings.Contains(flags, "F"):
		if pattern == "" || strings.Contains(pattern, "\n") {
			return "", false
		}
		re = regexp.QuoteMeta(pattern)
	case grepPatternRE.MatchString(pattern) && strings.Trim(pattern, "^$") != "":
		re = pattern
	default:
		return "", false
	}
	if strings.Contains(flags, "w") {
		// grep -w: the match is neither preceded nor followed by a
		// letter, a digit or an underscore.
		re = `(?:^|[^A-Za-z0-9_])(?:` + re + `)(?:[^A-Za-z0-9_]|$)`
	}
	if strings.ContainsAny(re, "^$") {
		// grep reads lines: its anchors are a line's.
		re = "(?m)" + re
	}
	return re, true
}

// failMessage gives a script that calls Instruqt's fail-message the
// function it expects: the message on stderr, and the check fails.
func failMessage(script string) string {
	if !strings.Contains(script, "fail-message") {
		return script
	}
	return "fail-message() { echo \"$*\" >&2; exit 1; }\n" + script
}
