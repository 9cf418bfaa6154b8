package lab

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// maxVisits bounds the values one document may expand to through aliases, so
// a small file cannot make the decoder do unbounded work.
const maxVisits = 1 << 17

// position is where a value was written (1-based).
type position struct{ line, column int }

// source records where a parsed lab's fields were written.
type source struct {
	file string
	pos  map[string]position
	// bad holds the paths that failed to decode, and badElems the lists
	// with an element that failed; validation stays quiet about them so
	// each mistake is reported once.
	bad      map[string]bool
	badElems map[string]bool
}

// field is one settable YAML key of a struct, inline structs flattened.
type field struct {
	name  string
	index []int
}

var (
	valueType    = reflect.TypeFor[Value]()
	durationType = reflect.TypeFor[Duration]()
)

// decoder walks a yaml.Node tree into Go values, collecting every problem.
type decoder struct {
	src       *source
	errs      Errors
	visits    int
	exhausted bool
	fields    map[reflect.Type][]field
	// reported holds the nodes already reported on, so a value reached
	// through many aliases is reported once.
	reported map[*yaml.Node]bool
}

func newDecoder(file string) *decoder {
	return &decoder{
		src: &source{file: file, pos: map[string]position{},
			bad: map[string]bool{}, badElems: map[string]bool{}},
		fields:   map[reflect.Type][]field{},
		reported: map[*yaml.Node]bool{},
	}
}

// errorf reports a value that could not be decoded; validation then stays
// quiet about path and what lies under it.
func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) {
	d.src.bad[path] = true
	if strings.HasSuffix(path, "]") {
		d.src.badElems[parentPath(path)] = true
	}
	d.notef(n, path, format, args...)
}

// notef reports a problem that leaves the value at path usable.
func (d *decoder) notef(n *yaml.Node, path, format string, args ...any) {
	if d.reported[n] {
		return
	}
	d.reported[n] = true
	d.errs = append(d.errs, Error{
		File: d.src.file, Line: n.Line, Column: n.Column, Path: path,
		Msg: fmt.Sprintf(format, args...),
	})
}

// visit counts work and reports false once the budget is spent.
func (d *decoder) visit(n *yaml.Node, path string) bool {
	d.visits++
	if d.visits <= maxVisits {
		return true
	}
	if !d.exhausted {
		d.exhausted = true
		d.notef(n, path, "the document expands to more than %d values; use fewer nested aliases", maxVisits)
	}
	return false
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func joinKey(path, key string) string {
	seg := Path{Key(key)}.String()
	if path == "" || strings.HasPrefix(seg, "[") {
		return path + seg
	}
	return path + "." + seg
}

func joinIndex(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// describe names a node's value for "found ..." in messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
	default:
		return "an unexpected node"
	}
	v := n.Value
	if r := []rune(v); len(r) > 40 {
		v = string(r[:37]) + "..."
	}
	switch n.ShortTag() {
	case "!!null":
		return "nothing (null)"
	case "!!str":
		return strconv.Quote(v)
	case "!!bool":
		return "the boolean " + v
	case "!!int", "!!float":
		return "the number " + v
	}
	return v
}

// decode stores n into v, whose type is one of the lab file's types.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	if !d.visit(n, path) {
		return
	}
	if _, ok := d.src.pos[path]; !ok {
		d.src.pos[path] = position{n.Line, n.Column}
	}
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.Tag != "" && !strings.HasPrefix(n.ShortTag(), "!!") {
		d.errorf(n, path, "unsupported tag %s; remove it", n.Tag)
		return
	}
	if isNull(n) {
		// null is the same as leaving the field out.
		return
	}
	t := v.Type()
	switch {
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		d.decode(n, p.Elem(), path)
		v.Set(p)
	case t == valueType:
		d.decodeValue(n, v, path)
	case t == durationType:
		d.decodeDuration(n, v, path)
	case t.Kind() == reflect.Struct:
		d.decodeStruct(n, v, path)
	case t.Kind() == reflect.Slice:
		d.decodeSlice(n, v, path)
	case t.Kind() == reflect.Map:
		d.decodeMap(n, v, path)
	case t.Kind() == reflect.Interface:
		if lit, ok := d.literal(n, path); ok && lit != nil {
			v.Set(reflect.ValueOf(lit))
		}
	default:
		d.decodeScalar(n, v, path)
	}
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	t := v.Type()
	want := map[reflect.Kind]string{
		reflect.String: "a string", reflect.Bool: "a boolean",
		reflect.Float32: "a number", reflect.Float64: "a number",
	}[t.Kind()]
	if want == "" {
		want = "an integer"
	}
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, path, "expected %s, found %s", want, describe(n))
		return
	}
	tag := n.ShortTag()
	switch t.Kind() {
	case reflect.String:
		switch tag {
		case "!!str", "!!int", "!!float", "!!timestamp", "!!binary":
			v.SetString(n.Value)
		default:
			d.errorf(n, path, "expected a string, found %s; quote it if you mean the text", describe(n))
		}
	case reflect.Bool:
		var b bool
		if tag != "!!bool" || n.Decode(&b) != nil {
			d.errorf(n, path, "expected a boolean, found %s", describe(n))
			return
		}
		v.SetBool(b)
	case reflect.Float32, reflect.Float64:
		var f float64
		if (tag != "!!float" && tag != "!!int") || n.Decode(&f) != nil {
			d.errorf(n, path, "expected a number, found %s", describe(n))
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			d.errorf(n, path, "expected a finite number, found %s", describe(n))
			return
		}
		v.SetFloat(f)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if tag != "!!int" || n.Decode(&i) != nil {
			d.errorf(n, path, "expected an integer, found %s", describe(n))
			return
		}
		if v.OverflowInt(i) {
			d.errorf(n, path, "the number %s is too large", n.Value)
			return
		}
		v.SetInt(i)
	default:
		d.errorf(n, path, "cannot decode into %s", t)
	}
}

