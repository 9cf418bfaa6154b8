package lab_test

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
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
	ref, err := schemagen.Reference(want)
	if err != nil {
		t.Fatal(err)
	}
	if onDisk, err := os.ReadFile("../docs/lab-format.md"); err != nil || !bytes.Equal(onDisk, ref) {
		t.Fatalf("docs/lab-format.md is out of date with the lab file's Go types (%v); run: go generate ./lab", err)
	}
}

// TestReferenceCoversTheSchema: the generated reference has a section for
// every object of the schema and a row for every key, so nothing a lab file
// may hold is missing from it.
func TestReferenceCoversTheSchema(t *testing.T) {
	ref, err := schemagen.Reference(lab.Schema())
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Defs map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(lab.Schema(), &s); err != nil {
		t.Fatal(err)
	}
	text := string(ref)
	for name, def := range s.Defs {
		at := strings.Index(text, "\n## "+name+"\n")
		if at < 0 {
			t.Errorf("no section for %s", name)
			continue
		}
		section := text[at+1:]
		if next := strings.Index(section[1:], "\n## "); next >= 0 {
			section = section[:next+1]
		}
		for key := range def.Properties {
			if !strings.Contains(section, "| `"+key+"` |") {
				t.Errorf("section %s has no row for %s", name, key)
			}
		}
	}
	for _, kind := range []string{"reach", "access", "audit"} {
		if !strings.Contains(text, "`"+kind+"`") {
			t.Errorf("the reference does not name the check kind %s", kind)
		}
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
	// Every kind a check may have is one of the alternatives, so that an
	// editor accepts a reach or access check as labctl does.
	var kinds []string
	for _, alt := range check.OneOf {
		req, _ := alt.(map[string]any)["required"].([]any)
		if len(req) == 1 {
			kinds = append(kinds, req[0].(string))
		}
	}
	if want := []string{"file", "git", "kube", "access", "permissions", "reach", "matrix", "command", "audit", "service"}; !slices.Equal(kinds, want) ||
		check.AdditionalProperties == nil || *check.AdditionalProperties {
		t.Errorf("Check: oneOf %v (want one each of %v), additionalProperties %v", check.OneOf, want, check.AdditionalProperties)
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
	if desc, _ := s.Defs["FileCheck"].Properties["path"]["description"].(string); !strings.HasPrefix(desc, "Path is absolute: any path of the sandbox's file system but /proc, /sys and /dev.") {
		t.Errorf("FileCheck.path description = %q, want the field's doc comment", desc)
	}
	if enum := s.Defs["MessageAssert"].Properties["which"]["enum"]; len(enum.([]any)) != 4 {
		t.Errorf("MessageAssert.which enum = %v", enum)
	}
	// A list's enum is its items': addons: [networkPolicy] is valid.
	addons := s.Defs["Cluster"].Properties["addons"]
	if items, _ := addons["items"].(map[string]any); addons["enum"] != nil || items == nil || len(items["enum"].([]any)) != 4 {
		t.Errorf("Cluster.addons = %v, want an array whose items take the enum", addons)
	}
}
