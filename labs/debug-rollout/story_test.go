package debugrollout_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/checks/checkstest"
	"github.com/labctl/labctl/lab"
)

// The debug-rollout lab lives in labs/debug-rollout; `labctl test` proves it
// end to end on a cluster. These tests need none: the lab file loads,
// validates and lints clean, its manifests name its workload image, every
// check can be evaluated, and the repository story of steps 1–3 replays.
const rolloutLab = "lab.yaml"

func loadRolloutLab(t *testing.T) *lab.Lab {
	t.Helper()
	l, err := lab.Load(rolloutLab)
	if err != nil {
		t.Fatalf("loading %s: %v", rolloutLab, err)
	}
	return l
}

func TestRolloutLabLoads(t *testing.T) {
	l := loadRolloutLab(t)
	if ws := l.Lint(); len(ws) > 0 {
		for _, w := range ws {
			t.Error(w)
		}
	}
	if l.Metadata.Name != "debug-rollout" || l.Metadata.Language != "en" {
		t.Errorf("metadata = %+v, want the name debug-rollout in English", l.Metadata)
	}
	want := []lab.Image{{Name: "labctl.local/rollout-web:1", Build: "images/web"}}
	if !slices.Equal(l.Cluster.Images, want) {
		t.Errorf("cluster.images = %+v, want %+v", l.Cluster.Images, want)
	}
	if len(l.Steps) < 5 {
		t.Errorf("%d steps, want at least 5", len(l.Steps))
	}
	for _, s := range l.Steps {
		if strings.TrimSpace(s.Solve) == "" || len(s.Mistakes) == 0 {
			t.Errorf("step %s needs a solve script and at least one mistake", s.ID)
		}
		for _, m := range s.Mistakes {
			if strings.TrimSpace(m.Explain) == "" {
				t.Errorf("step %s mistake %s has no explain", s.ID, m.Name)
			}
		}
	}
	for _, f := range []string{"images/web/Dockerfile", "images/web/go.mod", "images/web/main.go", "images/web/main_test.go", "README.md"} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("the lab lacks %s: %v", f, err)
		}
	}
}

