// Package checkstest is what the story tests of the shipped labs share: a
// lab's scripts run by bash in a private mount namespace where /root and
// /opt are fresh, its file and git checks judged there by the check engine,
// and what a shipped lab's step must have for labctl test to prove it.
package checkstest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
)

// inNamespaceEnv is set in the test binary that InMountNamespace runs in a
// mount namespace of its own.
const inNamespaceEnv = "LABCTL_TEST_IN_MOUNT_NAMESPACE"

// InMountNamespace reports whether the test runs in a private mount
// namespace, where FreshLab may mount over /root and /opt. Outside one it
// runs test again, alone, in a new one (as root, with unshare), fails t if
// that run fails, and returns false: the caller returns at once.
func InMountNamespace(t *testing.T, test string) bool {
	t.Helper()
	if os.Getenv(inNamespaceEnv) != "" {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for a private mount namespace (CI runs as root)")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Fatalf("unshare (util-linux) is needed: %v", err)
	}
	cmd := exec.Command(unshare, "--mount", "--propagation", "private",
		os.Args[0], "-test.run", "^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), inNamespaceEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in the mount namespace:\n%s", out)
	if err != nil {
		t.Fatalf("%s failed in the mount namespace: %v", test, err)
	}
	if !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s did not run inside the mount namespace", test)
	}
	return false
}

// FreshLab mounts empty tmpfs file systems at /root and /opt and writes the
// lab's fixtures to /opt/lab/fixtures. Only inside InMountNamespace.
func FreshLab(t *testing.T, fixtures fs.FS) {
	t.Helper()
	for _, dir := range []string{"/root", "/opt"} {
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "mode=0755"); err != nil {
			t.Fatalf("mounting tmpfs at %s: %v", dir, err)
		}
		t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	}
	WriteFixtures(t, fixtures, "/opt/lab/fixtures")
}

// WriteFixtures copies fixtures to dir, read-only as the sandbox has them.
func WriteFixtures(t *testing.T, fixtures fs.FS, dir string) {
	t.Helper()
	err := fs.WalkDir(fixtures, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, path)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		data, err := fs.ReadFile(fixtures, path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o444)
	})
	if err != nil {
		t.Fatal(fmt.Errorf("writing fixtures: %w", err))
	}
}

// RunScript runs a lab's script with bash in /root, as the learner's
// shell would, and fails t when it fails.
func RunScript(t *testing.T, name, script string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = "/root"
	cmd.Env = []string{"HOME=/root", "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "GIT_CONFIG_NOSYSTEM=1"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

// RunChecks judges cs with the check engine over this machine's /.
func RunChecks(t *testing.T, cs []lab.Check) []checks.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return checks.Run(ctx, checks.Env{Root: "/", Now: time.Now}, cs)
}

// Failed is the names of the results that did not pass, sorted.
func Failed(res []checks.Result) []string {
	var names []string
	for _, r := range res {
		if r.Status != checks.Pass {
			names = append(names, r.Name)
		}
	}
	slices.Sort(names)
	return names
}

// Describe is every result on a line: status, name, message.
func Describe(res []checks.Result) string {
	var b strings.Builder
	for _, r := range res {
		fmt.Fprintf(&b, "  %-5s %s: %s\n", r.Status, r.Name, r.Message)
	}
	return b.String()
}

// RequireCompleteStep fails unless s has what a shipped lab's step needs
// for labctl test to prove it: a solve script, at least one mistake and one
// alternative, and an explanation for every mistake.
func RequireCompleteStep(t *testing.T, s lab.Step) {
	t.Helper()
	if strings.TrimSpace(s.Solve) == "" || len(s.Mistakes) == 0 || len(s.Alternatives) == 0 {
		t.Errorf("step %s needs a solve script, at least one mistake and one alternative", s.ID)
	}
	for _, m := range s.Mistakes {
		if strings.TrimSpace(m.Explain) == "" {
			t.Errorf("step %s mistake %s has no explain", s.ID, m.Name)
		}
	}
}
