package lab

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Load reads the lab file at path strictly, applies defaults and validates
// it, including that the build directories of its images exist in the
// file's directory and hold a Dockerfile. Every problem is reported, as
// Errors, with its file:line:column.
func Load(path string) (*Lab, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading lab file: %w", err)
	}
	return parse(path, data, filepath.Dir(path))
}

// Parse is Load for a lab file's content, which has no directory: the
// images' build directories are not looked for. name is used in error
// positions. On any problem it returns nil and Errors listing all of them.
func Parse(name string, data []byte) (*Lab, error) { return parse(name, data, "") }

// parse is Parse for a lab file in labDir, whose images' build directories
// must exist there; "" skips that.
func parse(name string, data []byte, labDir string) (*Lab, error) {
	l, errs := decodeLab(name, data)
	if l == nil {
		return nil, errs.orNil()
	}
	l.Default()
	errs = append(errs, l.validateIn(labDir)...)
	if len(errs) > 0 {
		return nil, errs.orNil()
	}
	return l, nil
}

// Position returns where the field at path (e.g. "steps[2].checks[0]") was
// written, or of its closest parent that was. ok is false for a Lab that
// was not parsed from a file.
func (l *Lab) Position(path string) (file string, line, column int, ok bool) {
	if l.src == nil {
		return "", 0, 0, false
	}
	p := l.src.lookup(path)
	return l.src.file, p.line, p.column, true
}

// lookup finds the position of path or its closest recorded parent.
func (s *source) lookup(path string) position {
	for {
		if p, ok := s.pos[path]; ok {
			return p
		}
		if path == "" {
			return position{1, 1}
		}
		path = parentPath(path)
	}
}

// parentPath drops the last segment of a field path string.
func parentPath(path string) string {
	if strings.HasSuffix(path, "]") {
		// Find the [ that opens the last segment, skipping quoted keys.
		if i := lastBracket(path); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndexAny(path, ".]"); i >= 0 {
		if path[i] == ']' {
			return path[:i+1]
		}
		return path[:i]
	}
	return ""
}

// lastBracket returns the index of the [ opening path's final segment.
func lastBracket(path string) int {
	inQuote := false
	open := -1
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == '[':
			open = i
		}
	}
	return open
}

// decodeLab parses data into a Lab. It returns nil when the file is not a
// single YAML mapping; otherwise the Lab and every decoding problem.
func decodeLab(name string, data []byte) (*Lab, Errors) {
	docs, err := parseYAML(data)
	if err != nil {
		return nil, Errors{syntaxError(name, data, err)}
	}
	at := func(n *yaml.Node, msg string) Errors {
		return Errors{{File: name, Line: max(n.Line, 1), Column: max(n.Column, 1), Msg: msg}}
	}
	if len(docs) == 0 || len(docs[0].Content) == 0 || isNull(docs[0].Content[0]) {
		return nil, Errors{{File: name, Line: 1, Column: 1, Msg: "the file is empty; a lab file starts with \"apiVersion: " + APIVersion + "\" and \"kind: " + Kind + "\""}}
	}
	root := resolve(docs[0].Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, at(root, fmt.Sprintf("expected a mapping starting with apiVersion: %s, found %s", APIVersion, describe(root)))
	}
	d := newDecoder(name)
	l := &Lab{}
	d.decode(docs[0].Content[0], reflect.ValueOf(l).Elem(), "")
	for _, extra := range docs[1:] {
		if len(extra.Content) == 0 || isNull(extra.Content[0]) {
			continue // an empty document after a trailing --- holds nothing
		}
		errs := at(extra, "a lab file holds one document; remove this --- and what follows, or move it to another file")
		d.errs = append(d.errs, errs...)
	}
	l.src = d.src
	return l, d.errs
}

// parseYAML reads every document in data.
func parseYAML(data []byte) (docs []*yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: the YAML parser failed on this input (%v)", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, &n)
	}
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
var yamlAnchorRE = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)

// syntaxError turns a YAML parser error into an Error with the best
// position available.
func syntaxError(name string, data []byte, err error) Error {
	msg := err.Error()
	e := Error{File: name, Line: 1, Msg: strings.TrimPrefix(msg, "yaml: ")}
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		if line, convErr := strconv.Atoi(m[1]); convErr == nil && line > 0 {
			e.Line, e.Msg = line, m[2]
		}
		return e
	}
	if m := yamlAnchorRE.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(data, []byte("*"+m[1])); i >= 0 {
			e.Line, e.Column = lineColumn(data, i)
		}
		e.Msg = fmt.Sprintf("alias *%s names no anchor; define &%s before using it", m[1], m[1])
		return e
	}
	if i := badByte(data); i >= 0 {
		e.Line, e.Column = lineColumn(data, i)
	}
	return e
}

// badByte returns the offset of the first invalid UTF-8 sequence or
// control character YAML forbids, or -1.
func badByte(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' && r != 0x85 {
			return i
		}
		i += size
	}
	return -1
}

// lineColumn converts a byte offset to a 1-based line and column (in runes).
func lineColumn(data []byte, off int) (int, int) {
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, utf8.RuneCount(before[start:]) + 1
}
