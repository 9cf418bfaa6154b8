//go:build e2e

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
)

// strangerLabYAML is a one-step lab whose title writes the terminal's
// clipboard (OSC 52) and which asks for privileged Pod Security.
const strangerLabYAML = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: stranger
  title: "Lab \e]52;c;cHduZWQ=\a"
  language: en
cluster:
  namespaces: [work]
  podSecurity: privileged
steps:
  - id: hello
    title: Say hello
    instructions: Write hello to /root/hello.txt.
    checks:
      - name: hello-file
        file: {path: /root/hello.txt, equals: hello}
    solve: echo hello > /root/hello.txt
`

// TestE2EInstallConsent runs the built binary on a stranger's lab: install
// and up refuse its privileged Pod Security without --allow-host-access,
// before anything lands or any Docker object is made; with it the lab
// installs, and its title comes out escaped, byte for byte.
//
//	flock /tmp/labctl-e2e.lock go test -tags e2e ./cmd/labctl/ -run TestE2EInstallConsent -v
func TestE2EInstallConsent(t *testing.T) {
	bin := e2etest.BuildLabctl(t)
	work := t.TempDir()
	labs := filepath.Join(work, "labs")
	src := filepath.Join(work, "stranger")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "lab.yaml"), []byte(strangerLabYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e2etest.NewLabctl(t, bin, "", filepath.Join(work, "state"),
		"LABCTL_LABS_DIR="+labs, "NO_COLOR=1", "LC_ALL=", "LC_MESSAGES=", "LANG=en_US.UTF-8")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	code, out, errOut := r.Run(ctx, "install", src)
	if code != 2 || out != "" || !strings.Contains(errOut, "so it was not installed:\n  cluster.podSecurity: privileged (") {
		t.Errorf("install without consent: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(labs, "stranger")); err == nil {
		t.Error("a refused lab was installed")
	}
	code, _, errOut = r.Run(ctx, "--lab", src, "up")
	if code != 2 || !strings.Contains(errOut, "so it was not brought up") {
		t.Errorf("up without consent: exit %d, stderr %q", code, errOut)
	}

	code, out, errOut = r.Run(ctx, "install", "--allow-host-access", src)
	want := "installed stranger (Lab \\x1b]52;c;cHduZWQ=\\x07) from " + src + "\n"
	if code != 0 || !strings.HasPrefix(out, want) || strings.ContainsAny(out+errOut, "\x1b\x07") ||
		!strings.Contains(out, "\nIt reaches this machine (--allow-host-access):\n  cluster.podSecurity: privileged (") {
		t.Errorf("install --allow-host-access: exit %d, stdout %q, stderr %q; want stdout to start with %q", code, out, errOut, want)
	}

	// The repository's node lab makes the learner root on its node: refused
	// without consent, naming that, before anything is made.
	t.Run("node lab", func(t *testing.T) {
		nodeLab := filepath.Join(e2etest.Root(t), "labs", "node-admin")
		for _, cmd := range [][]string{{"install", nodeLab}, {"--lab", nodeLab, "up"}, {"--lab", nodeLab, "test"}} {
			code, _, errOut := r.Run(ctx, cmd...)
			if code != 2 || !strings.Contains(errOut, "cluster.nodeAccess: true (the learner is root on the cluster's nodes") {
				t.Errorf("%v without consent: exit %d, stderr %q", cmd, code, errOut)
			}
		}
		if _, err := os.Stat(filepath.Join(labs, "node-admin")); err == nil {
			t.Error("the refused node lab was installed")
		}
	})
}
