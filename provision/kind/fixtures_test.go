package kind

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

func TestMaterialiseFixtures(t *testing.T) {
	fsys := fstest.MapFS{
		"gitops/app.yaml": {Data: []byte("replicas: 2\n"), Mode: 0o444},
		"bin/run.sh":      {Data: []byte("#!/bin/sh\n"), Mode: 0o555},
	}
	base := t.TempDir()
	dir, err := materialiseFixtures(fsys, base, "lab1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "gitops", "app.yaml"))
	if err != nil || string(b) != "replicas: 2\n" {
		t.Fatalf("content %q %v", b, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "bin", "run.sh")); st.Mode().Perm() != 0o755 {
		t.Errorf("executable mode = %v", st.Mode())
	}
	if st, _ := os.Stat(filepath.Join(dir, "gitops", "app.yaml")); st.Mode().Perm() != 0o644 {
		t.Errorf("file mode = %v", st.Mode())
	}
	again, err := materialiseFixtures(fsys, base, "lab1")
	if err != nil || again != dir {
		t.Fatalf("same content: %s, %v; want %s reused", again, err, dir)
	}
	fsys["gitops/app.yaml"] = &fstest.MapFile{Data: []byte("replicas: 3\n")}
	changed, err := materialiseFixtures(fsys, base, "lab1")
	if err != nil || changed == dir {
		t.Fatalf("changed content kept directory %s (%v)", changed, err)
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 2 {
		t.Errorf("cache holds %d entries, want 2 (no temporary leftovers)", len(entries))
	}
}
