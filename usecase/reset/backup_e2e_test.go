//go:build e2e

package reset

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/kind"
	"github.com/labctl/labctl/sandbox"
)

// TestBackupHomeFromARealContainer saves /root of a real sandbox container
// through the Docker engine (provision/kind's Home, which copies /root out as
// provision's Live does) and reads the tar back.
func TestBackupHomeFromARealContainer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	image := os.Getenv("LABCTL_E2E_IMAGE")
	if image == "" {
		image = images.SandboxRef()
	}
	if out, err := exec.CommandContext(ctx, "docker", "image", "inspect", image).CombinedOutput(); err != nil {
		t.Fatalf("image %s is not on this machine (build it with `make images`, or name another with LABCTL_E2E_IMAGE): %v\n%s", image, err, out)
	}
	l := &lab.Lab{Metadata: lab.Metadata{Name: fmt.Sprintf("reset-e2e-%d", time.Now().UnixNano())}}
	name := sandbox.ContainerName(l.Metadata.Name)
	dockerCLI := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("docker %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	dockerCLI("run", "-d", "--name", name, "--entrypoint", "sleep", image, "infinity")
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", name).Run() })
	dockerCLI("exec", name, "sh", "-c", "mkdir -p /root/gitops/repo && printf 'こんにちは\\n' > /root/gitops/repo/README.md")

	home, err := kind.OpenHome(ctx, l, image)
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()

	dir := t.TempDir()
	path, err := backup(ctx, home, dir, time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(path, "/root-20261130T070000Z.tar") {
		t.Errorf("backup path %s", path)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	found := ""
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == "root/gitops/repo/README.md" {
			b, _ := io.ReadAll(tr)
			found = string(b)
		}
	}
	if found != "こんにちは\n" {
		t.Errorf("README.md in the backup = %q, want the learner's file", found)
	}

	// A container gone since fails the backup and leaves no file.
	dockerCLI("rm", "-f", name)
	if _, err := backup(ctx, home, dir, time.Now()); err == nil {
		t.Errorf("backup of a missing container succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files in the backup directory, want only the first backup", len(entries))
	}
}
