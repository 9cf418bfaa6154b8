package importer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labctl/labctl/usecase/labstore"
)

// within runs f and fails the test when it has not returned in 10 s.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s hangs", what)
	}
}

// A FIFO named by index.json, or among the assets, is refused before it
// is opened, so the import ends; so does index.json as a FIFO.
func TestImportRefusesFIFOsWithoutHanging(t *testing.T) {
	src := filepath.Join(t.TempDir(), "s")
	writeTree(t, src, map[string]string{
		"index.json": `{"title": "T", "details": {"steps": [{"title": "One", "text": "pipe.md", "verify": "v.sh"}],
			"assets": {"host01": [{"file": "**", "target": "/root"}]}}}`,
		"v.sh":          "kubectl get pod web -n lab\n",
		"assets/ok.txt": "ok",
	})
	for _, p := range []string{"pipe.md", "assets/pipe"} {
		if err := syscall.Mkfifo(filepath.Join(src, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "lab")
	var r *Result
	var err error
	within(t, "importing a scenario whose index.json names a FIFO", func() { r, err = Killercoda(src, out) })
	if err != nil {
		t.Fatal(err)
	}
	todo := strings.Join(r.Todo, "\n")
	for _, want := range []string{"pipe.md is a FIFO, not a regular file: it was not opened", "asset pipe is not a regular file"} {
		if !strings.Contains(todo, want) {
			t.Errorf("the to-do list does not say %q:\n%s", want, todo)
		}
	}

	fifo := filepath.Join(t.TempDir(), "f")
	if err := os.MkdirAll(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(fifo, "index.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	within(t, "importing a scenario whose index.json is a FIFO", func() { _, err = Killercoda(fifo, filepath.Join(t.TempDir(), "lab")) })
	if err == nil || !strings.Contains(err.Error(), "index.json is a FIFO") {
		t.Errorf("got %v, want index.json refused as a FIFO", err)
	}
}

// One file named many times counts each time: an index that names one
// 1 MiB text 300 times is refused, quickly and without writing a lab.
func TestImportBoundsTextsNamedManyTimes(t *testing.T) {
	var steps []string
	for i := 0; i < 300; i++ {
		steps = append(steps, fmt.Sprintf(`{"title": "S%d", "text": "big.md"}`, i))
	}
	src := filepath.Join(t.TempDir(), "s")
	writeTree(t, src, map[string]string{
		"index.json": `{"title": "T", "details": {"steps": [` + strings.Join(steps, ",") + `]}}`,
		"big.md":     strings.Repeat("x", maxText-10),
	})
	out := filepath.Join(t.TempDir(), "lab")
	_, err := Killercoda(src, out)
	if err == nil || !strings.Contains(err.Error(), "more than 16 MiB of texts and scripts") || !strings.Contains(err.Error(), "counts each time") {
		t.Fatalf("got %v, want the import refused past its bound", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a lab was written: %v", err)
	}
}

// Files a tool on the host reads as its configuration are never copied
// into the fixtures, and the lab written passes labctl's reader (as
// install and lint read it).
func TestImportLeavesOutHostToolFiles(t *testing.T) {
	files := map[string]string{
		"index.json": `{"title": "T", "details": {"steps": [{"title": "One", "text": "one.md"}],
			"assets": {"host01": [{"file": "**", "target": "/srv"}]}}}`,
		"one.md":             "Do it.",
		"assets/ok.txt":      "ok",
		"assets/.hg/hgrc":    "[hooks]\nupdate = touch /tmp/pwned\n",
		"assets/.envrc":      "touch /tmp/pwned\n",
		"assets/sub/go.work": "go 1.22\n",
	}
	r, _, out := importTree(t, Killercoda, "s", files)
	for _, gone := range []string{"fixtures/assets/.hg", "fixtures/assets/.envrc", "fixtures/assets/sub/go.work"} {
		if _, err := os.Lstat(filepath.Join(out, gone)); !os.IsNotExist(err) {
			t.Errorf("%s was copied", gone)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "fixtures/assets/ok.txt")); err != nil {
		t.Error(err)
	}
	todo := strings.Join(r.Todo, "\n")
	for _, want := range []string{"asset .hg is Mercurial's repository metadata", "asset .envrc is direnv's configuration", "asset sub/go.work is a Go workspace file"} {
		if !strings.Contains(todo, want) {
			t.Errorf("the to-do list does not say %q:\n%s", want, todo)
		}
	}
	if _, _, err := labstore.Read(filepath.Join(out, "lab.yaml")); err != nil {
		t.Errorf("the imported lab does not pass the reader: %v", err)
	}
}

// The source's strings reach TODO.md and lab.yaml escaped: no control
// character of the author's is written as it is.
func TestImportEscapesTheAuthorsStrings(t *testing.T) {
	files := map[string]string{
		"index.json": `{"title": "T\u001b[2J\u001b]0;owned\u0007", "description": "D\u001b[31m",
			"details": {"steps": [{"title": "One\u001b[1A", "text": "one.md"}]}}`,
		"one.md": "Do \x1b[8mit\x1b[0m.\n",
	}
	_, l, out := importTree(t, Killercoda, "s", files)
	for _, f := range []string{"TODO.md", "lab.yaml"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.ContainsAny(b, "\x1b\x07") {
			t.Errorf("%s holds a raw control character:\n%q", f, b)
		}
	}
	todo, _ := os.ReadFile(filepath.Join(out, "TODO.md"))
	if !strings.Contains(string(todo), `T\x1b[2J\x1b]0;owned\x07`) {
		t.Errorf("TODO.md does not show the title escaped:\n%s", todo)
	}
	if strings.ContainsRune(l.Metadata.Title+l.Steps[0].Title+l.Steps[0].Instructions, 0x1b) {
		t.Errorf("the lab's texts hold ESC: %q %q %q", l.Metadata.Title, l.Steps[0].Title, l.Steps[0].Instructions)
	}
}
