//go:build e2e

package class

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
		for _, attack := range []struct{ what, script string }{
			{"a privileged Pod", `kubectl -n rollout run root --image=labctl.local/rollout-web:1 --restart=Never --privileged`},
			{"a Pod Security label changed", `kubectl label namespace rollout pod-security.kubernetes.io/enforce=privileged --overwrite`},
			{"a namespace of their own", `kubectl create namespace mine`},
			{"a hostPath Pod", `kubectl -n rollout apply -f - <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: host}
spec:
  containers: [{name: c, image: labctl.local/rollout-web:1}]
  volumes: [{name: h, hostPath: {path: /}}]
Y`},
			{"the kubelet's API without credentials", `curl -sk -o /dev/null -w '%{http_code}' https://$(kubectl get node lab-node -o jsonpath='{.status.addresses[0].address}'):10250/pods | grep -qx 200`},
		} {
			var out bytes.Buffer
			code, err := ls[0].RunScript(ctx, attack.script, &out, &out)
			if err != nil || code == 0 {
				t.Errorf("%s: exit %d, %v, want refused:\n%s", attack.what, code, err, out.String())
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
