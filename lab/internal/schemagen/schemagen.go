// Package schemagen generates the JSON Schema (draft 2020-12) of the lab
// file from the lab package's Go types, taking descriptions from their doc
// comments. go generate ./lab writes lab/schema.json with it.
package schemagen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/labctl/labctl/lab"
)

// SchemaID is the schema's $id.
const SchemaID = "https://labctl.dev/schemas/lab-v1alpha1.json"

// oneOfRequired lists the properties of type typeName of which exactly one
// must be set, if any: for a Check, its kinds, the fields whose type is a
// pointer to a struct named ...Check.
func oneOfRequired(typeName string) []string {
	if typeName != "Check" {
		return nil
	}
	var kinds []string
	t := reflect.TypeFor[lab.Check]()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct && strings.HasSuffix(f.Type.Elem().Name(), "Check") {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			kinds = append(kinds, name)
		}
	}
	return kinds
}

// defaults returns the values lab.(*Lab).Default fills in, keyed
// Type.Field, shown to editors.
func defaults() map[string]any {
	return map[string]any{
		"Cluster.Provider":      lab.DefaultProvider,
		"Sandbox.WorkDir":       lab.DefaultWorkDir,
		"Sandbox.Fixtures":      lab.DefaultFixturesDir,
		"Metadata.Language":     lab.DefaultLanguage,
		"Check.Timeout":         lab.DefaultCheckTimeout.String(),
		"Check.Points":          lab.DefaultPoints,
		"FileCheck.Exists":      true,
		"GitCheck.Exists":       true,
		"KubeCheck.Exists":      true,
		"Assert.Exists":         true,
		"MessageAssert.Which":   lab.DefaultMessageWhich,
		"CommandCheck.ExitCode": 0,
		"CommandCheck.Dir":      lab.DefaultCommandDir,
	}
}

// ReadDocs collects the doc comments of the Go source files in dir, keyed
// "Type" for a type and "Type.Field" for a struct field.
func ReadDocs(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	docs := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("reading source: %w", err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parsing source: %w", err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && len(gd.Specs) == 1 {
					doc = gd.Doc
				}
				if text := clean(doc); text != "" {
					docs[ts.Name.Name] = text
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fld := range st.Fields.List {
					text := clean(fld.Doc)
					if text == "" {
						text = clean(fld.Comment)
					}
					for _, n := range fld.Names {
						if text != "" {
							docs[ts.Name.Name+"."+n.Name] = text
						}
					}
				}
			}
		}
	}
	return docs, nil
}

// clean joins a comment's lines into one paragraph per blank-line break.
func clean(cg *ast.CommentGroup) string {
	if cg == nil {
		return ""
	}
	paras := strings.Split(strings.TrimSpace(cg.Text()), "\n\n")
	for i, p := range paras {
		paras[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(paras, "\n\n")
}

// Generate returns the lab file's JSON Schema, indented, ending in a newline.
func Generate(docs map[string]string) ([]byte, error) {
	g := &generator{docs: docs, defs: map[string]any{}, defaults: defaults()}
	root := g.object(reflect.TypeFor[lab.Lab]())
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = SchemaID
	root["title"] = "labctl lab file (" + lab.APIVersion + ")"
	root["$defs"] = g.defs
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("encoding schema: %w", err)
	}
	return buf.Bytes(), nil
}

type generator struct {
	docs     map[string]string
	defs     map[string]any
	defaults map[string]any
}

// schema returns the schema of a value of type t.
func (g *generator) schema(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[lab.Value]():
		g.define(t, g.valueSchema)
		return ref(t)
	case reflect.TypeFor[lab.Duration]():
		g.define(t, func() map[string]any {
			return map[string]any{
				"type":        "string",
				"pattern":     `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`,
				"description": g.docs["Duration"],
			}
		})
		return ref(t)
	}
	switch t.Kind() {
	case reflect.Struct:
		g.define(t, func() map[string]any { return g.object(t) })
		return ref(t)
	case reflect.Slice:
		list := map[string]any{"type": "array", "items": g.schema(t.Elem())}
		if _, ok := t.MethodByName("OneOrMany"); ok {
			// One element may stand for a list of one.
			return map[string]any{"anyOf": []any{g.schema(t.Elem()), list}}
		}
		return list
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	}
	return map[string]any{}
}

func ref(t reflect.Type) map[string]any { return map[string]any{"$ref": "#/$defs/" + t.Name()} }

// define adds t to $defs once.
func (g *generator) define(t reflect.Type, build func() map[string]any) {
	if _, ok := g.defs[t.Name()]; ok {
		return
	}
	g.defs[t.Name()] = nil // mark, so recursive types terminate
	g.defs[t.Name()] = build()
}

func (g *generator) valueSchema() map[string]any {
	return map[string]any{
		"description": g.docs["Value"],
		"anyOf": []any{
			map[string]any{
				"type": "object",
				"properties": map[string]any{
					"ref": map[string]any{
						"type":        "string",
						"pattern":     "^(git|file|kube):",
						"description": "A reference such as git:/root/repo@HEAD:apps/web/deployment.yaml#spec.replicas, file:/root/out.json#key or kube:apps/v1/Deployment/NAMESPACE/NAME#spec.replicas.",
					},
				},
				"required":             []string{"ref"},
				"additionalProperties": false,
			},
			map[string]any{"type": []string{"string", "number", "integer", "boolean", "array", "object", "null"}},
		},
	}
}

// object returns the schema of struct type t: its YAML keys, inline structs
// flattened, no others allowed.
func (g *generator) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	required := []string{}
	g.fields(t, props, &required)
	s := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		s["required"] = required
	}
	if d := g.docs[t.Name()]; d != "" {
		s["description"] = d
	}
	if kinds := oneOfRequired(t.Name()); kinds != nil {
		var alts []any
		for _, k := range kinds {
			alts = append(alts, map[string]any{"required": []string{k}})
		}
		s["oneOf"] = alts
	}
	return s
}

func (g *generator) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if opts == "inline" {
			g.fields(f.Type, props, required)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		s := map[string]any{}
		for k, v := range g.schema(f.Type) {
			s[k] = v
		}
		key := t.Name() + "." + f.Name
		if d := g.docs[key]; d != "" {
			s["description"] = d
		}
		if enum := enumOf(f.Tag.Get("jsonschema")); len(enum) > 0 {
			if s["type"] == "array" {
				// A list's enum holds for each of its items.
				items := map[string]any{}
				for k, v := range s["items"].(map[string]any) {
					items[k] = v
				}
				items["enum"] = enum
				s["items"] = items
			} else {
				s["enum"] = enum
			}
		}
		if d, ok := g.defaults[key]; ok {
			s["default"] = d
		}
		props[name] = s
		if _, jsonOpts, _ := strings.Cut(f.Tag.Get("json"), ","); !strings.Contains(jsonOpts, "omitempty") {
			*required = append(*required, name)
		}
	}
}

// enumOf reads enum=a,enum=b from a jsonschema struct tag.
func enumOf(tag string) []string {
	var out []string
	for _, part := range strings.Split(tag, ",") {
		if v, ok := strings.CutPrefix(part, "enum="); ok {
			out = append(out, v)
		}
	}
	return out
}
