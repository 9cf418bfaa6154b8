package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/viper"

	"github.com/labctl/labctl"
	"github.com/labctl/labctl/lab"
)

// newTestConfig is a configuration naming lab file (or none).
func newTestConfig(file string) *viper.Viper {
	v := viper.New()
	v.Set("lab", file)
	return v
}

// runLabctl runs labctl with args in a clean configuration and returns the
// exit code and both output streams.
func runLabctl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("LABCTL_CONFIG", "")
	t.Setenv("LABCTL_LAB", "")
	var out, errOut bytes.Buffer
	code := Run(context.Background(), Streams{In: strings.NewReader(""), Out: &out, Err: &errOut}, args)
	return code, out.String(), errOut.String()
}

const testdata = "../../../lab/testdata/"

func TestLintValidFile(t *testing.T) {
	code, out, errOut := runLabctl(t, "lint", testdata+"valid_full.yaml")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if want := testdata + "valid_full.yaml: OK (2 steps, 7 checks)\n"; out != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
	// Warnings do not fail the lint, unless --strict.
	warnings := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	for _, w := range warnings {
		if !strings.HasPrefix(w, testdata+"valid_full.yaml:") || !strings.Contains(w, ": warning: ") {
			t.Errorf("stderr line %q is not file:line:col: warning: ...", w)
		}
	}
	code, out, errOut = runLabctl(t, "lint", "--strict", testdata+"valid_full.yaml")
	if want := "labctl: " + testdata + "valid_full.yaml: " + strconv.Itoa(len(warnings)) + " warnings (--strict)\n"; code != 1 || out != "" || !strings.HasSuffix(errOut, want) {
		t.Errorf("--strict: exit %d, stdout %q, stderr ends %q; want 1, nothing and %q", code, out, errOut[max(0, len(errOut)-80):], want)
	}
}

// A lab's directory is linted as its lab.yaml, as --lab DIR reads it.
func TestLintLabDirectory(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(testdata + "valid_full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lab.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runLabctl(t, "lint", dir)
	if want := filepath.Join(dir, "lab.yaml") + ": OK (2 steps, 7 checks)\n"; code != 0 || out != want {
		t.Errorf("lint DIR: exit %d, stdout %q, stderr %q; want 0 and %q", code, out, errOut, want)
	}
}

func TestLintBrokenFile(t *testing.T) {
	file := testdata + "broken.yaml"
	code, out, errOut := runLabctl(t, "lint", file)
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, out)
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if len(lines) < 7 {
		t.Fatalf("stderr has %d lines, want every problem and a summary:\n%s", len(lines), errOut)
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, file+":") {
			t.Errorf("problem line %q does not start with %s:LINE:COL", l, file)
		}
	}
	if want := "labctl: " + file + ": " + strconv.Itoa(len(lines)-1) + " problems"; lines[len(lines)-1] != want {
		t.Errorf("last line = %q, want %q", lines[len(lines)-1], want)
	}
}

