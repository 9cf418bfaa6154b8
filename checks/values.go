package checks

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/labctl/labctl/internal/msg"
)

// normalize turns a decoded value from any source (encoding/json with or
// without UseNumber, yaml.v3, unstructured Kubernetes objects, lab literals)
// into one form, so values compare by meaning: whole numbers become int64
// (3 and 3.0 are equal), other numbers float64, mappings map[string]any and
// lists []any. Strings, booleans and nil stay as they are, so 3 != "3" and
// true != "true".
func normalize(v any) any {
	switch x := v.(type) {
	case nil, string, bool:
		return x
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return string(x)
		}
		return normalizeFloat(f)
	case float64:
		return normalizeFloat(x)
	case float32:
		return normalizeFloat(float64(x))
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case uint:
		return normalizeUint(uint64(x))
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return normalizeUint(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalize(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = normalize(e)
		}
		return l
	}
	return fmt.Sprint(v)
}

func normalizeFloat(f float64) any {
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f)
	}
	return f
}

func normalizeUint(u uint64) any {
	if u <= math.MaxInt64 {
		return int64(u)
	}
	return float64(u)
}

// asFloat reports a normalized number as float64.
func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// equal compares two normalized values.
func equal(a, b any) bool {
	if ai, ok := a.(int64); ok {
		if bi, ok := b.(int64); ok {
			return ai == bi
		}
	}
	if af, ok := asFloat(a); ok {
		bf, ok := asFloat(b)
		return ok && af == bf
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xe := range x {
			ye, ok := y[k]
			if !ok || !equal(xe, ye) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// typeName names a normalized value's type in the words of Assert.Type.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// typeText names a normalized value's type for messages, in the reader's
// language.
func typeText(v any) any { return typeWord(typeName(v)) }

// typeWord names an Assert.Type for messages.
func typeWord(t string) any {
	key, ok := map[string]msg.Key{
		"null": msg.TypeNull, "string": msg.TypeString, "boolean": msg.TypeBoolean, "number": msg.TypeNumber,
		"integer": msg.TypeInteger, "object": msg.TypeObject, "array": msg.TypeArray,
	}[t]
	if !ok {
		return t
	}
	return msg.T(key)
}

// hasType reports whether a normalized value is of the Assert.Type t;
// "integer" is any whole number, and every integer is a "number".
func hasType(v any, t string) bool {
	if t == "integer" {
		_, ok := v.(int64)
		return ok
	}
	return typeName(v) == t
}

// render writes a normalized value for a message: JSON, with mapping keys
// sorted, so a string shows its quotes and 3 is told apart from "3".
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// stringify turns a normalized value into text for comparison with a
// file's content: strings as they are, everything else as JSON.
func stringify(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// storedAs says whether given, applied, is what stored holds: every key of
// an object given is in stored with a value storedAs it (stored may have
// more keys: the API server's defaults), lists have the same length and
// match item by item, and anything else is equal. When not, it returns
// the path (at is the compared value's) where they part.
func storedAs(given, stored any, at string) (string, bool) {
	switch g := given.(type) {
	case map[string]any:
		s, ok := stored.(map[string]any)
		if !ok {
			return at, false
		}
		for _, k := range slices.Sorted(maps.Keys(g)) {
			sv, ok := s[k]
			if !ok {
				return keyPath(at, k), false
			}
			if where, ok := storedAs(g[k], sv, keyPath(at, k)); !ok {
				return where, false
			}
		}
		return "", true
	case []any:
		s, ok := stored.([]any)
		if !ok || len(g) != len(s) {
			return at, false
		}
		for i := range g {
			if where, ok := storedAs(g[i], s[i], fmt.Sprintf("%s[%d]", at, i)); !ok {
				return where, false
			}
		}
		return "", true
	}
	if !equal(given, stored) {
		return at, false
	}
	return "", true
}

// keyPath is the path of key k of the object at path at, in the syntax of
// a check's path: a.b, or a["b.c"] for a key that is not a plain name.
func keyPath(at, k string) string {
	if plainKeyRE.MatchString(k) {
		return at + "." + k
	}
	return fmt.Sprintf("%s[%q]", at, k)
}

var plainKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// isSubset reports whether every key of sub appears in super with an equal
// value; both are normalized mappings.
func isSubset(sub, super map[string]any) (string, bool) {
	keys := make([]string, 0, len(sub))
	for k := range sub {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sv, ok := super[k]
		if !ok || !equal(sub[k], sv) {
			return k, false
		}
	}
	return "", true
}
