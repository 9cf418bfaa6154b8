//go:build e2e

package kind

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/internal/fsx"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
)

// workloadRef is the e2e test's workload image, built from
// testdata/workload-web (a Go program serving HTTP, FROM scratch).
const workloadRef = "labctl.local/e2e-web:1"

// hubRef is the same image under a name on Docker Hub, which containerd
// records as docker.io/library/labctl-e2e-hub:1.
const hubRef = "labctl-e2e-hub:1"

const workloadDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: e2e-wl}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: ` + workloadRef + `
          ports: [{containerPort: 8080}]
          readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
`

// applyWeb, in the sandbox, applies the Deployment and waits until its Pod
// serves.
const applyWeb = "kubectl apply -f - >/dev/null <<'EOF'\n" + workloadDeployment + "EOF\n" +
	"kubectl -n e2e-wl rollout status deployment/web --timeout=120s"

// TestE2EWorkloadImages: up builds a lab's recipe image and loads it into
// the node, where a Deployment runs it with no registry; a second up loads
// nothing; a changed recipe is built and loaded again, and so is the image
// after a hard reset; a lab naming an image the engine lacks fails before
// anything is made.
//
//	flock /tmp/labctl-e2e.lock go test -tags e2e -count=1 -run TestE2EWorkloadImages ./provision/kind/ -timeout 30m -v
func TestE2EWorkloadImages(t *testing.T) {
	goCache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	t.Setenv("GOCACHE", strings.TrimSpace(string(goCache))) // keep Go's cache warm below
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	removeImage := func() { exec.Command("docker", "image", "rm", "-f", workloadRef).Run() }
	removeImage()
	t.Cleanup(removeImage)

	labDir := t.TempDir()
	if err := fsx.CopyTree(os.DirFS("testdata/workload-web"), filepath.Join(labDir, "images", "web"), fsx.ExecBit); err != nil {
		t.Fatal(err)
	}
	l := e2etest.NewLab("e2e-workload", "e2e-wl", lab.Step{ID: "one", Checks: []lab.Check{
		{Name: "ns", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "e2e-wl"}},
	}})
	l.Cluster.Images = []lab.Image{{Name: workloadRef, Build: "images/web"}}
	node, sb := e2etest.Images()
	h := &e2eHarness{t: t, engine: engine, opts: Options{
		Lab: l, LabDir: labDir, NodeImage: node, SandboxImage: sb, CheckerBinary: e2eChecker(t),
	}}
	if err := Down(ctx, l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Down(context.Background(), l) })

	t.Log("first up: build and load")
	w := &cancelAt{step: "\x00never", cancel: func() {}}
	env, err := h.up(ctx, w)
	if err != nil {
		t.Fatalf("up: %v\n%s", err, w.buf.String())
	}
	defer func() { env.Close() }()
	for _, want := range []string{"Building workload image " + workloadRef, "✓ Loading images into the cluster: " + workloadRef} {
		if !strings.Contains(w.buf.String(), want) {
			t.Errorf("status lines lack %q:\n%s", want, w.buf.String())
		}
	}
	if code, out := script(t, env, applyWeb); code != 0 {
		t.Fatalf("the Deployment of the workload image did not become ready (%d):\n%s\n%s", code, out, podEvents(t, env))
	}

	t.Log("second up: nothing to load")
	env.Close()
	w = &cancelAt{step: "\x00never", cancel: func() {}}
	start := time.Now()
	if env, err = h.up(ctx, w); err != nil {
		t.Fatalf("second up: %v\n%s", err, w.buf.String())
	}
	t.Logf("second up took %s", time.Since(start))
	if s := w.buf.String(); strings.Contains(s, "Loading images") || strings.Contains(s, "Building workload image") {
		t.Errorf("the second up built or loaded the image again:\n%s", s)
	}

	// A changed recipe is built and loaded again; an image named as on
	// Docker Hub (docker.io/library/... in containerd) is loaded once.
	t.Log("a changed recipe and a Docker Hub name: loaded")
	env.Close()
	if out, err := exec.Command("docker", "tag", workloadRef, hubRef).CombinedOutput(); err != nil {
		t.Fatalf("docker tag: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "image", "rm", hubRef).Run() })
	l.Cluster.Images = append(l.Cluster.Images, lab.Image{Name: hubRef, Optional: true})
	if err := os.WriteFile(filepath.Join(labDir, "images", "web", "NOTES"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w = &cancelAt{step: "\x00never", cancel: func() {}}
	if env, err = h.up(ctx, w); err != nil {
		t.Fatalf("up after the recipe changed: %v\n%s", err, w.buf.String())
	}
	for _, want := range []string{"Building workload image " + workloadRef, "✓ Loading images into the cluster: " + workloadRef + ", " + hubRef} {
		if !strings.Contains(w.buf.String(), want) {
			t.Errorf("after the recipe changed, the status lines lack %q:\n%s", want, w.buf.String())
		}
	}
	env.Close()
	w = &cancelAt{step: "\x00never", cancel: func() {}}
	if env, err = h.up(ctx, w); err != nil {
		t.Fatalf("up: %v\n%s", err, w.buf.String())
	}
	if s := w.buf.String(); strings.Contains(s, "Loading images") || strings.Contains(s, "Building workload image") {
		t.Errorf("the up after the loads built or loaded again:\n%s", s)
	}

	t.Log("hard reset: loaded again")
	w.mu.Lock()
	w.buf.Reset()
	w.mu.Unlock()
	if err := env.RecreateCluster(ctx); err != nil {
		t.Fatalf("RecreateCluster: %v\n%s", err, w.buf.String())
	}
	if s := w.buf.String(); !strings.Contains(s, "✓ Loading images into the cluster: "+workloadRef+", "+hubRef) {
		t.Errorf("the recreated cluster was not given the image:\n%s", s)
	}
	if code, out := script(t, env, applyWeb); code != 0 {
		t.Fatalf("after the hard reset the Deployment did not become ready (%d):\n%s\n%s", code, out, podEvents(t, env))
	}
	if err := Down(ctx, l); err != nil {
		t.Fatal(err)
	}

	t.Log("a required image the engine lacks")
	absent := e2etest.NewLab("e2e-workload-absent", "e2e-wl", l.Steps...)
	absent.Cluster.Images = []lab.Image{{Name: "labctl.local/absent:1"}}
	t.Cleanup(func() { Down(context.Background(), absent) })
	h.opts.Lab, h.opts.LabDir = absent, ""
	_, err = h.up(ctx, nil)
	want := "the lab needs image labctl.local/absent:1 (cluster.images), and the local Docker engine does not have it: " +
		"`docker pull labctl.local/absent:1` where a registry answers, or `labctl install` a bundle that holds it"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("up with an absent image: %v\nwant %s", err, want)
	}
	st, err := Inspect(ctx, absent)
	if err != nil {
		t.Fatal(err)
	}
	if st.ClusterExists || len(st.Objects) > 0 {
		t.Errorf("the failed up left %+v", st)
	}
}

// podEvents is what the cluster says about the lab's Pods, for a failure.
func podEvents(t *testing.T, env *provision.Live) string {
	_, out := script(t, env, "kubectl -n e2e-wl get pods -o wide; kubectl -n e2e-wl get events --sort-by=.lastTimestamp | tail -20")
	return out
}
