//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
)

// TestE2EShippedLabs installs the repository's labs from their directories
// beside the built-in one, lists the five, takes labs/nightly-job (no
// cluster) through up, kubectl, check, a shell, grade, reset and down and
// proves it with `labctl test` (about a minute), and proves the two that no other
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

	for _, name := range []string{"debug-rollout", "rbac-ci", "netpol-shop", "nightly-job"} {
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
	if want := []string{"debug-rollout", "gitops-drift", "netpol-shop", "nightly-job", "rbac-ci"}; !slices.Equal(listed, want) {
		t.Errorf("labs lists %q, want %q", listed, want)
	}

	t.Run("nightly-job", func(t *testing.T) { nightlyJob(t, r.With(t)) })

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

// nightlyJob takes labs/nightly-job, a lab with no cluster, through a
// learner's commands, then proves it with `labctl test`: up brings up the
// sandbox and the grader only, kubectl says there is no cluster, a shell
// passes the first step as it is typed, grade, reset and down work, all
// in about a minute.
func nightlyJob(t *testing.T, lab *e2etest.Labctl) {
	lab.Lab = "nightly-job"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	lab.UpFresh(ctx)
	t.Logf("up of a lab with no cluster took %v", time.Since(start).Round(time.Millisecond))
	if out := lab.Must(time.Minute, "status"); !strings.Contains(out, "cluster:  none (the lab has no cluster)") || !strings.Contains(out, "sandbox:  running") {
		t.Errorf("status:\n%s", out)
	}
	code, out, errOut := lab.Run(ctx, "exec", "--", "kubectl", "get", "nodes")
	if code == 0 || !strings.Contains(out+errOut, "this lab has no Kubernetes cluster") {
		t.Errorf("kubectl in a lab with no cluster: exit %d, %q %q; want it to say so and fail", code, out, errOut)
	}
	if code, _, _ := lab.Run(ctx, "exec", "--", "test", "-e", "/root/.kube/config"); code == 0 {
		t.Error("the learner of a lab with no cluster has a kubeconfig")
	}
	// No network: the sandbox has its loopback only.
	if out := lab.Must(time.Minute, "exec", "--", "ls", "/sys/class/net"); out != "lo\n" {
		t.Errorf("the network devices of a sandbox with no cluster: %q, want lo only", out)
	}
	if code, out, _ := lab.Run(ctx, "check"); code != 1 || !strings.Contains(out, "key-owned-by-shop") {
		t.Errorf("check before any work: exit %d, want 1:\n%s", code, out)
	}

	// A shell passes the first step as its commands are typed.
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	cmd := exec.Command(lab.Bin, "--lab", lab.Lab, "shell")
	cmd.Env = append(slices.Clone(lab.Env), "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
	}()
	var scr e2etest.Screen
	go io.Copy(&scr, ptmx)
	scr.WaitFor(t, "\x1b]133;A\a", 1)
	if _, err := ptmx.WriteString("chown shop config/api.key && chmod 600 config/api.key\r"); err != nil {
		t.Fatal(err)
	}
	scr.WaitFor(t, "Step passed: Let only the job's user read the API key", 1)
	if _, err := ptmx.WriteString("exit\r"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatalf("the shell did not end:\n%s", scr.String())
	}

	if code, out, _ := lab.Run(ctx, "grade"); code != 1 || !strings.Contains(out, "✓ 1. lock-key") {
		t.Errorf("grade after the first step: exit %d, want 1 with the step passed:\n%s", code, out)
	}
	lab.Must(time.Minute, "reset", "--no-backup")
	if code, out, _ := lab.Run(ctx, "check"); code != 1 || !strings.Contains(out, "Let only the job's user read the API key") {
		t.Errorf("check after reset: exit %d, want 1 at the first step again:\n%s", code, out)
	}
	lab.Must(time.Minute, "down")
	if code, _, _ := lab.Run(ctx, "status"); code == 0 {
		t.Error("status says a lab that is down is up")
	}
	// Exit 0 is the lab proving itself.
	lab.Must(10*time.Minute, "test")
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
