//go:build e2e

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/cmd/labctl/e2etest"
)

// TestE2ELifecycle drives the real labctl binary through up, exec, status,
// check and down on a real Docker engine and kind cluster. The images come
// from LABCTL_TEST_NODE_IMAGE and LABCTL_TEST_SANDBOX_IMAGE.
//
//	go test -tags e2e ./cmd/labctl/ -run TestE2ELifecycle -timeout 30m -v
func TestE2ELifecycle(t *testing.T) {
	node, sb := e2etest.Images()
	dir := t.TempDir()
	bin := e2etest.BuildLabctl(t)
	labDir := filepath.Join(dir, "lab")
	os.MkdirAll(filepath.Join(labDir, "fixtures"), 0o755)
	os.WriteFile(filepath.Join(labDir, "fixtures", "note.txt"), []byte("fixture\n"), 0o644)
	os.WriteFile(filepath.Join(labDir, "lab.yaml"), []byte(`apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: e2e-cli
  title: CLI test
cluster:
  namespaces: [e2e-cli-ns]
  nodeImage: `+node+`
sandbox:
  image: `+sb+`
steps:
  - id: first
    title: First
    instructions: Make a file.
    setup: echo set > /root/setup-marker
    checks:
      - name: made
        file:
          path: /root/made
      # Kinds of the API server's own: one mapped without discovery, one
      # through it.
      - name: namespace
        kube: {apiVersion: v1, kind: Namespace, name: e2e-cli-ns}
      - name: apps-api
        kube: {apiVersion: apiregistration.k8s.io/v1, kind: APIService, name: v1.apps}
    solve: touch /root/made
`), 0o644)
	state := t.TempDir()
	run := func(stdin string, args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = labDir
		// The lines read below ("Reusing cluster") are the English ones.
		cmd.Env = append(os.Environ(), "LABCTL_STATE_DIR="+state, "LABCTL_CHECKER_BINARY="+bin, "NO_COLOR=1",
			"LC_ALL=", "LC_MESSAGES=", "LANG=en_US.UTF-8")
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("labctl %v: %v", args, err)
		}
		return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
	}
	t.Cleanup(func() { run("", "down", "--purge", "--no-backup") })

	if code, _, errOut := run("", "up"); code != 0 {
		t.Fatalf("up: exit %d\n%s", code, errOut)
	} else if !strings.Contains(errOut, "✓ Ready") || strings.Contains(errOut, "\x1b[") {
		t.Errorf("up's status lines on a pipe:\n%s", errOut)
	}
	if code, out, _ := run("", "status"); code != 0 || !strings.Contains(out, "labctl-e2e-cli running") || !strings.Contains(out, "sandbox:  running") {
		t.Errorf("status of an up lab: exit %d\n%s", code, out)
	}
	if code, out, errOut := run("typed\n", "exec", "--", "bash", "-c", `cat; pwd; cat setup-marker /opt/lab/fixtures/note.txt; echo err >&2; exit 4`); code != 4 ||
		out != "typed\n/root\nset\nfixture\n" || errOut != "err\n" {
		t.Errorf("exec: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, out, _ := run("", "exec", "ls", "-a", "/root/.kube"); code != 0 || !strings.Contains(out, "config") {
		t.Errorf("exec with the command's own flags: exit %d %q", code, out)
	}
	// With a terminal on stdin and stdout, the command gets a TTY of the
	// terminal's size; script(1) provides the pseudo-terminal.
	tty := exec.Command("script", "-q", "-e", "-c", bin+` exec -- bash -c 'test -t 0 && echo "tty $(stty size)"; exit 6'`, "/dev/null")
	tty.Dir = labDir
	tty.Env = append(os.Environ(), "LABCTL_STATE_DIR="+state, "COLUMNS=91", "LINES=33")
	tty.Stdin = strings.NewReader("")
	ttyOut, err := tty.CombinedOutput()
	if code := tty.ProcessState.ExitCode(); code != 6 || !strings.Contains(string(ttyOut), "tty ") {
		t.Errorf("exec on a terminal: exit %d (%v), output %q", code, err, ttyOut)
	}
	if code, out, errOut := run("", "check"); code == 0 {
		t.Errorf("check before the work passed: %s %s", out, errOut)
	}
	run("", "exec", "touch", "/root/made")
	if code, out, errOut := run("", "check"); code != 0 {
		t.Errorf("check after the work: exit %d\n%s%s", code, out, errOut)
	}
	t.Run("the kinds a round maps without discovery are the API server's", func(t *testing.T) {
		builtinKindsAsServed(t, run)
	})
	// The command line conventions (docs/cli.md) on the real binary.
	report := filepath.Join(dir, "grade.xml")
	if code, out, errOut := run("", "grade", "-o", "junit", "--output-file", report); code != 0 || out != "" || !strings.Contains(errOut, report) {
		t.Errorf("grade --output-file: exit %d, stdout %q, stderr %q", code, out, errOut)
	} else if b, err := os.ReadFile(report); err != nil || !strings.Contains(string(b), "<testsuites") {
		t.Errorf("grade --output-file wrote %q (%v)", b, err)
	}
	if code, out, _ := run("", "status", "-o", "json"); code != 0 || !strings.Contains(out, `"up": true`) {
		t.Errorf("status -o json of an up lab: exit %d\n%s", code, out)
	}
	if code, out, _ := run("", "--version"); code != 0 || !strings.HasPrefix(out, "labctl ") || !strings.Contains(out, "kubernetes:") {
		t.Errorf("--version: exit %d\n%s", code, out)
	}
	if code, out, errOut := run("", "grade", "--bogus"); code != 2 || out != "" || !strings.Contains(errOut, "unknown flag: --bogus") {
		t.Errorf("grade --bogus: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	t.Run("StopStart", func(t *testing.T) { stopStart(t, run) })
	if code, _, errOut := run("", "up"); code != 0 || !strings.Contains(errOut, "Reusing cluster") {
		t.Errorf("second up: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := run("", "down"); code != 0 {
		t.Fatalf("down: exit %d %s", code, errOut)
	}
	if code, out, _ := run("", "status"); code != 3 || !strings.Contains(out, "missing") {
		t.Errorf("status after down: exit %d\n%s", code, out)
	}
	if code, _, errOut := run("", "exec", "true"); code != 2 || !strings.Contains(errOut, "run `labctl up`") {
		t.Errorf("exec after down: exit %d %q", code, errOut)
	}
	// down kept the home volume; --purge saves it as a tar, then removes it.
	if code, out, errOut := run("", "down", "--purge"); code != 0 || !strings.Contains(out, filepath.Join(state, "e2e-cli", "backups")) {
		t.Errorf("down --purge: exit %d %q %s", code, out, errOut)
	}
	if out, _ := exec.Command("docker", "volume", "ls", "-q", "--filter", "label=dev.labctl.lab=e2e-cli").Output(); strings.TrimSpace(string(out)) != "" {
		t.Errorf("volumes after down --purge: %s", out)
	}
}

// stopStart: what the learner made (a Deployment, a file in /root, the
// progress) is there after `labctl stop` and `labctl start`, and check
// works again; while stopped, status says so and check and up name start.
func stopStart(t *testing.T, run func(stdin string, args ...string) (int, string, string)) {
	// The pause image is in every kind node: the Deployment pulls nothing.
	img, err := exec.Command("docker", "exec", "labctl-e2e-cli-control-plane", "sh", "-c",
		`ctr -n k8s.io images ls -q | grep -E '/pause:[^@]+$' | head -1`).Output()
	if err != nil || strings.TrimSpace(string(img)) == "" {
		t.Fatalf("finding the node's pause image: %v %q", err, img)
	}
	if code, out, errOut := run("", "exec", "--", "kubectl", "create", "deployment", "keep", "--image="+strings.TrimSpace(string(img))); code != 0 {
		t.Fatalf("creating a Deployment: exit %d %s%s", code, out, errOut)
	}
	if code, out, errOut := run("", "exec", "--", "kubectl", "wait", "--for=condition=Available", "deployment/keep", "--timeout=120s"); code != 0 {
		t.Fatalf("Deployment not available: exit %d %s%s", code, out, errOut)
	}
	run("", "exec", "--", "sh", "-c", "echo kept > /root/kept")

	stopped := time.Now()
	if code, _, errOut := run("", "stop"); code != 0 || !strings.Contains(errOut, "labctl start") {
		t.Fatalf("stop: exit %d\n%s", code, errOut)
	}
	if code, out, _ := run("", "status"); code != 3 || !strings.Contains(out, "labctl-e2e-cli stopped") || !strings.Contains(out, "sandbox:  exited") {
		t.Errorf("status of a stopped lab: exit %d\n%s", code, out)
	}
	if code, _, errOut := run("", "check"); code == 0 || !strings.Contains(errOut, "labctl start") {
		t.Errorf("check on a stopped lab: exit %d %q", code, errOut)
	}
	if code, _, errOut := run("", "up"); code == 0 || !strings.Contains(errOut, "labctl start") {
		t.Errorf("up on a stopped lab: exit %d %q", code, errOut)
	}

	begun := time.Now()
	if code, _, errOut := run("", "start"); code != 0 {
		t.Fatalf("start: exit %d\n%s", code, errOut)
	}
	t.Logf("start took %s", time.Since(begun).Round(time.Second))
	if code, out, _ := run("", "status"); code != 0 || !strings.Contains(out, "labctl-e2e-cli running") || !strings.Contains(out, "1 of 1 steps passed") {
		t.Errorf("status after start: exit %d\n%s", code, out)
	}
	if code, out, errOut := run("", "exec", "cat", "/root/kept"); code != 0 || out != "kept\n" {
		t.Errorf("/root/kept after start: exit %d %q %s", code, out, errOut)
	}
	// The Pod runs again: its container started after the stop (a status
	// kept from before the stop would not say so).
	var started string
	for deadline := time.Now().Add(2 * time.Minute); ; {
		code, out, _ := run("", "exec", "--", "kubectl", "get", "pods", "-l", "app=keep", "-o",
			"jsonpath={.items[*].status.phase} {.items[*].status.containerStatuses[*].state.running.startedAt}")
		started = out
		phase, at, _ := strings.Cut(out, " ")
		if t0, err := time.Parse(time.RFC3339, at); code == 0 && phase == "Running" && err == nil && t0.After(stopped.Add(-time.Second)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Deployment's Pod does not run again after start: %q", started)
		}
		time.Sleep(2 * time.Second)
	}
	if code, out, errOut := run("", "check"); code != 0 {
		t.Errorf("check after start: exit %d\n%s%s", code, out, errOut)
	}
}

// builtinKindsAsServed: every kind checks.BuiltinKinds maps without asking
// the cluster is served at that version, under that resource and scope,
// as the API server's discovery (read by the learner's kubectl) says.
func builtinKindsAsServed(t *testing.T, run func(stdin string, args ...string) (int, string, string)) {
	var gvs []string
	for _, k := range checks.BuiltinKinds() {
		if !slices.Contains(gvs, k.APIVersion) {
			gvs = append(gvs, k.APIVersion)
		}
	}
	script := `for gv in "$@"; do case $gv in */*) kubectl get --raw "/apis/$gv" ;; *) kubectl get --raw "/api/$gv" ;; esac; echo; done`
	code, out, errOut := run("", append([]string{"exec", "--", "bash", "-c", script, "discover"}, gvs...)...)
	if code != 0 {
		t.Fatalf("reading discovery: exit %d %s", code, errOut)
	}
	served := map[string]metav1.APIResource{}
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var l metav1.APIResourceList
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading discovery: %v\n%s", err, out)
		}
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				served[l.GroupVersion+" "+r.Kind] = r
			}
		}
	}
	for _, k := range checks.BuiltinKinds() {
		r, ok := served[k.APIVersion+" "+k.Kind]
		switch {
		case !ok:
			t.Errorf("the API server does not serve %s %s", k.APIVersion, k.Kind)
		case r.Name != k.Resource || r.Namespaced != k.Namespaced:
			t.Errorf("%s %s: mapped to %s (namespaced %v), served as %s (namespaced %v)", k.APIVersion, k.Kind, k.Resource, k.Namespaced, r.Name, r.Namespaced)
		}
	}
}