// Every Pod template of the fixtures runs the lab's workload image, never
// pulled, as the restricted Pod Security Standard of the lab's namespace
// wants.
func TestRolloutLabManifests(t *testing.T) {
	l := loadRolloutLab(t)
	paths, err := filepath.Glob("fixtures/rollout/v*/deployment.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no deployment.yaml under the fixtures: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Spec struct {
				Template struct {
					Spec struct {
						SecurityContext struct {
							RunAsNonRoot *bool `json:"runAsNonRoot"`
						} `json:"securityContext"`
						Containers []struct {
							Image           string `json:"image"`
							ImagePullPolicy string `json:"imagePullPolicy"`
							ReadinessProbe  *struct {
								PeriodSeconds int `json:"periodSeconds"`
							} `json:"readinessProbe"`
							SecurityContext struct {
								AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation"`
								Capabilities             struct {
									Drop []string `json:"drop"`
								} `json:"capabilities"`
							} `json:"securityContext"`
						} `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		ps := d.Spec.Template.Spec
		if ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot {
			t.Errorf("%s: the Pod does not require a non-root user", p)
		}
		if len(ps.Containers) != 1 {
			t.Fatalf("%s: %d containers, want 1", p, len(ps.Containers))
		}
		c := ps.Containers[0]
		if c.Image != l.Cluster.Images[0].Name || c.ImagePullPolicy != "IfNotPresent" {
			t.Errorf("%s: image %q pulled %q, want %s with IfNotPresent", p, c.Image, c.ImagePullPolicy, l.Cluster.Images[0].Name)
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.PeriodSeconds != 1 {
			t.Errorf("%s: want a readiness probe every second, so that rollouts take seconds", p)
		}
		if ape := c.SecurityContext.AllowPrivilegeEscalation; ape == nil || *ape || !slices.Equal(c.SecurityContext.Capabilities.Drop, []string{"ALL"}) {
			t.Errorf("%s: the container must forbid privilege escalation and drop every capability", p)
		}
	}
}

// Every check of the lab can be evaluated: in an empty sandbox with no
// cluster and an empty audit log it fails, passes only when it asks for
// an absence, or needs the cluster.
func TestRolloutLabChecksRun(t *testing.T) {
	l := loadRolloutLab(t)
	audit := t.TempDir()
	if err := os.WriteFile(filepath.Join(audit, "policy.yaml"), []byte("kind: Policy\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := checks.Env{Root: t.TempDir(), Audit: &checks.AuditSource{Dir: audit}}
	for _, s := range l.Steps {
		for i, r := range checks.Run(context.Background(), env, s.Checks) {
			c := s.Checks[i]
			switch {
			case r.Status == checks.Error && strings.Contains(r.Message, "no cluster credentials"):
			case r.Status == checks.Error:
				t.Errorf("%s/%s cannot be evaluated: %s", s.ID, r.Name, r.Message)
			case r.Status == checks.Pass && (c.Audit == nil || !c.Audit.Absent):
				t.Errorf("%s/%s passes in an empty sandbox", s.ID, r.Name)
			case r.Status == checks.Fail && r.Message == "":
				t.Errorf("%s/%s fails without saying why", s.ID, r.Name)
			}
		}
	}
}

// clusterFree reports whether c can be judged without a cluster: a git or
// file check that reads no cluster object and no probe's run.
func clusterFree(c lab.Check) bool {
	switch {
	case c.Git != nil:
		return c.Git.Field == nil || !refersToCluster(c.Git.Field.Assert)
	case c.File != nil:
		return !c.File.WrittenDuringProbe && (c.File.Field == nil || !refersToCluster(c.File.Field.Assert)) &&
			(c.File.Equals == nil || !strings.HasPrefix(c.File.Equals.Ref, lab.RefKube+":"))
	}
	return false
}

func refersToCluster(a lab.Assert) bool {
	for _, v := range a.Operands() {
		if v != nil && strings.HasPrefix(v.Ref, lab.RefKube+":") {
			return true
		}
	}
	return false
}

// The repository story of steps 1–3 (Sam's commits made by the setups, the
// learner's by the solve, mistake and alternative scripts) replays against
// the fixtures, with a kubectl that does nothing against a cluster (its
// client-side commands, --local and --dry-run=client, which rewrite the
// repository's files, run the machine's real kubectl), in a private mount
// namespace where /root, /opt and /usr/local/bin are fresh. The checks
// that need no cluster must then fail after exactly the mistakes that name
// them, and pass after the solve and every alternative.
func TestRolloutLabRepositoryStory(t *testing.T) {
	const replayed = 3
	if !checkstest.InMountNamespace(t, "TestRolloutLabRepositoryStory") {
		return
	}

	l := loadRolloutLab(t)
	fixtures := os.DirFS("fixtures")
	// Looked up before /usr/local/bin is replaced.
	realKubectl, err := exec.LookPath("kubectl")
	if err != nil {
		realKubectl = "/nonexistent/kubectl"
	}
	fake := "#!/bin/sh\n" +
		"case \" $* \" in *\" --local \"*|*\" --local=true \"*|*\" --dry-run=client \"*)\n" +
		"  [ -x '" + realKubectl + "' ] || { echo 'the machine has no kubectl for a client-side command' >&2; exit 127; }\n" +
		"  exec '" + realKubectl + "' \"$@\" ;;\nesac\necho ok\n"
	fresh := func(t *testing.T) {
		t.Helper()
		checkstest.FreshLab(t, fixtures)
		if err := syscall.Mount("tmpfs", "/usr/local/bin", "tmpfs", 0, "mode=0755"); err != nil {
			t.Fatalf("mounting tmpfs at /usr/local/bin: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount("/usr/local/bin", syscall.MNT_DETACH) })
		// A kubectl that succeeds and prints a word, so that wait loops
		// end, but runs the client-side commands.
		if err := os.WriteFile("/usr/local/bin/kubectl", []byte(fake), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// start brings a fresh sandbox to the start of step i: the setups and
	// solves of the steps before it, then its setup. It returns where the
	// step's repositories are then, for its since: step checks, as the
	// host notes them (grading.NoteStart).
	start := func(t *testing.T, i int) map[*lab.GitCheck]string {
		t.Helper()
		fresh(t)
		for _, s := range l.Steps[:i] {
			checkstest.RunScript(t, "setup of "+s.ID, s.Setup)
			checkstest.RunScript(t, "solve of "+s.ID, s.Solve)
		}
		checkstest.RunScript(t, "setup of "+l.Steps[i].ID, l.Steps[i].Setup)
		heads := map[*lab.GitCheck]string{}
		for _, c := range l.Steps[i].Checks {
			if g := c.Git; g != nil && g.Since == lab.SinceStep {
				r := checkstest.RunChecks(t, []lab.Check{checks.ReportHead(g.Repo)})[0]
				if r.Status != checks.Pass {
					t.Fatalf("noting where %s is: %s", g.Repo, r.Message)
				}
				heads[g] = r.Message
			}
		}
		return heads
	}
	// judge runs the checks cs with the step-start commits heads.
	judge := func(t *testing.T, cs []lab.Check, heads map[*lab.GitCheck]string) []checks.Result {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return checks.Run(ctx, checks.Env{Root: "/", Now: time.Now, Heads: heads}, cs)
	}
	for i, step := range l.Steps[:replayed] {
		var free []lab.Check
		for _, c := range step.Checks {
			if clusterFree(c) {
				free = append(free, c)
			}
		}
		if len(free) == 0 {
			t.Fatalf("step %s has no check that needs no cluster", step.ID)
		}
		names := func(cs []lab.Check) map[string]bool {
			m := map[string]bool{}
			for _, c := range cs {
				m[c.Name] = true
			}
			return m
		}(free)
		t.Run(step.ID, func(t *testing.T) {
			t.Run("fails before solve", func(t *testing.T) {
				heads := start(t, i)
				if len(checkstest.Failed(judge(t, free, heads))) == 0 {
					t.Fatal("every check that needs no cluster passes before the solve")
				}
			})
			for _, m := range step.Mistakes {
				t.Run("mistake "+m.Name, func(t *testing.T) {
					heads := start(t, i)
					checkstest.RunScript(t, m.Name, m.Script)
					manifestsParse(t)
					res := judge(t, free, heads)
					var want []string
					for _, n := range m.Fails {
						if names[n] {
							want = append(want, n)
						}
					}
					slices.Sort(want)
					if got := checkstest.Failed(res); !slices.Equal(got, want) {
						t.Fatalf("after mistake %s, failing checks = %v, want %v\n%s", m.Name, got, want, checkstest.Describe(res))
					}
				})
			}
			for _, a := range step.Alternatives {
				t.Run("alternative "+a.Name, func(t *testing.T) {
					heads := start(t, i)
					script := a.Script
					if a.Mutant != "" {
						// A declared mutant changes the cluster only, after the
						// solve: the repository is the solve's.
						script = step.Solve
					}
					checkstest.RunScript(t, a.Name, script)
					manifestsParse(t)
					if res := judge(t, free, heads); len(checkstest.Failed(res)) > 0 {
						t.Fatalf("after alternative %s:\n%s", a.Name, checkstest.Describe(res))
					}
				})
			}
			t.Run("passes after solve", func(t *testing.T) {
				heads := start(t, i)
				checkstest.RunScript(t, "solve of "+step.ID, step.Solve)
				manifestsParse(t)
				if res := judge(t, free, heads); len(checkstest.Failed(res)) > 0 {
					t.Fatalf("after the solve:\n%s", checkstest.Describe(res))
				}
			})
		})
	}
	t.Run("the repository at the end of step 3", func(t *testing.T) {
		start(t, replayed)
		for file, want := range map[string]string{
			"configmap.yaml":  "  GREETING: Hello from web v2\n",
			"deployment.yaml": "              path: /healthz\n",
			"service.yaml":    "  selector:\n    app: web\n",
		} {
			data, err := os.ReadFile(filepath.Join("/root/rollout/repo", file))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), want) {
				t.Errorf("%s lacks %q:\n%s", file, want, data)
			}
		}
		out, err := exec.Command("git", "-C", "/root/rollout/repo", "log", "--format=%an: %s").Output()
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(out), "\n"); n != 7 {
			t.Errorf("%d commits, want 7 (Sam's four and the learner's three):\n%s", n, out)
		}
	})
}

// manifestsParse fails the test unless every manifest of the repository
// the lab's scripts edit is one YAML object of a kind.
func manifestsParse(t *testing.T) {
	t.Helper()
	paths, err := filepath.Glob("/root/rollout/repo/*.yaml")
	if err != nil || len(paths) != 3 {
		t.Fatalf("the repository holds %d manifests, want 3 (%v)", len(paths), err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := yaml.UnmarshalStrict(data, &obj); err != nil || obj["kind"] == nil {
			t.Fatalf("%s is no longer one manifest (%v):\n%s", p, err, data)
		}
	}
}
