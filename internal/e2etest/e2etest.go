// Package e2etest holds what the integration tests (build tag e2e) of
// several packages share: where the module is, the static labctl binary
// and a runner for it, the images they run, small labs and copies of the
// repository's lab. Only tests import it.
package e2etest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Root returns the module's root directory: the nearest parent of the
// working directory with a go.mod.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// BuildLabctl builds the static labctl binary (the CLI and the checker)
// into a directory of its own that goes with the test, and returns its path.
func BuildLabctl(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "labctl")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/labctl")
	cmd.Dir = Root(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building a static labctl: %v\n%s", err, out)
	}
	return bin
}
