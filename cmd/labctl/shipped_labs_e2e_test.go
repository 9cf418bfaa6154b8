//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"os"
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
// Then, on the same environment again, `test --mutate` of a copy of step
// default-deny without its matrix check finds the policies it no longer
// judges: a survivor names the policy and where it widened.
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
				t.Run("mutate", func(t *testing.T) { mutateWithoutPaths(t, lab.With(t), filepath.Join(root, "labs", "netpol-shop")) })
			}
		})
	}
}

// mutateWithoutPaths copies netpol-shop (same name, so its kept test
// environment is reused) with its step default-deny's matrix check
// removed, and the mistakes and alternatives that named it, and requires
// `labctl test --step default-deny --mutate --reuse` to fail on survivors:
// among them, the api policy's peer widened to every Pod of shop, with the
// changed lines.
func mutateWithoutPaths(t *testing.T, r *e2etest.Labctl, src string) {
	dir := filepath.Join(t.TempDir(), "netpol-shop")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "lab.yaml")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	start, end := slices.Index(lines, "  - id: default-deny"), slices.Index(lines, "  - id: egress")
	if start < 0 || end < start {
		t.Fatal("labs/netpol-shop/lab.yaml has no step default-deny followed by egress")
	}
	step := slices.Clone(lines[start:end])
	// cut removes the field at line from (with the lines indented under
	// it) through the line before until, or through the field's end.
	cut := func(from, until string) {
		i := slices.Index(step, from)
		if i < 0 {
			t.Fatalf("step default-deny has no line %q", from)
		}
		j := i + 1
		for j < len(step) && step[j] != until && (step[j] == "" || strings.HasPrefix(step[j], "      ")) {
			j++
		}
		step = slices.Delete(step, i, j)
	}
	cut("      - name: paths", "      - name: admin-service-kept")
	cut("    mistakes:", "")
	cut("    alternatives:", "")
	// The Service admin exists from the start: the step's only check passes before the solve.
	step = slices.Insert(step, 1, "    passesInitially: true")
	lines = slices.Concat(lines[:start], step, lines[end:])
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Lab = file
	out := filepath.Join(t.TempDir(), "report.json")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	code, stdout, stderr := r.Run(ctx, "test", "--timeout", "20m", "--step", "default-deny", "--mutate", "--reuse", "-o", "json", "--output-file", out)
	if code != 1 || !strings.Contains(stdout+stderr, "Reusing the kept test environment") {
		t.Fatalf("labctl test --mutate of the copy without its matrix check exited %d (want 1, on the kept environment)", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Passed bool
		Phases []struct {
			Kind     string
			Passed   bool
			Failures []struct{ Script, Message string }
			Mutants  *struct {
				Generated, Applied, Killed, Survivors int
				Survived                              []struct{ ID, Diff string }
			}
		}
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	const widened = "NetworkPolicy shop/api-ingress: spec.ingress[0].from[0].podSelector → {}"
	for _, p := range rep.Phases {
		if p.Kind != "mutate" {
			if !p.Passed {
				t.Errorf("phase %s failed: %v", p.Kind, p.Failures)
			}
			continue
		}
		if p.Mutants == nil || p.Mutants.Applied == 0 || p.Mutants.Survivors == 0 {
			t.Fatalf("mutate phase %+v", p)
		}
		for _, s := range p.Mutants.Survived {
			if s.ID == widened {
				if !strings.Contains(s.Diff, "\n+     - podSelector: {}") || !strings.Contains(s.Diff, "\n-           tier: web") {
					t.Errorf("the survivor's diff does not show where it widened:\n%s", s.Diff)
				}
				for _, f := range p.Failures {
					if f.Script == "mutant "+widened && strings.Contains(f.Message, "probable misgrade") {
						return
					}
				}
				t.Fatalf("survivor %s is not a failure: %v", widened, p.Failures)
			}
		}
		t.Fatalf("no survivor %s among %+v", widened, p.Mutants.Survived)
	}
	t.Fatal("the report has no mutate phase")
}
