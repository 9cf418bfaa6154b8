package lab

import (
	"bytes"
	_ "embed" // for schema.json
)

//go:generate go run schema_gen.go -o schema.json -md ../docs/lab-format.md

//go:embed schema.json
var schemaJSON []byte

// Schema returns a copy of the lab file's JSON Schema (draft 2020-12),
// generated from these types by go generate ./lab. Editors using
// yaml-language-server check and complete a lab file against a saved copy
// named on its first line:
//
//	labctl schema > lab.schema.json
//	# yaml-language-server: $schema=lab.schema.json
func Schema() []byte { return bytes.Clone(schemaJSON) }
