package labctl_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// owners maps an import path prefix to the directories allowed to import
// it. Everything else reaches these dependencies through those packages.
var owners = map[string][]string{
	"github.com/docker/docker": {"sandbox", "provision/docker"},
	"github.com/creack/pty":    {"provision/docker", "internal/terminal", "sandbox", "cmd/labctl"},
	"sigs.k8s.io/kind":         {"provision/kind"},
	"github.com/spf13/cobra":   {"cmd"},
	"github.com/spf13/viper":   {"cmd"},
	"github.com/go-git/go-git": {"checks", "usecase/labstore"},
	// Only the browser tests of `labctl ui` drive Chromium: the binary's,
	// and its server's with a fake cluster.
	"github.com/chromedp": {"cmd/labctl", "usecase/web", "cmd/labctl/e2etest"},
}

// floors are the folders of the module from the ground up: a package may
// import packages of its own floor or below, never above. internal/ holds
// only ground packages, which import nothing of the module outside it.
var floors = [][]string{
	{"internal"},            // ground: text, messages, files, locks
	{"lab", "sandbox", "."}, // what a lab is; what the sandbox runs
	{"checks", "images"},    // one check judged; the images built
	{"grading"},             // rounds of checks over a lab's steps, progress, the report
	{"provision"},           // the runtimes: kind on this machine, a class on a cluster
	{"usecase"},             // shell, ui, test, reset, class room, import, install
	{"cmd"},                 // the command line
}

// floorOf is the floor of the package in dir: that of the longest folder
// of floors it is in.
func floorOf(dir string) int {
	best, floor := -1, -1
	for i, folders := range floors {
		for _, f := range folders {
			if (dir == f || f != "." && strings.HasPrefix(dir, f+"/")) && len(f) > best {
				best, floor = len(f), i
			}
		}
	}
	return floor
}

// layers says which of the module's packages each package may import (its
// tests may import more). A package not listed here fails the test: a new
// one takes its place in the table on purpose.
var layers = map[string][]string{
	// ground
	"internal/textsafe":   {},
	"internal/msg":        {},
	"internal/statedir":   {},
	"internal/statusline": {},
	"internal/terminal":   {},
	"internal/flock":      {},
	"internal/atomicfile": {},
	"internal/fsx":        {},
	"internal/countio":    {},
	"internal/podexec":    {},
	"internal/mutant":     {},
	"internal/homebound":  {"internal/countio"},
	"internal/bundle":     {"internal/countio"},
	"internal/labread":    {"internal/fsx", "internal/textsafe"},
	"internal/preflight":  {"internal/msg"},
	// a lab, the sandbox
	"lab":                    {},
	"lab/internal/schemagen": {"lab"},
	"sandbox":                {},
	".":                      {},
	// checks, images
	"checks":                   {"lab", "internal/msg", "internal/podexec", "internal/mutant"},
	"checks/checkstest":        {"lab", "checks"},
	"images":                   {"lab", "internal/flock", "internal/fsx", "internal/textsafe"},
	"images/node/pause":        {},
	"images/runtime/capfilter": {},
	// grading
	"grading":          {"lab", "checks", "internal/msg", "grading/progress", "grading/report", "internal/textsafe"},
	"grading/progress": {"lab", "internal/atomicfile", "internal/flock"},
	"grading/report":   {"lab", "checks", "internal/atomicfile", "internal/msg", "internal/textsafe"},
	// the runtimes
	"provision/docker": {"sandbox", "internal/terminal", "internal/textsafe"},
	"provision":        {"lab", "checks", "sandbox", "internal/terminal", "internal/msg", "internal/flock", "internal/textsafe"},
	"provision/kind": {"lab", "checks", "images", "sandbox", "provision", "provision/docker", "grading", "internal/msg",
		"internal/preflight", "internal/statedir", "internal/statusline", "internal/atomicfile", "internal/fsx"},
	"provision/class": {"lab", "checks", "images", "sandbox", "provision", "provision/docker", "grading",
		"internal/homebound", "internal/podexec", "internal/statedir", "internal/textsafe"},
	// use cases
	"usecase/labstore":   {"lab", "internal/bundle", "internal/flock", "internal/fsx", "internal/labread"},
	"usecase/importer":   {"lab", "internal/atomicfile", "internal/labread", "usecase/labstore", "internal/mutant", "internal/textsafe"},
	"usecase/labwatch":   {"lab", "internal/labread"},
	"usecase/web/assets": {},
	"usecase/shell": {"lab", "checks", "grading", "internal/msg", "grading/progress", "grading/report",
		"internal/textsafe"},
	"usecase/reset": {"lab", "internal/atomicfile", "internal/countio", "grading", "internal/msg",
		"grading/progress", "internal/textsafe"},
	"usecase/classroom": {"lab", "provision", "provision/class", "grading", "internal/msg", "grading/progress", "grading/report",
		"internal/statusline", "internal/textsafe"},
	"usecase/labtest": {"lab", "checks", "internal/atomicfile", "grading", "internal/mutant", "grading/progress", "grading/report",
		"usecase/reset", "internal/textsafe"},
	"usecase/web": {"lab", "checks", "grading", "internal/msg", "grading/progress", "grading/report",
		"usecase/shell"},
	// the command line, and its e2e tests' harness
	"cmd/labctl/app":     nil, // the command layer may import every package
	"cmd/labctl":         {"cmd/labctl/app"},
	"cmd/labctl/e2etest": {"lab", "images", "internal/fsx"},
}

// TestFloors holds the layers table to the floors: no package may import
// one of a floor above its own.
func TestFloors(t *testing.T) {
	for dir, imports := range layers {
		from := floorOf(dir)
		if from < 0 {
			t.Errorf("package %s is in no floor of architecture_test.go", dir)
			continue
		}
		for _, imp := range imports {
			if to := floorOf(imp); to > from {
				t.Errorf("%s (floor %v) may import %s (floor %v), a floor above it", dir, floors[from], imp, floors[to])
			}
		}
	}
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
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for prefix, allowed := range owners {
				if p == prefix || strings.HasPrefix(p, prefix+"/") {
					checked++
					if !underAny(dir, allowed) {
						t.Errorf("%s imports %s: only %s may import it", path, p, strings.Join(allowed, ", "))
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no file imports any owned dependency: the walk found nothing to check")
	}
}

// underAny reports whether dir is one of dirs or below one.
func underAny(dir string, dirs []string) bool {
	for _, d := range dirs {
		if dir == d || strings.HasPrefix(dir, d+"/") {
			return true
		}
	}
	return false
}

// generator reports whether f is built only by go run (//go:build ignore).
func generator(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if c.Text == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

// TestLayers holds every package's imports of the module's own packages to
// the layers table.
func TestLayers(t *testing.T) {
	const module = "github.com/labctl/labctl"
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, path := range goFiles(t) {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if generator(f) {
			continue // a go:generate program, not part of the package
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		allowed, listed := layers[dir]
		if !listed {
			if !seen[dir] {
				t.Errorf("package %s is not in the layers table of architecture_test.go", dir)
			}
			seen[dir] = true
			continue
		}
		seen[dir] = true
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			rel, ok := strings.CutPrefix(p, module+"/")
			if !ok || allowed == nil {
				continue
			}
			if !slices.Contains(allowed, rel) {
				t.Errorf("%s imports %s: the layers table allows %s only %v", path, rel, dir, allowed)
			}
		}
	}
	for dir := range layers {
		if !seen[dir] {
			t.Errorf("the layers table lists %s, which has no Go files", dir)
		}
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
