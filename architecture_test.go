package labctl_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// owners maps an import path prefix to the one top-level directory allowed
// to import it. Everything else reaches these dependencies through that
// package.
var owners = map[string]string{
	"github.com/docker/docker": "sandbox",
	"github.com/creack/pty":    "sandbox",
	"sigs.k8s.io/kind":         "provision",
	"github.com/spf13/cobra":   "cmd",
	"github.com/spf13/viper":   "cmd",
	"github.com/go-git/go-git": "checks",
}

// goFiles lists the module's Go files (not nested modules, not testdata).
func goFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." {
				name := d.Name()
				if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a module of its own
				}
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestDependencyOwners(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	for _, path := range goFiles(t) {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		top := strings.Split(filepath.ToSlash(path), "/")[0]
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for prefix, owner := range owners {
				if p == prefix || strings.HasPrefix(p, prefix+"/") {
					checked++
					if top != owner {
						t.Errorf("%s imports %s: only %s/ may import it", path, p, owner)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no file imports any owned dependency: the walk found nothing to check")
	}
}

func TestEveryPackageHasADocComment(t *testing.T) {
	fset := token.NewFileSet()
	documented := map[string]bool{}
	for _, path := range goFiles(t) {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(path)
		if _, seen := documented[dir]; !seen {
			documented[dir] = false
		}
		if f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			documented[dir] = true
		}
	}
	for dir, ok := range documented {
		if !ok {
			t.Errorf("package in %s has no package comment saying what it owns", dir)
		}
	}
}
