//go:build e2e

package kind

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
	"github.com/labctl/labctl/sandbox"
)

// The end-to-end test needs a Docker engine, the node and sandbox images
// (LABCTL_TEST_NODE_IMAGE / LABCTL_TEST_SANDBOX_IMAGE, default labctl's
// own, e.g. from `labctl images build`), and minutes:
//
//	go test -tags e2e ./provision/kind/ -run TestE2E -timeout 30m -v

const e2eLabName = "e2e-prov"

func e2eTestLab() *lab.Lab {
	return e2etest.NewLab(e2eLabName, "e2e-ns",
		lab.Step{ID: "one", Setup: "echo setup-ran > /root/setup-marker", Checks: []lab.Check{
			// The grader may read what the lab's checks name, and only that.
			{Name: "ns", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "e2e-ns"}},
		}},
		lab.Step{ID: "two", Setup: "exit 1"})
}

// e2eChecker builds labctl static, as the checker copied into the sandbox,
// unless LABCTL_CHECKER_BINARY names one.
func e2eChecker(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("LABCTL_CHECKER_BINARY"); bin != "" {
		return bin
	}
	return e2etest.BuildLabctl(t)
}

// cancelAt is a status writer that cancels a context when a step starts.
type cancelAt struct {
	mu     sync.Mutex
	step   string
	cancel context.CancelFunc
	buf    bytes.Buffer
}

func (c *cancelAt) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf.Write(p)
	if strings.Contains(string(p), "• "+c.step) {
		c.cancel()
	}
	return len(p), nil
}

type e2eHarness struct {
	t      *testing.T
	engine *docker.Engine
	opts   Options
}

func (h *e2eHarness) up(ctx context.Context, w *cancelAt) (*provision.Live, error) {
	o := h.opts
	no := false
	if w != nil {
		o.Status = statusline.New(w, statusline.Options{Terminal: &no})
	} else {
		o.Status = statusline.New(os.Stderr, statusline.Options{Terminal: &no})
	}
	return Up(ctx, o)
}

// upFresh brings lab l up from nothing on labctl's images, with one fixture
// file, and takes it down when the test ends.
func upFresh(t *testing.T, ctx context.Context, l *lab.Lab) *provision.Live {
	t.Helper()
	node, sb := e2etest.Images()
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	h := &e2eHarness{t: t, engine: engine, opts: Options{
		Lab: l, Fixtures: fstest.MapFS{"hello.txt": {Data: []byte("hello\n")}},
		NodeImage: node, SandboxImage: sb, CheckerBinary: e2eChecker(t),
	}}
	if err := Down(ctx, l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Down(context.Background(), l) })
	env, err := h.up(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close() })
	return env
}

// count returns how many containers, volumes and networks carry the lab's
// label, and how many kind node containers the lab's cluster has.
func (h *e2eHarness) count() (containers, volumes, networks, nodes int) {
	h.t.Helper()
	ctx := context.Background()
	objs, err := h.engine.ListByLabel(ctx, map[string]string{sandbox.LabelLab: e2eLabName})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, o := range objs {
		switch o.Kind {
		case "container":
			containers++
		case "volume":
			volumes++
		case "network":
			networks++
		}
	}
	ns, err := h.engine.ListByLabel(ctx, map[string]string{"io.x-k8s.kind.cluster": provision.ClusterName(e2eLabName)})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, o := range ns {
		if o.Kind == "container" {
			nodes++
		}
	}
	return
}

func (h *e2eHarness) expect(what string, containers, volumes, nodes int) {
	h.t.Helper()
	c, v, n, k := h.count()
	if c != containers || v != volumes || n != 0 || k != nodes {
		h.t.Fatalf("%s: %d containers, %d volumes, %d networks, %d kind nodes; want %d, %d, 0, %d",
			what, c, v, n, k, containers, volumes, nodes)
	}
}

func script(t *testing.T, env *provision.Live, s string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, err := env.RunScript(ctx, s, &out, &out)
	if err != nil {
		t.Fatalf("script %q: %v", s, err)
	}
	return code, out.String()
}