func TestLintMissingFile(t *testing.T) {
	code, _, errOut := runLabctl(t, "lint", filepath.Join(t.TempDir(), "none.yaml"))
	if code != 2 || !strings.Contains(errOut, "reading lab file:") || !strings.Contains(errOut, "no such file") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

func TestLintPicksTheLab(t *testing.T) {
	minimal, err := filepath.Abs(testdata + "valid_minimal.yaml")
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(filepath.Dir(minimal), "broken.yaml")
	dir := t.TempDir()
	t.Chdir(dir)

	// No lab.yaml here: the built-in lab.
	code, out, errOut := runLabctl(t, "lint")
	if code != 0 || !strings.HasPrefix(out, builtInLab+": OK (") {
		t.Fatalf("built-in: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// ./lab.yaml wins over the built-in lab.
	copyFile(t, minimal, filepath.Join(dir, "lab.yaml"))
	code, out, _ = runLabctl(t, "lint")
	if code != 0 || out != "lab.yaml: OK (1 step, 1 check)\n" {
		t.Fatalf("./lab.yaml: exit %d, stdout %q", code, out)
	}

	// --lab wins over ./lab.yaml, and a FILE argument over --lab.
	other := filepath.Join(dir, "other.yaml")
	copyFile(t, broken, other)
	if code, _, _ = runLabctl(t, "lint", "--lab", other); code != 1 {
		t.Errorf("--lab broken: exit %d, want 1", code)
	}
	if code, out, _ = runLabctl(t, "-f", other, "lint", "lab.yaml"); code != 0 || !strings.HasPrefix(out, "lab.yaml: OK") {
		t.Errorf("FILE over --lab: exit %d, stdout %q", code, out)
	}
}

func TestLoadLabFixtures(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, testdata+"valid_minimal.yaml", filepath.Join(dir, "lab.yaml"))
	g := &globals{cfg: newTestConfig(filepath.Join(dir, "lab.yaml"))}
	l, fixtures, source, labDir, err := g.loadLab()
	if err != nil || l.Metadata.Name != "minimal" || labDir != dir || source != filepath.Join(dir, "lab.yaml") {
		t.Fatalf("loadLab = %v, %q, %v", l, source, err)
	}
	if entries, err := fs.ReadDir(fixtures, "."); err != nil || len(entries) != 0 {
		t.Errorf("a lab without fixtures/ has fixtures %v (%v); want none", entries, err)
	}

	if err := os.MkdirAll(filepath.Join(dir, "fixtures", "seed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fixtures", "seed", "a.yaml"), []byte("a: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, fixtures, _, _, err = g.loadLab()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := fs.ReadFile(fixtures, "seed/a.yaml"); err != nil || string(b) != "a: 1\n" {
		t.Errorf("fixtures seed/a.yaml = %q, %v", b, err)
	}

	if err := os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte("kind: Lab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var problems lab.Errors
	if _, _, _, _, err := g.loadLab(); err == nil || !errors.As(err, &problems) {
		t.Errorf("a broken lab: loadLab error %v, want lab.Errors", err)
	}
}

func TestBuiltInLab(t *testing.T) {
	t.Chdir(t.TempDir())
	g := &globals{cfg: newTestConfig("")}
	l, fixtures, source, labDir, err := g.loadLab()
	if err != nil {
		t.Fatalf("the built-in lab does not load:\n%v", err)
	}
	if source != builtInLab || labDir != "" || len(l.Steps) == 0 {
		t.Errorf("source %q, %d steps", source, len(l.Steps))
	}
	want, err := fs.ReadDir(labctl.DefaultFixtures(), ".")
	if err != nil {
		t.Fatal(err)
	}
	got, err := fs.ReadDir(fixtures, ".")
	if err != nil || len(got) != len(want) || len(got) == 0 {
		t.Errorf("built-in fixtures: %v (%v), want %v", got, err, want)
	}
}

func TestSchemaCommand(t *testing.T) {
	code, out, errOut := runLabctl(t, "schema")
	if code != 0 || errOut != "" || out != string(lab.Schema()) {
		t.Fatalf("exit %d, stderr %q, stdout is the schema: %v", code, errOut, out == string(lab.Schema()))
	}
	if code, _, errOut := runLabctl(t, "schema", "extra"); code != 2 || !strings.Contains(errOut, "unknown command") && !strings.Contains(errOut, "accepts 0 arg") {
		t.Errorf("schema extra: exit %d, stderr %q", code, errOut)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// lint -v lists what the grader may read; without -v it does not.
func TestLintVerboseListsGraderReads(t *testing.T) {
	code, out, errOut := runLabctl(t, "lint", "-v", "../../../lab.yaml")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "The grader may do exactly this of the cluster (no watch, nothing else):\n" +
		"  get apps/v1 Deployment gitops-lab/web\n" +
		"  get v1 Service gitops-lab/web\n"
	if !strings.Contains(out, want) {
		t.Errorf("lint -v stdout = %q, want it to contain %q", out, want)
	}
	probe := "1 probe, each running the learner's work before its step's checks (in check, grade, test and the shell's lab check):\n" +
		"  step sync-script: runs \"/root/gitops/sync.sh\" in the sandbox as the learner (deadline 1m0s); " +
		"setup before it and restore after the checks in a probe container, admin of the lab's namespaces; only when these checks pass: script-executable\n"
	if !strings.Contains(out, probe) {
		t.Errorf("lint -v stdout = %q, want it to contain %q", out, probe)
	}
	_, out, _ = runLabctl(t, "lint", "../../../lab.yaml")
	if strings.Contains(out, "grader") {
		t.Errorf("lint without -v listed the grader's reads: %q", out)
	}
}

// A lab whose trees hold a tool's configuration or a link: lint says what
// pack and install would refuse.
func TestLintRefusesHostToolFilesAndLinks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(dir string) error
		want   string
	}{
		{".git in a build directory", func(dir string) error {
			if err := os.MkdirAll(filepath.Join(dir, "images", "web", ".git"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "images", "web", ".git", "config"), []byte("[core]\n\tfsmonitor = x\n"), 0o644)
		}, "the lab holds images/web/.git, git's repository metadata"},
		{"fixtures as a link", func(dir string) error { return os.Symlink(t.TempDir(), filepath.Join(dir, "fixtures")) },
			"fixtures in the lab " + "%s is a symbolic link"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := labWithWorkloads(t)
			dir := filepath.Dir(file)
			if err := tc.change(dir); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, dir)
			}
			code, out, errOut := runLabctl(t, "lint", file)
			if code != 1 || out != "" || !strings.Contains(errOut, want) || !strings.Contains(errOut, file+": 1 problem") {
				t.Errorf("lint: exit %d, stdout %q, stderr %q; want 1 and %q", code, out, errOut, want)
			}
		})
	}
}

// A step whose checks are all placeholders, or whose solve only fails, is a
// problem of a lab, unless the lab is marked a draft.
func TestLintRefusesPlaceholdersUnlessDraft(t *testing.T) {
	lab := func(draft string) string {
		return "apiVersion: labctl.dev/v1alpha1\nkind: Lab\nmetadata:\n  name: unfinished\n" + draft + "steps:\n" +
			"  - id: one\n    title: One\n    instructions: Create /root/x.\n" +
			"    checks:\n      - name: write-this-check\n        command: {run: [\"false\"]}\n" +
			"    solve: |\n      # write what a correct learner runs\n      exit 1\n"
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(file, []byte(lab("")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runLabctl(t, "lint", file)
	if code != 1 || !strings.Contains(errOut, "lab.yaml:10:7: steps[0].checks: every check of step \"one\" is a placeholder") ||
		!strings.Contains(errOut, "steps[0].solve: the solve of step \"one\" does nothing but fail") || !strings.Contains(errOut, "metadata.draft: true") {
		t.Errorf("exit %d, stderr %q; want 1 and both problems", code, errOut)
	}
	if err := os.WriteFile(file, []byte(lab("  draft: true\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runLabctl(t, "lint", file)
	if code != 0 || !strings.Contains(out, "OK") || !strings.Contains(errOut, "warning: steps[0].checks") || !strings.Contains(errOut, "warning: metadata.draft") {
		t.Errorf("a draft: exit %d, stdout %q, stderr %q; want 0 and warnings", code, out, errOut)
	}
}
