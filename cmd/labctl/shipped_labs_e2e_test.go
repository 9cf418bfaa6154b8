//go:build e2e

package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/internal/e2etest"
)

// TestE2EShippedLabs installs the repository's labs from their directories
// beside the built-in one, lists the four, and proves the two that no other
// test proves with `labctl test`, each on an environment of its own:
// labs/rbac-ci (Japanese, access checks, run as a class too), whole, and
// labs/netpol-shop (two workers, the networkPolicy add-on, reach checks),
// its first step's setup and alternative: the shop on two workers, and the
// default deny with one allow per path, judged by its matrix check (every
// path of eight workload shapes to five targets) on the real network
// plugin; then, on the same cluster, its mistake admin-from-tools, which
// opens paths that no reach check tried. Its mistakes, their ways back and its solves, each a
// round of reach checks and a reset (about 20 minutes whole), are proven by
// the model of TestNetpolLabStory here, and on a cluster by
// `make test-labs`.
// debug-rollout's own test (an answer of its first step, from its bundle) is TestE2EBundle's.
//
//	flock /tmp/labctl-e2e.lock go test -tags e2e ./cmd/labctl/ -run TestE2EShippedLabs -timeout 60m -v
func TestE2EShippedLabs(t *testing.T) {
	root := e2etest.Root(t)
	bin := e2etest.BuildLabctl(t)
	work := t.TempDir()
	r := e2etest.NewLabctl(t, bin, "", filepath.Join(work, "state"),
		"LABCTL_LABS_DIR="+filepath.Join(work, "labs"), "LABCTL_CHECKER_BINARY="+bin, "NO_COLOR=1", "LC_ALL=", "LC_MESSAGES=", "LANG=en_US.UTF-8")

	for _, name := range []string{"debug-rollout", "rbac-ci", "netpol-shop"} {
		if out := r.Must(15*time.Minute, "install", filepath.Join(root, "labs", name)); !strings.HasPrefix(out, "installed "+name+" (") {
			t.Fatalf("install %s printed %q", name, out)
		}
	}
	var listed []string
	for _, line := range strings.Split(r.Must(time.Minute, "labs"), "\n")[1:] {
		if f := strings.Fields(line); len(f) > 0 {
			listed = append(listed, f[0])
		}
	}
	slices.Sort(listed)
	if want := []string{"debug-rollout", "gitops-drift", "netpol-shop", "rbac-ci"}; !slices.Equal(listed, want) {
		t.Errorf("labs lists %q, want %q", listed, want)
	}

	for _, c := range []struct {
		name string
		args []string
	}{
		{"rbac-ci", nil},
		{"netpol-shop", []string{"--step", "default-deny", "--alternatives", "--keep"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lab := r.With(t)
			lab.Lab = c.name
			if c.name == "netpol-shop" {
				e2etest.Heavy(t)
				t.Cleanup(func() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
					defer cancel()
					lab.Run(ctx, "test", "--clean")
				})
			}
			// Exit 0 is the lab proving itself: 1 is a failure it reports.
			lab.Must(30*time.Minute, append([]string{"test", "--timeout", "30m"}, c.args...)...)
			if c.name == "netpol-shop" {
				// On the same cluster: a policy that opens paths the
				// step's reach checks never tried (tools to the back
				// office) fails the matrix check, with its own evidence
				// (a matrix of those cells) and no other mistake's.
				lab.Must(30*time.Minute, "test", "--timeout", "30m", "--step", "default-deny", "--only", "admin-from-tools", "--reuse")
			}
		})
	}
}