func (d *decoder) decodeDuration(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.errorf(n, path, "expected a duration with a unit such as \"10s\" or \"1m30s\", found %s", describe(n))
		return
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		d.errorf(n, path, "expected a duration such as \"10s\" or \"1m30s\", found %s", describe(n))
		return
	}
	v.Set(reflect.ValueOf(Duration{dur}))
}

func (d *decoder) decodeValue(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 {
		if k := resolve(n.Content[0]); k.Kind == yaml.ScalarNode && k.ShortTag() == "!!str" && k.Value == "ref" {
			ref := resolve(n.Content[1])
			refPath := joinKey(path, "ref")
			d.src.pos[refPath] = position{ref.Line, ref.Column}
			if ref.Kind != yaml.ScalarNode || ref.ShortTag() != "!!str" || ref.Value == "" {
				d.errorf(ref, refPath, "expected a reference string such as \"file:/root/out.json#key\", found %s", describe(ref))
				return
			}
			v.Set(reflect.ValueOf(Value{Ref: ref.Value}))
			return
		}
	}
	if lit, ok := d.literal(n, path); ok {
		v.Set(reflect.ValueOf(Value{Literal: lit}))
	}
}

// literal converts n to plain Go data: map[string]any, []any, string, int,
// float64, bool or nil, the same shapes a JSON or YAML document parses to.
func (d *decoder) literal(n *yaml.Node, path string) (any, bool) {
	if !d.visit(n, path) {
		return nil, false
	}
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		ok := true
		for _, p := range d.pairs(n, path) {
			val, good := d.literal(p.value, joinKey(path, p.key))
			ok = ok && good
			m[p.key] = val
		}
		return m, ok
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		ok := true
		for i, c := range n.Content {
			val, good := d.literal(c, joinIndex(path, i))
			ok = ok && good
			s = append(s, val)
		}
		return s, ok
	case yaml.ScalarNode:
	default:
		d.errorf(n, path, "expected a value, found %s", describe(n))
		return nil, false
	}
	switch n.ShortTag() {
	case "!!null":
		return nil, true
	case "!!str", "!!timestamp", "!!binary":
		return n.Value, true
	case "!!bool", "!!int", "!!float":
		var x any
		if err := n.Decode(&x); err != nil {
			d.errorf(n, path, "bad value %s: %v", describe(n), err)
			return nil, false
		}
		if f, isFloat := x.(float64); isFloat && (math.IsNaN(f) || math.IsInf(f, 0)) {
			d.errorf(n, path, "expected a finite number, found %s", describe(n))
			return nil, false
		}
		return x, true
	}
	d.errorf(n, path, "unsupported tag %s; remove it", n.Tag)
	return nil, false
}

// oneOrMany marks a list type whose YAML may be a single element instead
// of a list of one.
type oneOrMany interface{ OneOrMany() }

var oneOrManyType = reflect.TypeFor[oneOrMany]()

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode && v.Type().Implements(oneOrManyType) {
		s := reflect.MakeSlice(v.Type(), 1, 1)
		d.decode(n, s.Index(0), joinIndex(path, 0))
		v.Set(s)
		return
	}
	if n.Kind != yaml.SequenceNode {
		hint := ""
		if n.Kind == yaml.ScalarNode {
			hint = "; write a list, e.g. [" + n.Value + "] or one \"- item\" per line"
		}
		d.errorf(n, path, "expected a list, found %s%s", describe(n), hint)
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		d.decode(c, s.Index(i), joinIndex(path, i))
	}
	v.Set(s)
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping, found %s", describe(n))
		return
	}
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		d.errorf(n, path, "cannot decode into %s", t)
		return
	}
	m := reflect.MakeMap(t)
	for _, p := range d.pairs(n, path) {
		elem := reflect.New(t.Elem()).Elem()
		d.decode(p.value, elem, joinKey(path, p.key))
		m.SetMapIndex(reflect.ValueOf(p.key).Convert(t.Key()), elem)
	}
	v.Set(m)
}
