package checks

import (
	"sort"

	"github.com/labctl/labctl/lab"
)

// selected is one value a field path found, with the concrete path that
// reached it (wildcards replaced by the key or index they matched), written
// in the field path syntax for messages.
type selected struct {
	path  string
	value any
}

// selectValues returns every value p selects in the normalized document
// doc, in document order (the values of a mapping under [*] in key order).
// A filter selects the elements of a list that are mappings whose key
// holds its string. A key on a list, an index or a filter on a mapping, or
// an index out of range selects nothing.
func selectValues(p lab.Path, doc any) []selected {
	type found struct {
		path  lab.Path
		value any
	}
	cur := []found{{value: doc}}
	for _, seg := range p {
		var next []found
		for _, f := range cur {
			step := func(s lab.Segment, v any) {
				next = append(next, found{append(f.path[:len(f.path):len(f.path)], s), v})
			}
			switch v := f.value.(type) {
			case map[string]any:
				switch seg.Kind {
				case lab.KeySegment:
					if val, ok := v[seg.Key]; ok {
						step(seg, val)
					}
				case lab.WildcardSegment:
					keys := make([]string, 0, len(v))
					for k := range v {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						step(lab.Key(k), v[k])
					}
				}
			case []any:
				switch seg.Kind {
				case lab.IndexSegment:
					if seg.Index >= 0 && seg.Index < len(v) {
						step(seg, v[seg.Index])
					}
				case lab.WildcardSegment:
					for i, e := range v {
						step(lab.Index(i), e)
					}
				case lab.FilterSegment:
					for i, e := range v {
						if m, ok := e.(map[string]any); ok && m[seg.Key] == seg.Value {
							step(lab.Index(i), e)
						}
					}
				}
			}
		}
		cur = next
	}
	out := make([]selected, len(cur))
	for i, f := range cur {
		out[i] = selected{path: f.path.String(), value: f.value}
	}
	return out
}
