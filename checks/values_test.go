package checks

import (
	"encoding/json"
	"testing"
)

func TestNormalizeAndEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"int and float", 3, 3.0, true},
		{"json number and int64", json.Number("3"), int64(3), true},
		{"json number 3.0 and int", json.Number("3.0"), 3, true},
		{"fractions", json.Number("0.1"), 0.1, true},
		{"number is not string", 3, "3", false},
		{"bool is not string", true, "true", false},
		{"different numbers", 3, 3.5, false},
		{"null", nil, nil, true},
		{"null is not empty string", nil, "", false},
		{"maps", map[string]any{"a": 1, "b": []any{true}}, map[string]any{"b": []any{true}, "a": 1.0}, true},
		{"maps differ", map[string]any{"a": 1}, map[string]any{"a": 1, "b": 2}, false},
		{"yaml map keys", map[any]any{1: "x"}, map[string]any{"1": "x"}, true},
		{"lists order", []any{1, 2}, []any{2, 1}, false},
		{"big ints", int64(1) << 60, uint64(1) << 60, true},
		{"big ints differ", int64(1)<<60 + 1, int64(1) << 60, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := equal(normalize(tt.a), normalize(tt.b)); got != tt.want {
				t.Errorf("equal(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestHasType(t *testing.T) {
	tests := []struct {
		v    any
		typ  string
		want bool
	}{
		{3.0, "integer", true},
		{3.5, "integer", false},
		{3.5, "number", true},
		{3, "number", true},
		{"3", "number", false},
		{true, "boolean", true},
		{nil, "null", true},
		{[]any{}, "array", true},
		{map[string]any{}, "object", true},
		{map[string]any{}, "array", false},
	}
	for _, tt := range tests {
		if got := hasType(normalize(tt.v), tt.typ); got != tt.want {
			t.Errorf("hasType(%#v, %s) = %v, want %v", tt.v, tt.typ, got, tt.want)
		}
	}
}
