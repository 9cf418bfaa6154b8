//go:build e2e

package class

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/e2etest"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// TestE2EClassLearnerNodes runs labs/debug-rollout, a lab whose Pods must
// run, as a class of two learners, each with a node of their own joined
// to their control plane: their Pods run, and the lab's solve scripts and
// probes pass for both at once. A learner cannot turn their node against
// the class cluster's: no privileged Pod, no Pod Security label changed, no
// kubelet API without credentials.
func TestE2EClassLearnerNodes(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	ctx := context.Background()
	root := e2etest.Root(t)
	dir := filepath.Join(root, "labs", "debug-rollout")
	l, err := lab.Load(filepath.Join(dir, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	refs, err := images.EnsureWorkloads(ctx, images.Options{}, l, dir)
	if err != nil {
		t.Fatal(err)
	}
	h := newClassHost(t)
	h.load(t, images.NodeRef())

	cfg := h.config("nodes-")
	cfg.Lab, cfg.Fixtures = l, os.DirFS(filepath.Join(dir, "fixtures"))
	cfg.LearnerNodes, cfg.Images = true, refs
	cfg.CheckerBinary = os.Getenv("LABCTL_TEST_CHECKER")
	if cfg.CheckerBinary == "" {
		cfg.CheckerBinary = e2etest.BuildLabctl(t)
	}
	if err := CheckLab(l, false); err == nil {
		t.Fatal("CheckLab admits a run lab without the instructor's consent to learner nodes")
	}
	if err := CheckLab(l, true); err != nil {
		t.Fatal(err)
	}
	c, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	names := []string{"learner-1", "learner-2"}
	start := time.Now()
	upAll(t, c, names)
	t.Logf("2 learners with nodes up in %s", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		for _, n := range names {
			if err := c.Down(context.Background(), n); err != nil {
				t.Error(err)
			}
		}
	})
	ls := make([]*provision.Live, len(names))
	for i, n := range names {
		if ls[i], err = c.Connect(ctx, n); err != nil {
			t.Fatal(err)
		}
		defer func() { ls[i].Close() }()
	}

	t.Run("the lab's Pods run on the learner's node", func(t *testing.T) {
		// The first step's setup rolled out web v2, which crashes: its Pod
		// ran and wrote a log, which only a running container has.
		mustRun(t, ls[0], `set -e
for i in $(seq 60); do
  kubectl -n rollout logs deploy/web --all-containers 2>/dev/null | grep -q . && break
  sleep 1
done
kubectl -n rollout get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -qx lab-node`)
	})

	t.Run("every solve passes in both at once", func(t *testing.T) { solveAllAtOnce(t, ls, names) })

	t.Run("the learner cannot turn their node against the class node", func(t *testing.T) {
		// The learner may not read nodes: the kubelet's address is the vcp
		// Pod's, read on the class cluster.
		vcp, err := h.cs.CoreV1().Pods(c.Namespace(names[0])).Get(ctx, vcpPod, metav1.GetOptions{})
		if err != nil || vcp.Status.PodIP == "" {
			t.Fatalf("the learner's vcp Pod: %v", err)
		}
		// Each attack must be refused for the reason given, not fail for
		// another (a missing tool, a typo).
		for _, attack := range []struct{ what, script, refusal string }{
			{"a privileged Pod", `kubectl -n rollout run root --image=labctl.local/rollout-web:1 --restart=Never --privileged`, "disallowed by cluster policy"},
			{"a Pod Security label changed", `kubectl label namespace rollout pod-security.kubernetes.io/enforce=privileged --overwrite`, "forbidden"},
			{"a namespace of their own", `kubectl create namespace mine`, "forbidden"},
			{"a hostPath Pod", `kubectl -n rollout apply -f - <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: host}
spec:
  containers: [{name: c, image: labctl.local/rollout-web:1}]
  volumes: [{name: h, hostPath: {path: /}}]
Y`, "violates PodSecurity"},
			{"the kubelet's API without credentials", `code=$(curl -sk -o /dev/null -w '%{http_code}' https://` + vcp.Status.PodIP + `:10250/pods); echo "kubelet answered $code"; [ "$code" = 200 ]`, "kubelet answered 401"},
		} {
			var out bytes.Buffer
			code, err := ls[0].RunScript(ctx, attack.script, &out, &out)
			if err != nil || code == 0 || !strings.Contains(out.String(), attack.refusal) {
				t.Errorf("%s: exit %d, %v, want refused (%q):\n%s", attack.what, code, err, attack.refusal, out.String())
			}
		}
		// No privileged container passes the API server (it does not
		// allow them), and Pod Security baseline is the default of a
		// namespace without labels, for every identity: the API server's
		// admission configuration says so.
		for _, attack := range []struct{ what, script, refusal string }{
			{"a privileged Pod in namespace default", `kubectl -n default run root --image=labctl.local/rollout-web:1 --restart=Never --privileged`, "disallowed by cluster policy"},
			{"a hostPath Pod in namespace default", `kubectl -n default apply -f - <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: host}
spec:
  containers: [{name: c, image: labctl.local/rollout-web:1}]
  volumes: [{name: h, hostPath: {path: /}}]
Y`, "violates PodSecurity"},
		} {
			var out bytes.Buffer
			code, err := ls[0].RunAdminScript(ctx, attack.script, &out)
			if err != nil || code == 0 || !strings.Contains(out.String(), attack.refusal) {
				t.Errorf("%s, as the control plane's admin: exit %d, %v, want refused (%q):\n%s", attack.what, code, err, attack.refusal, out.String())
			}
		}
		// The node container is the only privileged one, in a namespace
		// that the learner has no identity on.
		p, err := h.cs.CoreV1().Pods(c.Namespace(names[0])).Get(ctx, vcpPod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ct := range p.Spec.Containers {
			if priv := ct.SecurityContext != nil && ct.SecurityContext.Privileged != nil && *ct.SecurityContext.Privileged; priv != (ct.Name == containerNode || ct.Name == containerProxy) {
				t.Errorf("container %s privileged: %v", ct.Name, priv)
			}
		}
	})
}
