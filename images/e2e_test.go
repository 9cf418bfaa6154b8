//go:build e2e

package images

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/internal/statusline"
)

// TestE2E builds (or reuses) both images, creates a kind cluster on the
// node image with the kind CLI, deploys a side-loaded image, checks
// `kubectl diff` around a scale, and runs kubectl from a sandbox container
// on the kind network. Run: go test -tags e2e ./images/ -run TestE2E -timeout 60m
func TestE2E(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 55*time.Minute)
	defer cancel()
	start := time.Now()
	refs, err := Ensure(ctx, Options{Status: statusline.New(testWriter{t}, statusline.Options{Terminal: new(bool), Elapsed: true})})
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	t.Logf("images ready in %s: %+v", statusline.Elapsed(time.Since(start)), refs)
	b, err := newBuilder(Options{})
	if err != nil {
		t.Fatal(err)
	}
	kubeDir, err := b.binaries(ctx, kubernetesBuild())
	if err != nil {
		t.Fatal(err)
	}
	pauseDir, err := b.binaries(ctx, pauseBuild())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	kind := filepath.Join(tmp, "kind")
	mustRun(ctx, t, "", "go", "build", "-o", kind, "sigs.k8s.io/kind")
	kubectl := filepath.Join(kubeDir, "kubectl")

	name := fmt.Sprintf("labctl-e2e-%d", time.Now().Unix()%100000)
	config := kindClusterFile(ctx, t, tmp, refs.Node)
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := exec.Command("docker", "exec", name+"-control-plane", "sh", "-c",
				"journalctl -u kubelet --no-pager | tail -40; crictl ps -a 2>/dev/null || ctr -n k8s.io c ls").CombinedOutput()
			t.Logf("node diagnostics:\n%s", out)
		}
		began := time.Now()
		out, err := exec.Command(kind, "delete", "cluster", "--name", name).CombinedOutput()
		if err != nil {
			t.Errorf("kind delete cluster: %v: %s", err, out)
		}
		t.Logf("MEASURE kind delete cluster: %s", statusline.Elapsed(time.Since(began)))
	})
	began := time.Now()
	mustRun(ctx, t, "", kind, "create", "cluster", "--name", name, "--config", config, "--kubeconfig", kubeconfig, "--wait", "0s")
	t.Logf("MEASURE kind create cluster: %s", statusline.Elapsed(time.Since(began)))

	k := func(args ...string) (string, error) {
		return command{args: append([]string{kubectl, "--kubeconfig", kubeconfig}, args...), timeout: 6 * time.Minute}.run(ctx)
	}
	mustK := func(args ...string) string {
		t.Helper()
		out, err := k(args...)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	began = time.Now()
	mustK("wait", "--for=condition=Ready", "node", "--all", "--timeout=5m")
	t.Logf("MEASURE node Ready after create: %s", statusline.Elapsed(time.Since(began)))
	// kubeadm created these during kind create; their pods may not exist yet.
	mustK("rollout", "status", "-n", "kube-system", "deployment/coredns", "--timeout=5m")
	mustK("rollout", "status", "-n", "kube-system", "daemonset/kube-proxy", "--timeout=5m")
	mustK("wait", "--for=condition=Ready", "pods", "--all", "-n", "kube-system", "--timeout=5m")
	t.Logf("MEASURE kube-system pods Ready after create: %s", statusline.Elapsed(time.Since(began)))
	if pods := mustK("get", "pods", "-n", "kube-system", "-o", "name"); !strings.Contains(pods, "pod/coredns-") || !strings.Contains(pods, "pod/kube-proxy-") {
		t.Fatalf("kube-system lacks coredns or kube-proxy:\n%s", pods)
	}

	// A tiny local image, side-loaded: the pause binary under another name.
	webImage := "labctl-e2e/web:" + name
	webCtx := filepath.Join(tmp, "web")
	if err := os.MkdirAll(webCtx, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := linkOrCopy(filepath.Join(pauseDir, "pause"), filepath.Join(webCtx, "web")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(webCtx, "Dockerfile"), []byte("FROM scratch\nCOPY web /web\nENTRYPOINT [\"/web\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(ctx, t, "", "docker", "build", "-q", "-t", webImage, webCtx)
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", webImage).Run() })
	mustRun(ctx, t, "", kind, "load", "docker-image", webImage, "--name", name)

	manifest := filepath.Join(tmp, "web.yaml")
	if err := os.WriteFile(manifest, []byte(webManifest(webImage)), 0o644); err != nil {
		t.Fatal(err)
	}
	mustK("create", "namespace", "gitops-lab")
	mustK("apply", "-f", manifest)
	mustK("rollout", "status", "deployment/web", "-n", "gitops-lab", "--timeout=3m")
	assertDiff(t, k, manifest, 0)
	mustK("scale", "deployment/web", "-n", "gitops-lab", "--replicas=2")
	assertDiff(t, k, manifest, 1)
	mustK("apply", "-f", manifest)
	assertDiff(t, k, manifest, 0)

	// The sandbox reaches the API server over the kind network.
	internal := mustRun(ctx, t, "", kind, "get", "kubeconfig", "--internal", "--name", name)
	internalFile := filepath.Join(tmp, "internal-kubeconfig")
	if err := os.WriteFile(internalFile, []byte(internal), 0o644); err != nil {
		t.Fatal(err)
	}
	sandbox := name + "-sandbox"
	mustRun(ctx, t, "", "docker", "run", "-d", "--name", sandbox, "--network", "kind",
		"-v", internalFile+":/root/.kube/config:ro", refs.Sandbox, "sleep", "infinity")
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", sandbox).Run() })
	nodes := mustRun(ctx, t, "", "docker", "exec", sandbox, "kubectl", "get", "nodes", "-o", "name")
	if strings.TrimSpace(nodes) != "node/"+name+"-control-plane" {
		t.Errorf("kubectl get nodes in the sandbox = %q", nodes)
	}
	if _, err := (command{args: []string{"docker", "exec", sandbox, "kubectl", "--server", "https://no-such-host.invalid:6443",
		"--request-timeout", "5s", "get", "nodes"}, timeout: time.Minute}).run(ctx); err == nil {
		t.Error("kubectl against a server that does not exist succeeded in the sandbox")
	}
	version := mustRun(ctx, t, "", "docker", "exec", sandbox, "kubectl", "version", "--client", "-o", "yaml")
	if !strings.Contains(version, "gitVersion: "+KubernetesVersion) {
		t.Errorf("sandbox kubectl version:\n%s", version)
	}
	// helm and yq, at the versions labctl pins; helm reaches the cluster
	// with the sandbox's kubeconfig.
	helm := mustRun(ctx, t, "", "docker", "exec", sandbox, "bash", "-c",
		"helm version --template '{{.Version}}' && echo && yq --version && helm list -A -o json && echo '{a: {b: 1}}' | yq '.a.b'")
	for _, want := range []string{HelmVersion + "\n", "version " + YqVersion + "\n", "[]\n", "\n1\n"} {
		if !strings.Contains(helm, want) {
			t.Errorf("sandbox helm and yq: want %q in:\n%s", want, helm)
		}
	}
	tools := mustRun(ctx, t, "", "docker", "exec", sandbox, "bash", "-c",
		"git --version && jq --version && locale -a && test -r /etc/profile.d/labctl.sh && grep -q labctl.sh /etc/bash.bashrc && pwd && echo $LANG && ! command -v labctl && echo no-grader")
	for _, want := range []string{"git version", "jq-", "ja_JP.utf8", "ko_KR.utf8", "en_US.utf8", "/root", "no-grader"} {
		if !strings.Contains(tools, want) {
			t.Errorf("sandbox lacks %q:\n%s", want, tools)
		}
	}
}

func webManifest(image string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: gitops-lab
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: ` + image + `
        imagePullPolicy: Never
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: gitops-lab
spec:
  selector: {app: web}
  ports:
  - port: 80
    targetPort: 8080
`
}

// assertDiff runs kubectl diff and checks its exit code: 0 in sync, 1 drifted.
func assertDiff(t *testing.T, k func(...string) (string, error), manifest string, want int) {
	t.Helper()
	out, err := k("diff", "-f", manifest)
	got := 0
	var ce *CommandError
	var exit *exec.ExitError
	if errors.As(err, &ce) && errors.As(ce.Err, &exit) {
		got = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("kubectl diff: %v", err)
	}
	if got != want {
		t.Fatalf("kubectl diff exited %d, want %d:\n%s", got, want, out)
	}
}

// kindClusterFile writes the cluster file `labctl images kind-config`
// prints for node, the one `labctl up` gives kind (the built-in lab's, its
// audit policy in a state directory under dir), and returns its path.
func kindClusterFile(ctx context.Context, t *testing.T, dir, node string) string {
	t.Helper()
	bin := filepath.Join(dir, "labctl")
	mustRun(ctx, t, "..", "go", "build", "-o", bin, "./cmd/labctl")
	var stdout strings.Builder
	_, err := (command{args: []string{bin, "images", "kind-config", node}, env: []string{"LABCTL_STATE_DIR=" + filepath.Join(dir, "state")},
		timeout: time.Minute, stdout: &stdout}).run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "kind.yaml")
	if err := os.WriteFile(config, []byte(stdout.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return config
}

func mustRun(ctx context.Context, t *testing.T, dir string, args ...string) string {
	t.Helper()
	var stdout strings.Builder
	if _, err := (command{args: args, dir: dir, timeout: 15 * time.Minute, stdout: &stdout}).run(ctx); err != nil {
		t.Fatal(err)
	}
	return stdout.String()
}

// testWriter sends progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
