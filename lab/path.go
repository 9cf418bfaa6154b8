package lab

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SegmentKind tells which of a Segment's forms it takes.
type SegmentKind int

const (
	// KeySegment selects a mapping entry by key: .name or ["app.kubernetes.io/name"].
	KeySegment SegmentKind = iota
	// IndexSegment selects one list element: [0].
	IndexSegment
	// WildcardSegment selects every element of a list (or every value of a mapping): [*].
	WildcardSegment
	// FilterSegment selects the elements of a list that are mappings
	// whose key holds a string: [?(@.type=="Ready")], as kubectl's
	// jsonpath writes it.
	FilterSegment
)

// Segment is one step of a field path.
type Segment struct {
	Kind  SegmentKind
	Key   string // set for KeySegment and FilterSegment
	Index int    // set for IndexSegment, >= 0
	Value string // set for FilterSegment: the string Key must hold
}

// Key returns a segment selecting a mapping entry.
func Key(k string) Segment { return Segment{Kind: KeySegment, Key: k} }

// Index returns a segment selecting a list element.
func Index(i int) Segment { return Segment{Kind: IndexSegment, Index: i} }

// Wildcard returns a segment selecting every element.
func Wildcard() Segment { return Segment{Kind: WildcardSegment} }

// Filter returns a segment selecting the elements whose key holds value.
func Filter(key, value string) Segment {
	return Segment{Kind: FilterSegment, Key: key, Value: value}
}

// Path is a parsed field path such as spec.template.spec.containers[*].image
// or metadata.labels["app.kubernetes.io/name"].
type Path []Segment

// String writes the path back in its canonical syntax; ParsePath reads it.
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch s.Kind {
		case IndexSegment:
			fmt.Fprintf(&b, "[%d]", s.Index)
		case WildcardSegment:
			b.WriteString("[*]")
		case FilterSegment:
			fmt.Fprintf(&b, "[?(@.%s==%s)]", s.Key, strconv.Quote(s.Value))
		default:
			if isPlainKey(s.Key) {
				if i > 0 {
					b.WriteByte('.')
				}
				b.WriteString(s.Key)
			} else {
				b.WriteString("[" + strconv.Quote(s.Key) + "]")
			}
		}
	}
	return b.String()
}

// HasWildcard reports whether the path can select more than one value.
func (p Path) HasWildcard() bool {
	for _, s := range p {
		if s.Kind == WildcardSegment || s.Kind == FilterSegment {
			return true
		}
	}
	return false
}

// isPlainKey reports whether k can be written after a dot without quotes.
func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !isKeyRune(r) {
			return false
		}
	}
	return true
}

// isKeyRune reports whether r may appear in an unquoted key.
func isKeyRune(r rune) bool {
	switch r {
	case '.', '[', ']', '"', '\'', '#':
		return false
	}
	return r != utf8.RuneError && !unicode.IsSpace(r) && unicode.IsPrint(r)
}

// ParsePath reads a field path: keys separated by dots, with [N] for a list
// index, [*] for every element, [?(@.key=="value")] for the elements whose
// key holds the string value, and ["key"] (Go string syntax) or ['key']
// (literal) for keys holding dots, brackets or spaces. Examples:
//
//	spec.replicas
//	spec.template.spec.containers[*].image
//	metadata.labels["app.kubernetes.io/name"]
//	status.conditions[?(@.type=="Ready")].status
//	[0].name
func ParsePath(s string) (Path, error) {
	if s == "" {
		return nil, errors.New("empty field path; write keys separated by dots, e.g. spec.replicas")
	}
	var p Path
	i := 0
	for i < len(s) {
		switch {
		case s[i] == '[':
			seg, n, err := parseBracket(s[i:])
			if err != nil {
				return nil, fmt.Errorf("field path %q at offset %d: %w", s, i, err)
			}
			p = append(p, seg)
			i += n
		case s[i] == '.' && i > 0:
			i++
			key, n := scanKey(s[i:])
			if n == 0 {
				return nil, fmt.Errorf("field path %q at offset %d: expected a key after the dot", s, i)
			}
			p = append(p, Key(key))
			i += n
		case i == 0:
			key, n := scanKey(s)
			if n == 0 {
				return nil, fmt.Errorf("field path %q at offset 0: expected a key or [", s)
			}
			p = append(p, Key(key))
			i += n
		default:
			return nil, fmt.Errorf("field path %q at offset %d: unexpected %q; quote keys holding it, e.g. [\"a.b\"]", s, i, s[i:i+1])
		}
	}
	return p, nil
}

