//go:build ignore

// schema_gen writes schema.json, the lab file's JSON Schema, from the lab
// package's types and doc comments. Run it with go generate ./lab.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/labctl/labctl/lab/internal/schemagen"
)

func main() {
	out := flag.String("o", "schema.json", "file to write")
	md := flag.String("md", "", "file to write the Markdown reference to, if any")
	flag.Parse()
	if err := run(*out, *md); err != nil {
		fmt.Fprintf(os.Stderr, "schema_gen: %v\n", err)
		os.Exit(1)
	}
}

func run(out, md string) error {
	docs, err := schemagen.ReadDocs(".")
	if err != nil {
		return err
	}
	data, err := schemagen.Generate(docs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		return err
	}
	if md == "" {
		return nil
	}
	ref, err := schemagen.Reference(data)
	if err != nil {
		return err
	}
	return os.WriteFile(md, ref, 0o644)
}
