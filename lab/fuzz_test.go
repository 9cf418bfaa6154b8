package lab

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse: it must never panic, and must
// return either a lab or Errors whose every entry has a line.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(header + "      - {name: c, file: {path: /root/x, field: {path: 'a[*].b', equals: {ref: 'kube:v1/Pod/ns/p#a'}}}}\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("<<: {apiVersion: x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse("f.yaml", data)
		if (l == nil) == (err == nil) {
			t.Fatalf("Parse returned lab %v and error %v; want exactly one", l != nil, err)
		}
		if err == nil {
			if l.Validate() != nil {
				t.Fatalf("a parsed lab fails Validate: %v", l.Validate())
			}
			return
		}
		var errs Errors
		if !errors.As(err, &errs) || len(errs) == 0 {
			t.Fatalf("error %T %v is not a non-empty lab.Errors", err, err)
		}
		for _, e := range errs {
			if e.Line < 1 || e.File != "f.yaml" {
				t.Fatalf("problem without a position: %#v", e)
			}
		}
	})
}
