package labstore

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/internal/bundle"
)

// labYAML is a small lab with one workload image built from images/web.
const labYAML = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: %s
  title: A small lab
  language: en
  version: "%s"
cluster:
  namespaces: [small]
  images:
    - name: labctl.local/small-web:1
      build: images/web
steps:
  - id: hello
    title: Say hello
    instructions: Write hello to /root/hello.txt.
    checks:
      - name: hello-file
        file:
          path: /root/hello.txt
          equals: hello
    solve: echo hello > /root/hello.txt
`

// writeLab writes a lab named name at version into dir: lab.yaml,
// README.md, fixtures/ (with an executable script), the build directory
// images/web, and files an install leaves out.
func writeLab(t *testing.T, dir, name, version string) {
	t.Helper()
	files := map[string]string{
		"lab.yaml":                fmt.Sprintf(labYAML, name, version),
		"README.md":               "# A small lab\n",
		"fixtures/repo/app.yaml":  "replicas: 2\n",
		"fixtures/bin/run.sh":     "#!/bin/sh\necho run\n",
		"images/web/Dockerfile":   "FROM scratch\nCOPY app /app\n",
		"images/web/main.go":      "package main\n\nfunc main() {}\n",
		"images/other/Dockerfile": "FROM scratch\n", // no image builds it
		"notes.txt":               "the author's notes\n",
	}
	for p, body := range files {
		writeFile(t, filepath.Join(dir, p), body)
	}
	if err := os.Chmod(filepath.Join(dir, "fixtures/bin/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "fixtures/empty"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// newLab writes writeLab's lab into a new directory and returns it.
func newLab(t *testing.T, name, version string) string {
	t.Helper()
	dir := t.TempDir()
	writeLab(t, dir, name, version)
	return dir
}

// storeWith is a new labs directory with the lab small at version 1
// installed from src, which it returns too.
func storeWith(t *testing.T) (s *Store, src string) {
	t.Helper()
	src = newLab(t, "small", "1")
	s = New(filepath.Join(t.TempDir(), "labs"))
	if _, err := s.Install(context.Background(), src, Options{}); err != nil {
		t.Fatal(err)
	}
	return s, src
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// installedFiles are what an install of writeLab's lab holds, with modes.
var installedFiles = []string{
	"README.md 644", "fixtures/ d", "fixtures/bin/ d", "fixtures/bin/run.sh 755", "fixtures/empty/ d",
	"fixtures/repo/ d", "fixtures/repo/app.yaml 644", "images/ d", "images/web/ d", "images/web/Dockerfile 644",
	"images/web/main.go 644", "lab.yaml 644",
}

// modes lists the tree at dir as "path mode" lines, directories as
// "path/ d", without the install record.
func modes(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == metaFile:
		case d.IsDir():
			out = append(out, rel+"/ d")
		default:
			info, err := d.Info()
			if err != nil {
				return err
			}
			out = append(out, fmt.Sprintf("%s %o", rel, info.Mode().Perm()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// tree is a listing of everything under dir (paths, modes, sizes, content
// hashes, modification times), to prove that a refused install changed
// nothing. dir's own time is left out: a staging directory made and removed
// in it changes that.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d", p, info.Mode(), info.Size(), info.ModTime().UnixNano())
		if info.Mode().IsRegular() {
			body, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(body)
			fmt.Fprintf(&b, " %s", hex.EncodeToString(sum[:]))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// fakeImages is an engine for bundles: save writes a `docker save` tar of
// smallImages; Load records what it read and, as docker load, tags the
// images its manifest.json names.
type fakeImages struct {
	mu      sync.Mutex
	present map[string]string // ref -> ID
	loads   [][]byte
}

// smallRefs are the images of the test lab's bundles.
var smallRefs = []string{"labctl.local/small-web:1", "labctl.local/small-db:1"}

// smallImages are smallRefs with their IDs.
var smallImages = func() []bundle.Image {
	var out []bundle.Image
	for _, ref := range smallRefs {
		out = append(out, bundle.Image{Ref: ref, ID: e2etest.ImageID(e2etest.ImageConfig(ref))})
	}
	return out
}()

// savedImages is `docker save` of smallRefs.
func savedImages() []byte {
	var saved []e2etest.SavedImage
	for _, ref := range smallRefs {
		saved = append(saved, e2etest.SavedImage{Config: e2etest.ImageConfig(ref), Tags: []string{ref}})
	}
	return e2etest.DockerSave(saved...)
}

func (f *fakeImages) save(_ context.Context, w io.Writer) error {
	_, err := w.Write(savedImages())
	return err
}

func (f *fakeImages) Present(_ context.Context, refs []string) (map[string]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for _, r := range refs {
		if id, ok := f.present[r]; ok {
			out[r] = id
		}
	}
	return out, nil
}

func (f *fakeImages) Load(_ context.Context, r io.Reader) ([]string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads = append(f.loads, b)
	if f.present == nil {
		f.present = map[string]string{}
	}
	var loaded []string
	tr := tar.NewReader(bytes.NewReader(b))
	configs := map[string]string{}
	var manifest []struct {
		Config   string
		RepoTags []string
	}
	for {
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		data, _ := io.ReadAll(tr)
		configs[hdr.Name] = e2etest.ImageID(data)
		if hdr.Name == "manifest.json" {
			if err := json.Unmarshal(data, &manifest); err != nil {
				return nil, err
			}
		}
	}
	for _, m := range manifest {
		for _, tag := range m.RepoTags {
			f.present[tag] = configs[m.Config]
			loaded = append(loaded, tag)
		}
	}
	return loaded, nil
}

func (f *fakeImages) loaded() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.loads)
}
