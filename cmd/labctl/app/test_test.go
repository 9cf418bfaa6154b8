package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// These cases stop before any environment is provisioned; labtest's e2e
// tests drive a whole run.
func TestTestCommandRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"test", "--step", "no-such-step"}, `no-such-step`},
		{[]string{"test", "-o", "yaml"}, `yaml`},
		{[]string{"test", "--step", "manifests", "--mistakes", "--mutate"}, `--mutate makes its mutants from the step's solve, which --only, --mistakes and --alternatives skip`},
		{[]string{"--lab", testdata + "broken.yaml", "test"}, `broken.yaml:`},
		{[]string{"test", "--draft", "--step", "manifests"}, `--draft tests the whole lab, then tests it again --mutate: it takes no --step`},
		{[]string{"test", "--draft", "--mutate"}, `--draft tests the whole lab`},
		{[]string{"--lab", "gitops-drift", "test", "--draft"}, `--draft writes the checks it drafts into the lab file: name a lab directory or file with --lab`},
	} {
		code, out, errOut := runLabctl(t, tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("labctl %s: exit %d, stdout %q, stderr %q; want 2, nothing, and a message naming %q",
				strings.Join(tc.args, " "), code, out, errOut, tc.want)
		}
	}
}

// TestDraftLeavesInstalledLabsAlone: --draft writes into the lab file, so
// it refuses an installed lab (labctl's checked copy) and names the way.
func TestDraftLeavesInstalledLabsAlone(t *testing.T) {
	isolate(t)
	if code, out, errOut := runFake(t, &fakeEnv{}, "install", "../../../labs/debug-rollout"); code != 0 {
		t.Fatalf("install debug-rollout: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runFake(t, &fakeEnv{}, "--lab", "debug-rollout", "test", "--draft")
	if code != 2 || out != "" || !strings.Contains(errOut, `"debug-rollout" is an installed lab`) || !strings.Contains(errOut, "--lab DIR") {
		t.Errorf("test --draft of an installed lab: exit %d, stdout %q, stderr %q; want 2 and a refusal naming the way", code, out, errOut)
	}
}

// TestTestReuse: --reuse runs on the environment an earlier --keep kept,
// reset to the lab's start, after an edit of the steps; an edit of the
// cluster brings up a fresh one and says why.
func TestTestReuse(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	raw, err := os.ReadFile(twoSteps)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "lab.yaml")
	write := func(b string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(string(raw))
	env := &fakeEnv{}
	run := func(args ...string) (string, []string) {
		t.Helper()
		env.calls = nil
		_, _, errOut := runFake(t, env, append([]string{"--lab", file, "test"}, args...)...)
		return errOut, env.calls
	}
	if errOut, calls := run("--keep"); !slices.Contains(calls, "up two-steps-test") || !strings.Contains(errOut, "labctl test --reuse") {
		t.Fatalf("test --keep: calls %q, stderr:\n%s", calls, errOut)
	}

	write(strings.Replace(string(raw), "title: Say goodbye", "title: Say goodbye, edited", 1))
	errOut, calls := run("--reuse")
	if slices.Contains(calls, "up two-steps-test") || !slices.Contains(calls, "connect two-steps-test") || !strings.Contains(errOut, "Reusing the kept test environment") {
		t.Errorf("test --reuse after a new title: calls %q, stderr:\n%s", calls, errOut)
	}
	if slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "down") }) {
		t.Errorf("test --reuse removed the environment it reused: %q", calls)
	}

	write(strings.Replace(string(raw), "  language: en\n", "  language: en\ncluster:\n  namespaces: [other]\n", 1))
	errOut, calls = run("--reuse")
	if !slices.Contains(calls, "up two-steps-test") || !strings.Contains(errOut, "Not reusing the test environment: the lab's cluster") {
		t.Errorf("test --reuse after a cluster edit: calls %q, stderr:\n%s", calls, errOut)
	}

	if _, calls = run("--clean"); !slices.Contains(calls, "down two-steps-test") || slices.Contains(calls, "up two-steps-test") {
		t.Errorf("test --clean: calls %q, want the kept environment down and nothing up", calls)
	}
	if code, _, errOut := runFake(t, env, "--lab", file, "test", "--clean", "--reuse"); code != 2 || !strings.Contains(errOut, "--clean tests nothing") {
		t.Errorf("test --clean --reuse: exit %d, stderr %q", code, errOut)
	}
}
