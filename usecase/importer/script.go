package importer

import (
	"fmt"
	"strconv"
	"strings"
)

// stmt is one statement of a verify script: a simple command on its
// line(s), or a compound one (if … fi, a loop, a { } group) whole.
type stmt struct {
	// first and last are its lines in the script, from 1.
	first, last int
	// src is its lines as the script has them.
	src string
	// text is the statement on one line, spaces collapsed, to read.
	text string
}

func (s stmt) lines() string {
	if s.first == s.last {
		return fmt.Sprintf("line %d", s.first)
	}
	return fmt.Sprintf("lines %d-%d", s.first, s.last)
}

var (
	// quotedRE is a quoted string, taken out before counting keywords.
	quotedRE = lazyRegexp(`'[^']*'|"(?:[^"\\]|\\.)*"`)
	// joinRE tidies the separators of lines joined with "; ".
	joinRE = lazyRegexp(`\b(then|else|do)\s*;\s+|\{\s*;\s+`)
)

// nesting is how many compound commands a line opens, less those it
// closes.
func nesting(line string) int {
	line = quotedRE.ReplaceAllString(line, `""`)
	line = strings.NewReplacer(";", " ; ", "&&", " && ", "||", " || ").Replace(line)
	n := 0
	for i, w := range strings.Fields(line) {
		if strings.HasPrefix(w, "#") {
			break
		}
		switch w {
		case "if", "for", "while", "until", "case", "select", "{":
			n++
		case "fi", "done", "esac", "}":
			n--
		default:
			// name() { or a } followed by a redirect: }>>log
			if strings.HasPrefix(w, "}") && i == 0 {
				n--
			}
		}
	}
	return n
}

