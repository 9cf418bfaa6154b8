package checks

import (
	"context"
	"reflect"
	"testing"

	"github.com/labctl/labctl/lab"
)

// FuzzFieldAssert feeds arbitrary documents and paths to the field
// assertion: it may fail or report an error, never panic or hang.
func FuzzFieldAssert(f *testing.F) {
	f.Add([]byte("spec:\n  replicas: 3\n"), "spec.replicas", "yaml")
	f.Add([]byte(`{"a":[{"b":1},{"b":"x"}]}`), "a[*].b", "json")
	f.Add([]byte("- 1\n- [2, 3]\n"), "[1][0]", "yaml")
	f.Add([]byte(`{"k.e/y": {"z": null}}`), `["k.e/y"].z`, "json")
	f.Add([]byte(`{"c":[{"type":"Ready","status":"True"},{"type":1}]}`), `c[?(@.type=="Ready")].status`, "json")
	f.Fuzz(func(t *testing.T, data []byte, path, format string) {
		if format != "json" {
			format = "yaml"
		}
		if p, err := lab.ParsePath(path); err == nil {
			// What a path writes reads back as the same path.
			if again, err := lab.ParsePath(p.String()); err != nil || !reflect.DeepEqual(again, p) {
				t.Fatalf("path %q writes %q, which reads back as %v, %v", path, p.String(), again, err)
			}
		}
		docs, err := decodeDocuments(data, format, "/f")
		if err != nil {
			if _, ok := err.(*failure); !ok {
				t.Fatalf("a document that does not parse gave %v, want a failure", err)
			}
			return
		}
		fa := &lab.FieldAssert{Path: path, Assert: lab.Assert{GTE: lit(1), Matches: "x", SubsetOf: lit(map[string]any{"b": 1})}}
		_ = checkFieldAssert(context.Background(), Env{Root: "/"}, fa, docs, "in /f")
		fa.Assert = lab.Assert{Equals: lit([]any{1, "x"}), Type: "integer"}
		_ = checkFieldAssert(context.Background(), Env{Root: "/"}, fa, docs, "in /f")
	})
}
