package importer

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/labstore"
)

// labFile is the imported lab as lab.yaml writes it: only the fields an
// import sets, in the order an author reads them.
type labFile struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   metadata   `yaml:"metadata"`
	Cluster    cluster    `yaml:"cluster"`
	Steps      []stepFile `yaml:"steps"`
}

type metadata struct {
	Name     string `yaml:"name"`
	Title    string `yaml:"title,omitempty"`
	Language string `yaml:"language,omitempty"`
	Goal     string `yaml:"goal,omitempty"`
	Draft    bool   `yaml:"draft,omitempty"`
}

type cluster struct {
	Namespaces []string   `yaml:"namespaces"`
	Workers    []struct{} `yaml:"workers,omitempty"`
	Images     []image    `yaml:"images,omitempty"`
	Addons     []string   `yaml:"addons,omitempty"`
}

type image struct {
	Name string `yaml:"name"`
}

type stepFile struct {
	ID           string   `yaml:"id"`
	Title        string   `yaml:"title"`
	Instructions string   `yaml:"instructions"`
	Setup        string   `yaml:"setup,omitempty"`
	Hints        []string `yaml:"hints,omitempty"`
	Solution     string   `yaml:"solution,omitempty"`
	Checks       []check  `yaml:"checks"`
	Solve        string   `yaml:"solve"`
}

// Result is what an import wrote and what it leaves to the author.
type Result struct {
	// Dir is the lab's directory; lab.yaml, fixtures/ and TODO.md are in it.
	Dir string
	// From names the kind of source, e.g. "a Killercoda scenario".
	From string
	// Steps and Checks count the lab's steps and checks; Typed of the
	// checks read the cluster or a file, the others run a verify script.
	Steps, Checks, Typed int
	// Solved counts the steps whose solve came from the scenario (a
	// solution block or the commands the learner was to run).
	Solved int
	// Todo is what the author must still decide, as TODO.md lists it.
	Todo []string
	// Warnings are labctl lint's warnings about the lab.
	Warnings []lab.Warning
}

// write creates dir (which must not exist, or be empty) with lab.yaml,
// the fixtures and TODO.md, then loads lab.yaml as labctl does: an import
// that does not load is an error of the importer, not the author's, and
// leaves no directory behind. The files are written beside dir first and
// land in one rename.
func write(dir string, lf *labFile, fixtures map[string][]byte, r *Result) (err error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty; name a new directory with --out", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".labctl-import-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := writeFiles(tmp, lf, fixtures, r); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	// An empty directory named by --out gives way (os.Rename replaces no
	// directory).
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	// What was written is read back as every command reads a lab: through
	// no link, with no host tool's file, within the bounds.
	_, l, err := labstore.Read(filepath.Join(dir, "lab.yaml"))
	if err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("the imported lab does not load (a defect of labctl import): %w", err)
	}
	if u := l.Unfinished(); len(u) > 0 && !l.Metadata.Draft {
		os.RemoveAll(dir)
		return fmt.Errorf("the imported lab does not pass labctl lint (a defect of labctl import): %s", u[0].String())
	}
	r.Warnings = l.Lint()
	return nil
}

// writeFiles writes lab.yaml, the fixtures and TODO.md into dir.
func writeFiles(dir string, lf *labFile, fixtures map[string][]byte, r *Result) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Imported by labctl import from %s.\n# TODO.md lists what is left to decide; labctl test is the acceptance gate.\n", r.From)
	// Every string of the source is the author's: written escaped, so
	// that no control character reaches lab.yaml (or a terminal showing
	// the lab) as it is.
	escapeStrings(reflect.ValueOf(lf))
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(lf); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "lab.yaml"), b.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "fixtures"), 0o755); err != nil {
		return err
	}
	for name, data := range fixtures {
		p := filepath.Join(dir, "fixtures", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "TODO.md"), []byte(todoFile(lf.Metadata.Title, r.Todo)), 0o644)
}

// escapeStrings escapes, in place, every string v holds, through
// pointers, structs and slices (textsafe.Escape: line feeds and tabs
// stay).
func escapeStrings(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			escapeStrings(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				escapeStrings(v.Field(i))
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			escapeStrings(v.Index(i))
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(textsafe.Escape(v.String()))
		}
	}
}

// todoFile is TODO.md: the author's list. The title and every item hold
// the source's strings, so each is escaped (textsafe.EscapeLine).
func todoFile(title string, todo []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# What is left to decide: %s\n\n", textsafe.EscapeLine(title))
	b.WriteString("`labctl lint` passes on this lab. `labctl test` proves it: every step must fail before its solve and pass after it.\n")
	b.WriteString("Then add the mistakes learners really make (`mistakes:`) and the other right answers (`alternatives:`).\n\n")
	if len(todo) == 0 {
		b.WriteString("Nothing else was found.\n")
	}
	for _, t := range todo {
		fmt.Fprintf(&b, "- [ ] %s\n", textsafe.EscapeLine(t))
	}
	return b.String()
}

var slugRE = lazyRegexp(`[^a-z0-9]+`)

// slug makes a name of lower-case letters, digits and '-' of at most max
// bytes from s.
func slug(s string, max int) string {
	s = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > max {
		s = strings.TrimRight(s[:max], "-")
	}
	return s
}