// splitStatements reads a script as its statements, skipping blank lines
// and comments; false when it cannot tell where they end (an unclosed
// compound command, a here-document).
func splitStatements(script string) ([]stmt, bool) {
	lines := strings.Split(script, "\n")
	var out []stmt
	var cur []string
	first, depth := 0, 0
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			if len(cur) > 0 && depth > 0 {
				cur = append(cur, l)
			}
			continue
		}
		if strings.Contains(t, "<<") {
			return nil, false
		}
		if len(cur) == 0 {
			first = i + 1
		}
		cur = append(cur, l)
		if strings.HasSuffix(t, `\`) {
			continue
		}
		depth += nesting(t)
		if depth < 0 {
			return nil, false
		}
		if depth > 0 {
			continue
		}
		out = append(out, stmt{first: first, last: i + 1, src: strings.Join(cur, "\n"), text: oneStatement(cur)})
		cur = nil
	}
	if len(cur) > 0 {
		return nil, false
	}
	return out, true
}

// oneStatement joins the lines of a statement into one: a line that ends
// in \ continues, the others end a command.
func oneStatement(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		t := strings.TrimSpace(stripComment(l))
		if t == "" {
			continue
		}
		if cont, ok := strings.CutSuffix(t, `\`); ok {
			b.WriteString(cont + " ")
			continue
		}
		b.WriteString(t + "; ")
	}
	s := strings.TrimSuffix(strings.TrimSpace(b.String()), ";")
	s = joinRE.ReplaceAllStringFunc(s, func(m string) string {
		return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(m), ";")) + " "
	})
	return strings.Join(strings.Fields(s), " ")
}

// stripComment takes a comment off the end of a line: a # that starts
// a word, outside quotes.
func stripComment(l string) string {
	var quote byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || l[i-1] == ' ' || l[i-1] == '\t'):
			return l[:i]
		}
	}
	return l
}

var (
	// constRE sets a variable to one word that needs no quoting.
	constRE = lazyRegexp(`^(?:export |readonly |declare |local )?([A-Za-z_][A-Za-z0-9_]*)=(?:"([A-Za-z0-9._/:@=+-]*)"|'([A-Za-z0-9._/:@=+-]*)'|([A-Za-z0-9._/:@=+-]*))$`)
	// captureRE sets a variable to what a command prints: X=$(…).
	captureRE = lazyRegexp(`^(?:export |readonly |local )?([A-Za-z_][A-Za-z0-9_]*)=(?:"\$\((.+)\)"|\$\((.+)\))$`)
	// assignedRE finds where a script sets a variable (or reads one in,
	// or loops over values).
	assignedRE = lazyRegexp(`(?:^|[\s;&|(])(?:([A-Za-z_][A-Za-z0-9_]*)\+?=|(?:read(?:\s+-[a-z]+)*|for|select)\s+([A-Za-z_][A-Za-z0-9_]*))`)
	// setRE is a set command; errexit is on after set -e (or -o errexit).
	setRE = lazyRegexp(`^set(\s+[-+]?[a-zA-Z]+)+$`)
	// echoRE prints and changes nothing: echo, printf, a colon.
	echoRE = lazyRegexp(`^(echo|printf|:)(\s+(` + argRE + `))*(\s*>&2|\s+1>&2)?$`)
	// argRE is an argument that runs nothing: quoted, or a word, with
	// variables read but no command substituted.
	argRE = `"(?:[^"$` + "`" + `\\]|\\.|\$\{?[A-Za-z0-9_@*#?]+\}?)*"|'[^']*'|(?:[^\s;&|<>$` + "`" + `()'"]|\$\{?[A-Za-z0-9_@*#?]+\}?)+`
	// exitRE ends the script with a status.
	exitRE = lazyRegexp(`^exit(?:\s+([0-9]+))?$`)
	// funcRE defines a function on one line (as a statement reads).
	funcRE = lazyRegexp(`^(?:function\s+)?([A-Za-z_][A-Za-z0-9_-]*)\s*\(\)\s*\{\s*(.*?);?\s*\}$`)
	// varRefRE is a variable read: $X or ${X}.
	varRefRE = lazyRegexp(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
)

// assignments counts how many times the script sets each variable.
func assignments(script string) map[string]int {
	n := map[string]int{}
	for _, m := range assignedRE.FindAllStringSubmatch(script, -1) {
		n[m[1]+m[2]]++
	}
	return n
}

// substitute writes the value of each constant where a statement reads
// it, outside single quotes.
func substitute(s string, consts map[string]string) string {
	var b strings.Builder
	inSingle, inDouble := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' && !inDouble:
			inSingle = !inSingle
		case c == '"' && !inSingle:
			inDouble = !inDouble
		case c == '\\' && !inSingle && i+1 < len(s):
			b.WriteByte(c)
			i++
			c = s[i]
		case c == '$' && !inSingle:
			if m := varRefRE.FindStringSubmatchIndex(s[i:]); m != nil && m[0] == 0 {
				ref := s[i : i+m[1]]
				name := s[i+m[2] : i+m[3]]
				// ${X} is whole; $X stops where a name cannot go on.
				if v, ok := consts[name]; ok && (strings.HasPrefix(ref, "${") == strings.HasSuffix(ref, "}")) {
					b.WriteString(v)
					i += m[1] - 1
					continue
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// capture is what a variable holds when a script reads a field into it:
// the field's kube check and how it is printed.
type capture struct {
	kube *kubeCheck
	// json says jq printed the value as JSON (a string quoted), not raw
	// (jsonpath, jq -r).
	json bool
	stmt int
}

// jqPathRE is a jq path of plain keys and indices: .spec.containers[0].image.
var jqPathRE = lazyRegexp(`^((?:\.[A-Za-z_][A-Za-z0-9_]*(?:\[[0-9]+\])*)+)$`)

// readField reads a command that prints one field of one object: kubectl
// get … -o jsonpath='{.f}', or kubectl get … -o json | jq [-r] .f.
func readField(cmd, labNS string) (*kubeCheck, bool, bool) {
	cmd = kAlias(cmd)
	left, right, piped := strings.Cut(cmd, " | ")
	if !piped {
		k, ok := kubectlGet(cmd, labNS)
		return k, false, ok && k.Field != nil
	}
	k, ok := kubectlGetJSON(left, labNS)
	if !ok {
		return nil, false, false
	}
	path, raw, ok := jqPath(right)
	if !ok {
		return nil, false, false
	}
	k.Field = &fieldCheck{Path: path}
	return k, !raw, true
}

// kubectlGetJSON reads kubectl get KIND NAME -o json.
func kubectlGetJSON(cmd, labNS string) (*kubeCheck, bool) {
	words, ok := shellWords(cmd)
	if !ok {
		return nil, false
	}
	var rest []string
	json := false
	for i := 0; i < len(words); i++ {
		switch {
		case (words[i] == "-o" || words[i] == "--output") && i+1 < len(words) && words[i+1] == "json":
			json = true
			i++
		case words[i] == "-ojson" || words[i] == "--output=json" || words[i] == "-o=json":
			json = true
		default:
			rest = append(rest, words[i])
		}
	}
	if !json {
		return nil, false
	}
	k, ok := kubectlGet(strings.Join(quoteWords(rest), " "), labNS)
	return k, ok && k.Field == nil
}

// quoteWords quotes words for shellWords to read them back as they are.
func quoteWords(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = "'" + w + "'"
		if strings.Contains(w, "'") {
			out[i] = `"` + w + `"`
		}
	}
	return out
}

// jqPath reads `jq [-r] PATH` as the field path and whether jq prints it
// raw.
func jqPath(cmd string) (string, bool, bool) {
	words, ok := shellWords(strings.ReplaceAll(cmd, "[", "\x00"))
	if !ok || len(words) < 2 || words[0] != "jq" {
		return "", false, false
	}
	raw := false
	var path string
	for _, w := range words[1:] {
		w = strings.ReplaceAll(w, "\x00", "[")
		switch {
		case w == "-r" || w == "--raw-output":
			raw = true
		case strings.HasPrefix(w, "-"):
			return "", false, false
		case path == "":
			path = w
		default:
			return "", false, false
		}
	}
	if !jqPathRE.MatchString(path) {
		return "", false, false
	}
	return strings.TrimPrefix(path, "."), raw, true
}

// kAlias writes the k alias as kubectl.
func kAlias(s string) string {
	if strings.HasPrefix(s, "k ") {
		return "kubectl " + s[2:]
	}
	return s
}

// testWord is one word of a test ([ ], [[ ]], test): a literal, or a
// variable read whole.
type testWord struct {
	lit    string
	ref    string
	quoted bool
	glob   bool
}

// testWords splits a test's words: quotes are taken off (\" in double
// quotes is a "), a word that is one variable read names it; false for
// any other expansion.
func testWords(s string) ([]testWord, bool) {
	var out []testWord
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		var w testWord
		var b strings.Builder
		i := 0
	word:
		for ; i < len(s); i++ {
			c := s[i]
			switch {
			case c == ' ':
				break word
			case c == '\'':
				end := strings.IndexByte(s[i+1:], '\'')
				if end < 0 {
					return nil, false
				}
				b.WriteString(s[i+1 : i+1+end])
				w.quoted = true
				i += end + 1
			case c == '"':
				w.quoted = true
				for i++; i < len(s) && s[i] != '"'; i++ {
					switch {
					case s[i] == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0:
						i++
						b.WriteByte(s[i])
					case s[i] == '$':
						m := varRefRE.FindStringSubmatch(s[i:])
						if m == nil || b.Len() > 0 || w.ref != "" {
							return nil, false
						}
						w.ref = m[1]
						i += len(m[0]) - 1
					case s[i] == '`':
						return nil, false
					default:
						b.WriteByte(s[i])
					}
				}
				if i == len(s) {
					return nil, false
				}
			case c == '$':
				m := varRefRE.FindStringSubmatch(s[i:])
				if m == nil || b.Len() > 0 || w.ref != "" {
					return nil, false
				}
				w.ref = m[1]
				i += len(m[0]) - 1
			case strings.IndexByte("`\\;&|<>(){}", c) >= 0:
				return nil, false
			default:
				if strings.IndexByte("*?[", c) >= 0 {
					w.glob = true
				}
				b.WriteByte(c)
			}
		}
		w.lit = b.String()
		if w.ref != "" && w.lit != "" {
			return nil, false
		}
		out = append(out, w)
		s = s[i:]
	}
	return out, true
}

// intRE is an integer as test -eq reads it.
var intRE = lazyRegexp(`^-?[0-9]+$`)

// compared maps a comparison of a captured field with a literal, which
// must hold: = and == compare strings, -eq integers. double says [[ ]].
func compared(c capture, op string, lit testWord, double bool) (*kubeCheck, string, bool) {
	k := *c.kube
	f := *k.Field
	k.Field = &f
	if lit.ref != "" || (double && !lit.quoted && lit.glob) {
		return nil, "", false
	}
	v := lit.lit
	switch op {
	case "=", "==":
		if c.json {
			// jq prints a string quoted, a number, true or false bare.
			switch {
			case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && wordRE.MatchString(v[1:len(v)-1]):
				f.Equals = v[1 : len(v)-1]
			case intRE.MatchString(v) && strconv.Itoa(atoi(v)) == v:
				f.Equals = int64(atoi(v))
			case v == "true" || v == "false":
				f.Equals = v == "true"
			default:
				return nil, "", false
			}
			return &k, "", true
		}
		e, ok := printedEquals(&k, v)
		if !ok {
			return nil, "", false
		}
		f.Equals = e
		return &k, "", true
	case "-eq":
		if !intRE.MatchString(v) {
			if double {
				return nil, fmt.Sprintf("it compares with -eq, which reads %q as arithmetic (a variable's name, 0 when unset), so the test holds whatever the field is; if it means %s equals %s, write that check", v, f.Path, v), false
			}
			return nil, "", false
		}
		// -eq holds for one integer printed as itself: JSON (jq) prints a
		// string quoted, which -eq refuses; raw, a string "3" would hold
		// as well, unless the field is an integer.
		if !c.json && fieldType(&k) != "integer" {
			return nil, "", false
		}
		f.Equals = int64(atoi(v))
		return &k, "", true
	}
	return nil, "", false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
