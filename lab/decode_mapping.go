package lab

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// pair is one key and value of a mapping.
type pair struct {
	key     string
	keyNode *yaml.Node
	value   *yaml.Node
}

// pairs lists a mapping's entries with merge keys (<<) expanded, reporting
// duplicate and non-string keys.
func (d *decoder) pairs(n *yaml.Node, path string) []pair {
	var out []pair
	seen := map[string]*yaml.Node{}
	var merged []pair
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		if !d.visit(k, path) {
			return out
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merged = append(merged, d.mergeSources(val, path)...)
			continue
		}
		if k.Kind != yaml.ScalarNode || isNull(k) {
			d.notef(k, path, "expected a field name, found %s", describe(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.notef(k, joinKey(path, k.Value), "%q is set twice (first at line %d); remove one", k.Value, first.Line)
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{key: k.Value, keyNode: k, value: val})
	}
	for _, p := range merged {
		if _, dup := seen[p.key]; dup {
			continue
		}
		seen[p.key] = p.keyNode
		out = append(out, p)
	}
	return out
}

// mergeSources returns the entries a merge key's value brings in.
func (d *decoder) mergeSources(val *yaml.Node, path string) []pair {
	val = resolve(val)
	switch val.Kind {
	case yaml.MappingNode:
		return d.pairs(val, path)
	case yaml.SequenceNode:
		var out []pair
		for _, c := range val.Content {
			c = resolve(c)
			if c.Kind != yaml.MappingNode {
				d.notef(c, path, "a merge (<<) list holds mappings, found %s", describe(c))
				continue
			}
			out = append(out, d.pairs(c, path)...)
		}
		return out
	}
	d.notef(val, path, "a merge (<<) takes a mapping or a list of mappings, found %s", describe(val))
	return nil
}

// structFields lists the YAML keys of struct type t, inline structs flattened.
func (d *decoder) structFields(t reflect.Type) []field {
	if fs, ok := d.fields[t]; ok {
		return fs
	}
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if opts == "inline" || (f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct) {
			for _, sub := range d.structFields(f.Type) {
				fs = append(fs, field{name: sub.name, index: append([]int{i}, sub.index...)})
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fs = append(fs, field{name: name, index: []int{i}})
	}
	d.fields[t] = fs
	return fs
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "expected a mapping (key: value lines), found %s", describe(n))
		return
	}
	fs := d.structFields(v.Type())
	for _, p := range d.pairs(n, path) {
		fpath := joinKey(path, p.key)
		f, ok := findField(fs, p.key)
		if !ok {
			d.errorf(p.keyNode, fpath, "unknown field; %s", suggestField(fs, p.key, path))
			continue
		}
		d.decode(p.value, v.FieldByIndex(f.index), fpath)
	}
}

func findField(fs []field, name string) (field, bool) {
	for _, f := range fs {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// suggestField names the closest known field, or lists them all.
func suggestField(fs []field, name, path string) string {
	best, bestDist := "", 3
	for _, f := range fs {
		if strings.EqualFold(f.name, name) {
			return fmt.Sprintf("did you mean %q?", f.name)
		}
		if dist := editDistance(strings.ToLower(f.name), strings.ToLower(name)); dist < bestDist {
			best, bestDist = f.name, dist
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	where := path
	if where == "" {
		where = "the lab"
	}
	return fmt.Sprintf("%s takes %s", where, strings.Join(names, ", "))
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
