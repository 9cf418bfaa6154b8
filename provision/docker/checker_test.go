package docker

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/sandbox"
)

// buildStatic builds the envdump test program without cgo.
func buildStatic(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "envdump")
	cmd := exec.Command("go", "build", "-o", out, "./testdata/envdump")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building envdump: %v\n%s", err, b)
	}
	return out
}

func TestCheckerBinary(t *testing.T) {
	static := buildStatic(t)
	if got, err := CheckerBinary(static); err != nil || got != static {
		t.Fatalf("static binary refused: %q %v", got, err)
	}
	dynamic, err := exec.LookPath("ls")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckerBinary(dynamic); !errors.Is(err, ErrNotStatic) || !strings.Contains(err.Error(), "CGO_ENABLED=0 make build") {
		t.Fatalf("dynamic binary %s: err = %v, want ErrNotStatic with the fix", dynamic, err)
	}
	text := filepath.Join(t.TempDir(), "script.sh")
	os.WriteFile(text, []byte("#!/bin/sh\n"), 0o755)
	if _, err := CheckerBinary(text); !errors.Is(err, ErrNotStatic) {
		t.Fatalf("shell script: err = %v, want ErrNotStatic", err)
	}
	if _, err := CheckerBinary(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing binary was accepted")
	}
}

func TestClearedEnvOverridesEveryDefinedVariable(t *testing.T) {
	got := clearedEnv([]string{"PATH=/evil", "HOME=/root", "BASH_ENV=/root/.x", "LD_PRELOAD=/x.so", "=odd", "KUBECONFIG=/k"})
	want := []string{sandbox.CheckerPath, "HOME=/", "HOSTNAME=", "BASH_ENV=", "LD_PRELOAD=", "KUBECONFIG="}
	if !slices.Equal(got, want) {
		t.Errorf("clearedEnv = %q, want %q", got, want)
	}
	if got := clearedEnv(nil); !slices.Equal(got, want[:3]) {
		t.Errorf("clearedEnv(nil) = %q, want %q", got, want[:3])
	}
}

func TestBinaryArch(t *testing.T) {
	if got, err := BinaryArch(buildStatic(t)); err != nil || got != runtime.GOARCH {
		t.Errorf("this machine's build: %q, %v, want %s", got, err, runtime.GOARCH)
	}
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	out := filepath.Join(t.TempDir(), "envdump-"+other)
	cmd := exec.Command("go", "build", "-o", out, "./testdata/envdump")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+other)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building envdump for %s: %v\n%s", other, err, b)
	}
	if got, err := BinaryArch(out); err != nil || got != other {
		t.Errorf("a build for %s: %q, %v", other, got, err)
	}
	script := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := BinaryArch(script); err == nil {
		t.Error("a shell script has an architecture")
	}
}