func TestE2EProvision(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	node, sb := e2etest.Images()
	ctx := context.Background()
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	for _, ref := range []string{node, sb} {
		if ok, err := engine.ImagePresent(ctx, ref); err != nil || !ok {
			t.Fatalf("image %s is not present (%v): build it with `labctl images build` or set LABCTL_TEST_NODE_IMAGE / LABCTL_TEST_SANDBOX_IMAGE", ref, err)
		}
	}
	l := e2eTestLab()
	h := &e2eHarness{t: t, engine: engine, opts: Options{
		Lab:           l,
		Fixtures:      fstest.MapFS{"hello.txt": {Data: []byte("hello\n")}},
		NodeImage:     node,
		SandboxImage:  sb,
		CheckerBinary: e2eChecker(t),
	}}
	if err := Down(ctx, l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Down(context.Background(), l) })

	// An up interrupted after it created the cluster removes what it made.
	t.Log("interrupted up")
	cctx, cancel := context.WithCancel(ctx)
	w := &cancelAt{step: "Setting up the cluster", cancel: cancel}
	if _, err := h.up(cctx, w); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted up: err = %v; status:\n%s", err, w.buf.String())
	}
	cancel()
	h.expect("after the interrupted up", 0, 0, 0)

	// The same with --retain leaves the cluster and the sandbox, made while
	// kind started the control plane; the next up reuses them and, since
	// the interrupted one never got to it, runs the step setup.
	cctx, cancel = context.WithCancel(ctx)
	w = &cancelAt{step: "Preparing sandbox", cancel: cancel}
	h.opts.Retain = true
	if _, err := h.up(cctx, w); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted retained up: err = %v; status:\n%s", err, w.buf.String())
	}
	cancel()
	h.opts.Retain = false
	h.expect("after the interrupted retained up", 2, 1, 1)

	t.Log("first complete up")
	w = &cancelAt{step: "\x00never", cancel: func() {}}
	env, err := h.up(ctx, w)
	if err != nil {
		t.Fatalf("up: %v; status:\n%s", err, w.buf.String())
	}
	if !strings.Contains(w.buf.String(), "✓ Reusing cluster") || !strings.Contains(w.buf.String(), "✓ Ready") {
		t.Errorf("status lines:\n%s", w.buf.String())
	}
	h.expect("after up", 2, 1, 1)
	if code, out := script(t, env, "cat /root/setup-marker"); code != 0 || out != "setup-ran\n" {
		t.Errorf("step setup: %d %q", code, out)
	}
	code, out := script(t, env, `pwd; echo "$HOME"; stat -c %a ~/.kube/config; cat /opt/lab/fixtures/hello.txt
kubectl auth can-i create deployments -n e2e-ns; kubectl auth can-i get nodes 2>/dev/null; kubectl auth can-i create deployments -n kube-system; true`)
	if code != 0 || out != "/root\n/root\n600\nhello\nyes\nyes\nno\n" {
		t.Errorf("learner environment (code %d):\n%s", code, out)
	}
	if _, out := script(t, env, "rm /root/setup-marker; echo learner-work > /root/work"); out != "" {
		t.Fatalf("%q", out)
	}
	env.Close()

	t.Log("second up")
	env, err = h.up(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.expect("after a second up", 2, 1, 1)
	if code, out := script(t, env, "cat /root/work; test -e /root/setup-marker"); code == 0 || out != "learner-work\n" {
		t.Errorf("a second up re-ran the setup or lost the learner's work: %d %q", code, out)
	}
	env.Close()

	t.Log("connect, exec and checks")
	env, err = Connect(ctx, l, WithUpOptions(h.opts))
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	var stdout bytes.Buffer
	code, err = env.ExecLogin(ctx, []string{"bash", "-c", "echo out; exit 3"}, nil, &stdout, nil)
	if err != nil || code != 3 || stdout.String() != "out\n" {
		t.Errorf("exec: %d %v %q", code, err, stdout.String())
	}
	yes, no := true, false
	results, err := env.RunChecks(ctx, checks.Round{Checks: []lab.Check{
		{Name: "kubeconfig", Points: 1, File: &lab.FileCheck{Path: "/root/.kube/config"}},
		{Name: "absent", Points: 1, File: &lab.FileCheck{Path: "/root/nothing-here"}},
		{Name: "work-gone", Points: 1, File: &lab.FileCheck{Path: "/root/work", Exists: &no}},
		{Name: "ns", Points: 1, Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "e2e-ns", Exists: &yes}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []checks.Status{checks.Pass, checks.Fail, checks.Fail, checks.Pass}
	for i, r := range results {
		if r.Status != want[i] {
			t.Errorf("check %s: %s (%s), want %s", r.Name, r.Status, r.Message, want[i])
		}
	}
	if len(results) != len(want) {
		t.Fatalf("results = %+v", results)
	}

	t.Log("repairs")
	if err := engine.Remove(ctx, env.Runtime().(*kindRuntime).container); err != nil {
		t.Fatal(err)
	}
	if _, err := Connect(ctx, l); !errors.Is(err, provision.ErrNotUp) {
		t.Errorf("connect to a lab without sandbox: %v, want ErrNotUp", err)
	}
	env2, err := h.up(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code, out := script(t, env2, "cat /root/work"); code != 0 || out != "learner-work\n" {
		t.Errorf("the recreated sandbox lost the home volume: %q", out)
	}
	h.expect("after repairing the sandbox", 2, 1, 1)
	env2.Close()

	// A stopped control plane is not up; the next up deletes and recreates
	// the cluster, reruns the step setup and rewrites the kubeconfig.
	if out, err := exec.Command("docker", "stop", provision.ClusterName(e2eLabName)+"-control-plane").CombinedOutput(); err != nil {
		t.Fatalf("stopping the control plane: %v %s", err, out)
	}
	if _, err := Connect(ctx, l); !errors.Is(err, provision.ErrNotUp) {
		t.Errorf("connect to a lab with a stopped cluster: %v, want ErrNotUp", err)
	}
	w = &cancelAt{step: "\x00never", cancel: func() {}}
	env3, err := h.up(ctx, w)
	if err != nil {
		t.Fatalf("repairing up: %v\n%s", err, w.buf.String())
	}
	if !strings.Contains(w.buf.String(), "✗ Reusing cluster") || !strings.Contains(w.buf.String(), "✓ Repairing cluster") {
		t.Errorf("repair status lines:\n%s", w.buf.String())
	}
	h.expect("after repairing the cluster", 2, 1, 1)
	if code, out := script(t, env3, "cat /root/setup-marker; kubectl get ns e2e-ns -o name"); code != 0 || out != "setup-ran\nnamespace/e2e-ns\n" {
		t.Errorf("after the cluster repair: %d %q", code, out)
	}

	t.Log("reset namespaces and sandbox")
	if code, out := script(t, env3, "kubectl -n e2e-ns create configmap learner-made -o name"); code != 0 {
		t.Fatalf("creating a configmap as the learner: %q", out)
	}
	if err := env3.ResetNamespaces(ctx); err != nil {
		t.Fatal(err)
	}
	if code, out := script(t, env3, "kubectl -n e2e-ns get configmap learner-made -o name 2>&1; kubectl auth can-i create configmaps -n e2e-ns"); code != 0 ||
		!strings.Contains(out, "NotFound") || !strings.HasSuffix(out, "yes\n") {
		t.Errorf("after ResetNamespaces: %d %q", code, out)
	}
	if err := env3.RecreateSandbox(ctx); err != nil {
		t.Fatal(err)
	}
	if code, out := script(t, env3, "test ! -e /root/work && test ! -e /root/setup-marker && echo clean; kubectl get ns e2e-ns -o name"); code != 0 || out != "clean\nnamespace/e2e-ns\n" {
		t.Errorf("after RecreateSandbox the home should be new and kubectl should work: %d %q", code, out)
	}
	h.expect("after RecreateSandbox", 2, 1, 1)
	env3.Close()

	t.Log("down")
	if err := Down(ctx, l); err != nil {
		t.Fatal(err)
	}
	h.expect("after down", 0, 0, 0)
	if err := Down(ctx, l); err != nil {
		t.Fatalf("second down: %v", err)
	}
}

// mustGrader is the grader's credentials of a live lab.
func mustGrader(t *testing.T, env *provision.Live) *checks.KubeCredentials {
	t.Helper()
	kube, err := env.GraderCredentials(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return kube
}
