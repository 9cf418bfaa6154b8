package lab_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/lab/internal/schemagen"
)

// TestSchemaUpToDate fails when schema.json no longer matches the types.
func TestSchemaUpToDate(t *testing.T) {
	docs, err := schemagen.ReadDocs(".")
	if err != nil {
		t.Fatal(err)
	}
	want, err := schemagen.Generate(docs)
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, want) {
		t.Fatal("lab/schema.json is out of date with the lab file's Go types; run: go generate ./lab")
	}
	if !bytes.Equal(lab.Schema(), onDisk) {
		t.Fatal("lab.Schema() differs from schema.json; rebuild")
	}
}

func TestSchemaDescribesTheLabFile(t *testing.T) {
	var s struct {
		Schema     string                     `json:"$schema"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]struct {
			Properties           map[string]map[string]any `json:"properties"`
			Required             []string                  `json:"required"`
			OneOf                []any                     `json:"oneOf"`
			AdditionalProperties *bool                     `json:"additionalProperties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(lab.Schema(), &s); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if s.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %q", s.Schema)
	}
	if len(s.Required) != 4 || s.Properties["steps"] == nil {
		t.Errorf("top level requires %v", s.Required)
	}
	check := s.Defs["Check"]
	if len(check.OneOf) != 4 || check.AdditionalProperties == nil || *check.AdditionalProperties {
		t.Errorf("Check: oneOf %v, additionalProperties %v", check.OneOf, check.AdditionalProperties)
	}
	if d := check.Properties["timeout"]["default"]; d != "10s" {
		t.Errorf("Check.timeout default = %v", d)
	}
	// Inline structs are flattened: GitFieldAssert has file, path and the Assert keys.
	gf := s.Defs["GitFieldAssert"].Properties
	for _, k := range []string{"file", "path", "format", "equals", "subsetOf"} {
		if gf[k] == nil {
			t.Errorf("GitFieldAssert lacks %q", k)
		}
	}
	if desc, _ := s.Defs["FileCheck"].Properties["path"]["description"].(string); desc != "Path is absolute." {
		t.Errorf("FileCheck.path description = %q, want the field's doc comment", desc)
	}
	if enum := s.Defs["MessageAssert"].Properties["which"]["enum"]; len(enum.([]any)) != 4 {
		t.Errorf("MessageAssert.which enum = %v", enum)
	}
}