// scanKey returns the unquoted key at the start of s and its length in bytes.
func scanKey(s string) (string, int) {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !isKeyRune(r) {
			break
		}
		n += size
	}
	return s[:n], n
}

// parseBracket reads [N], [*], [?(@.key=="value")], ["key"] or ['key'] at
// the start of s.
func parseBracket(s string) (Segment, int, error) {
	if len(s) < 2 {
		return Segment{}, 0, errors.New("unterminated [")
	}
	switch c := s[1]; {
	case c == '?':
		return parseFilter(s)
	case c == '*':
		if len(s) < 3 || s[2] != ']' {
			return Segment{}, 0, errors.New("expected ] after [*")
		}
		return Wildcard(), 3, nil
	case c == '"':
		end := 2
		for ; end < len(s); end++ {
			if s[end] == '\\' {
				end++
				continue
			}
			if s[end] == '"' {
				break
			}
		}
		if end >= len(s) {
			return Segment{}, 0, errors.New("unterminated quoted key")
		}
		key, err := strconv.Unquote(s[1 : end+1])
		if err != nil {
			return Segment{}, 0, fmt.Errorf("bad quoted key %s: %w", s[1:end+1], err)
		}
		if end+1 >= len(s) || s[end+1] != ']' {
			return Segment{}, 0, errors.New("expected ] after the quoted key")
		}
		return Key(key), end + 2, nil
	case c == '\'':
		end := strings.IndexByte(s[2:], '\'')
		if end < 0 {
			return Segment{}, 0, errors.New("unterminated quoted key")
		}
		end += 2
		if end+1 >= len(s) || s[end+1] != ']' {
			return Segment{}, 0, errors.New("expected ] after the quoted key")
		}
		return Key(s[2:end]), end + 2, nil
	case c >= '0' && c <= '9':
		end := 1
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		if end >= len(s) || s[end] != ']' {
			return Segment{}, 0, errors.New("expected ] after the index")
		}
		n, err := strconv.Atoi(s[1:end])
		if err != nil {
			return Segment{}, 0, fmt.Errorf("index %s is too large", s[1:end])
		}
		return Index(n), end + 1, nil
	default:
		return Segment{}, 0, errors.New(`expected an index, * or a quoted key after [, e.g. [0], [*] or ["a.b"]`)
	}
}

// filterError says how a filter is written.
var filterError = errors.New(`expected a filter of a key and a quoted string, e.g. [?(@.type=="Ready")]`)

// parseFilter reads [?(@.key=="value")] at the start of s: a plain key
// and a string in Go syntax.
func parseFilter(s string) (Segment, int, error) {
	rest, ok := strings.CutPrefix(s, "[?(@.")
	if !ok {
		return Segment{}, 0, filterError
	}
	n := strings.Index(rest, `=="`)
	if n <= 0 || !isPlainKey(rest[:n]) || strings.ContainsAny(rest[:n], "=()@?") {
		return Segment{}, 0, filterError
	}
	key := rest[:n]
	quoted := rest[n+2:]
	end := 1
	for ; end < len(quoted); end++ {
		if quoted[end] == '\\' {
			end++
			continue
		}
		if quoted[end] == '"' {
			break
		}
	}
	if end >= len(quoted) {
		return Segment{}, 0, errors.New("unterminated quoted string in the filter")
	}
	value, err := strconv.Unquote(quoted[:end+1])
	if err != nil {
		return Segment{}, 0, fmt.Errorf("bad quoted string %s in the filter: %w", quoted[:end+1], err)
	}
	if !strings.HasPrefix(quoted[end+1:], ")]") {
		return Segment{}, 0, errors.New(`expected )] after the filter's string`)
	}
	return Filter(key, value), len("[?(@.") + n + 2 + end + 1 + 2, nil
}
