package checks

import (
	"context"
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
	f.Fuzz(func(t *testing.T, data []byte, path, format string) {
		if format != "json" {
			format = "yaml"
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
