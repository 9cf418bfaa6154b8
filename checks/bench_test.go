package checks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

// BenchmarkGitClean measures `clean` on a work tree of 1,000 committed
// files, the cost that dominates a step's checks.
func BenchmarkGitClean(b *testing.B) {
	root := b.TempDir()
	dir := filepath.Join(root, "r")
	for i := 0; i < 1000; i++ {
		p := filepath.Join(dir, fmt.Sprintf("d%02d/f%03d.yaml", i%20, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.Repeat("key: value\n", 20)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	gitBin(b, dir, "init", "-q", "-b", "main")
	gitBin(b, dir, "add", ".")
	gitBin(b, dir, "commit", "-q", "-m", "many files")
	env := Env{Root: root}
	c := []lab.Check{{Name: "clean", Timeout: lab.Duration{Duration: 10 * time.Minute}, Git: &lab.GitCheck{Repo: "/r", Clean: boolp(true)}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := Run(context.Background(), env, c)[0]; r.Status != Pass {
			b.Fatalf("%s %s", r.Status, r.Message)
		}
	}
}

// BenchmarkFileField measures a field assertion on a Deployment manifest.
func BenchmarkFileField(b *testing.B) {
	root := b.TempDir()
	manifest := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels: {app: web}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n        - {name: web, image: nginx:1.27}\n        - {name: side, image: busybox:1.36}\n"
	if err := os.WriteFile(filepath.Join(root, "d.yaml"), []byte(manifest), 0o644); err != nil {
		b.Fatal(err)
	}
	env := Env{Root: root}
	c := []lab.Check{{Name: "images", File: &lab.FileCheck{Path: "/d.yaml", Field: &lab.FieldAssert{
		Path: "spec.template.spec.containers[*].image", Assert: lab.Assert{Matches: `:[0-9.]+$`}}}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := Run(context.Background(), env, c)[0]; r.Status != Pass {
			b.Fatalf("%s %s", r.Status, r.Message)
		}
	}
}
