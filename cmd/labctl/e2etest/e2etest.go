// Package e2etest holds what the integration tests (build tag e2e) of
// several packages share: where the module is, the static labctl binary
// and a runner for it, the images they run, small labs and copies of the
// repository's lab. Only tests import it.
package e2etest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
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

// startEnv is the environment the test process started with, before any
// test's t.Setenv: many e2e tests point XDG_CACHE_HOME at a temporary
// directory (labctl's own caches), which would also move the go command's
// build cache and make every build of labctl start from nothing.
var startEnv = os.Environ()

// built is the one labctl binary of this test process.
var built struct {
	sync.Mutex
	bin string
}

// BuildLabctl builds the static labctl binary (the CLI and the checker)
// once per test process, with the machine's build cache, and returns its
// path. It is left in a directory of its own under the system's temporary
// directory (about 100 MB per package that uses it).
func BuildLabctl(t testing.TB) string {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	if built.bin != "" {
		return built.bin
	}
	dir, err := os.MkdirTemp("", "labctl-e2e-bin-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "labctl")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/labctl")
	cmd.Dir = Root(t)
	cmd.Env = append(slices.Clone(startEnv), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("building a static labctl: %v\n%s", err, out)
	}
	built.bin = bin
	return bin
}
