//go:build e2e

package class

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/fsx"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// openNodeClass opens a class of labs/debug-rollout with learner nodes on
// h, the lab's images built and the node image loaded; CheckLab admits the
// lab only with the instructor's consent.
func openNodeClass(tb testing.TB, h *classHost, prefix string, extra ...string) *Class {
	ctx := context.Background()
	dir := filepath.Join(e2etest.Root(tb), "labs", "debug-rollout")
	l, err := lab.Load(filepath.Join(dir, "lab.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	refs, err := images.EnsureWorkloads(ctx, images.Options{}, l, dir)
	if err != nil {
		tb.Fatal(err)
	}
	refs = append(refs, extra...)
	h.load(tb, images.NodeRef())
	cfg := h.config(prefix)
	cfg.Lab, cfg.Fixtures = l, os.DirFS(filepath.Join(dir, "fixtures"))
	cfg.LearnerNodes, cfg.Images = true, refs
	cfg.CheckerBinary = os.Getenv("LABCTL_TEST_CHECKER")
	if cfg.CheckerBinary == "" {
		cfg.CheckerBinary = e2etest.BuildLabctl(tb)
	}
	if err := CheckLab(l, Consent{}); err == nil {
		tb.Fatal("CheckLab admits a run lab without the instructor's consent to learner nodes")
	}
	if err := CheckLab(l, Consent{LearnerNodes: true}); err != nil {
		tb.Fatal(err)
	}
	c, err := Open(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// hostPathPod is a script that applies a Pod mounting the node's / in ns.
func hostPathPod(ns string) string {
	return `kubectl -n ` + ns + ` apply -f - <<'Y'
apiVersion: v1
kind: Pod
metadata: {name: host}
spec:
  containers: [{name: c, image: labctl.local/rollout-web:1}]
  volumes: [{name: h, hostPath: {path: /}}]
Y`
}

// netToolRef is provision/kind's small client image, which the test loads
// into the learners' nodes to ask names from a Pod.
const netToolRef = "labctl.local/e2e-net-tool:1"

// buildNetTool builds netToolRef in the local engine and returns it.
func buildNetTool(t *testing.T) string {
	dir := t.TempDir()
	src := os.DirFS(filepath.Join(e2etest.Root(t), "provision", "kind", "testdata", "net-tool"))
	if err := fsx.CopyTree(src, filepath.Join(dir, "images", "net-tool"), fsx.ExecBit); err != nil {
		t.Fatal(err)
	}
	l := e2etest.NewLab("e2e-net-tool", "e2e-net", lab.Step{ID: "one"})
	l.Cluster.Images = []lab.Image{{Name: netToolRef, Build: "images/net-tool"}}
	if _, err := images.EnsureWorkloads(context.Background(), images.Options{}, l, dir); err != nil {
		t.Fatal(err)
	}
	return netToolRef
}

// TestE2EClassLearnerNodes runs labs/debug-rollout, a lab whose Pods must
// run, as a class of two learners, each with a node of their own joined
// to their control plane: their Pods run, and the lab's solve scripts and
// probes pass for both at once. A learner cannot turn their node against
// the class cluster's: no privileged Pod, no Pod Security label changed, no
// kubelet API without credentials.
func TestE2EClassLearnerNodes(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	ctx := context.Background()
	h := newClassHost(t)
	c := openNodeClass(t, h, "nodes-", buildNetTool(t))
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
		var err error
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

	t.Run("a class of a node-access lab goes only to nodes dedicated to it", func(t *testing.T) {
		// The same lab made a node-access one, with the consent of a label
		// no node of the class cluster carries: refused before anything is
		// made; then a node labelled but not tainted is named.
		l := *c.cfg.Lab
		l.Cluster.NodeAccess = true
		cfg := c.cfg
		cfg.Lab = &l
		on := NodeLabel{Key: "labctl.dev/e2e-node-access", Value: "yes"}
		cfg.NodeAccessOn = on
		d, err := Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if _, err := d.Capacity(ctx); err == nil || !strings.Contains(err.Error(), "no node of the class cluster carries the label "+on.String()) ||
			!strings.Contains(err.Error(), "kubectl label nodes NODE "+on.String()) {
			t.Errorf("capacity with no node labelled: %v", err)
		}
		if err := d.Up(ctx, "learner-3"); err == nil || !strings.Contains(err.Error(), "no node of the class cluster carries the label") {
			t.Errorf("up with no node labelled: %v", err)
		}
		if _, err := h.cs.CoreV1().Namespaces().Get(ctx, d.Namespace("learner-3"), metav1.GetOptions{}); err == nil {
			t.Errorf("up refused, yet namespace %s exists", d.Namespace("learner-3"))
		}
		nodes, err := h.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) == 0 {
			t.Fatalf("listing the class cluster's nodes: %v", err)
		}
		node := nodes.Items[0].Name
		label := func(value string) {
			patch := `{"metadata":{"labels":{"` + on.Key + `":` + value + `}}}`
			if _, err := h.cs.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		label(`"` + on.Value + `"`)
		defer label("null")
		if _, err := d.Capacity(ctx); err == nil || !strings.Contains(err.Error(), "node(s) "+node+" carry the label "+on.String()+" but not its taint") ||
			!strings.Contains(err.Error(), "kubectl taint nodes "+node+" "+on.String()+":NoSchedule") {
			t.Errorf("capacity with %s labelled, untainted: %v", node, err)
		}
	})

	t.Run("every solve passes in both at once", func(t *testing.T) { solveAllAtOnce(t, ls, names) })

	t.Run("the learner's Pods find Services by name, and only their own", func(t *testing.T) {
		// A Pod of the learner's asks web's Service by its short and its
		// full name through the node's cluster DNS; the class cluster's
		// names (the learner's own vcp Service there) do not resolve.
		classSvc := vcpService + "." + c.Namespace(names[0]) + ".svc.cluster.local"
		out, code := runAs(t, ls[0], `set -e
lookup() {
  kubectl -n rollout delete pod dns --ignore-not-found --wait >/dev/null
  kubectl -n rollout apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: dns}
spec:
  restartPolicy: Never
  securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: dns
    image: `+netToolRef+`
    imagePullPolicy: Never
    args: [get, "$1"]
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
EOF
  for i in $(seq 90); do
    phase=$(kubectl -n rollout get pod dns -o jsonpath='{.status.phase}')
    case $phase in Succeeded|Failed) break ;; esac
    sleep 1
  done
  echo "== $1: $phase"
  kubectl -n rollout logs dns
}
lookup http://web/
lookup http://web.rollout.svc.cluster.local/
lookup https://`+classSvc+`:`+fmt.Sprint(vcpPort)+`/version
kubectl -n rollout delete pod dns --wait=false >/dev/null`)
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		for _, want := range []string{
			"== http://web/: Succeeded\ngreeting: Hello from web",
			"== http://web.rollout.svc.cluster.local/: Succeeded\ngreeting: Hello from web",
			"== https://" + classSvc + ":" + fmt.Sprint(vcpPort) + "/version: Failed\nnet-tool: ",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in:\n%s", want, out)
			}
		}
		if !strings.Contains(out, "no such host") {
			t.Errorf("the class cluster's name did not fail as unknown:\n%s", out)
		}
	})

	t.Run("the learner cannot turn their node against the class node", func(t *testing.T) {
		// The kubelet's address is the vcp Pod's, read on the class cluster.
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
			{"a hostPath Pod", hostPathPod("rollout"), "violates PodSecurity"},
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
		admin, err := ls[0].Runtime().Admin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		acs, err := kubernetes.NewForConfig(admin)
		if err != nil {
			t.Fatal(err)
		}
		yes := true
		for _, attack := range []struct {
			what    string
			spec    corev1.PodSpec
			refusal string
		}{
			{"a privileged Pod in namespace default", corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "labctl.local/rollout-web:1",
				SecurityContext: &corev1.SecurityContext{Privileged: &yes}}}}, "disallowed by cluster policy"},
			{"a hostPath Pod in namespace default", corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "labctl.local/rollout-web:1"}},
				Volumes: []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}}, "violates PodSecurity"},
		} {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "root"}, Spec: attack.spec}
			_, err := acs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{})
			if err == nil || !strings.Contains(err.Error(), attack.refusal) {
				t.Errorf("%s, as the control plane's admin: %v, want refused (%q)", attack.what, err, attack.refusal)
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

	t.Run("the learner's node runs Pods that name no seccomp profile under the runtime's default", func(t *testing.T) {
		// The kubelet's running configuration, as it serves it through the
		// API server (configz), not the file labctl wrote: a Pod that names
		// no profile gets RuntimeDefault, never Unconfined.
		admin, err := ls[0].Runtime().Admin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		acs, err := kubernetes.NewForConfig(admin)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := acs.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", learnerNodeName, "proxy", "configz").DoRaw(ctx)
		if err != nil {
			t.Fatalf("reading the kubelet's configuration: %v", err)
		}
		var configz struct {
			KubeletConfig struct {
				SeccompDefault *bool `json:"seccompDefault"`
			} `json:"kubeletconfig"`
		}
		if err := json.Unmarshal(raw, &configz); err != nil {
			t.Fatalf("the kubelet's configuration: %v\n%s", err, raw)
		}
		if sd := configz.KubeletConfig.SeccompDefault; sd == nil || !*sd {
			t.Errorf("the learner node's kubelet runs without seccompDefault:\n%s", raw)
		}
	})

	t.Run("a node made from other settings is named, and renewed keeps the learner's work", func(t *testing.T) {
		// learner-2's vcp Pod as an earlier labctl made it: its node's
		// kubelet read another configuration when it started.
		n := names[1]
		mustRun(t, ls[1], "echo kept >/root/kept && kubectl -n rollout create configmap kept --from-literal=a=b")
		pods := h.cs.CoreV1().Pods(c.Namespace(n))
		defer func() {
			if !t.Failed() {
				return
			}
			// Which container of the control plane restarted, and why.
			p, err := pods.Get(ctx, vcpPod, metav1.GetOptions{})
			if err != nil {
				t.Logf("pod vcp: %v", err)
				return
			}
			for _, st := range p.Status.ContainerStatuses {
				t.Logf("vcp container %s: ready %t, restarts %d, last %+v", st.Name, st.Ready, st.RestartCount, st.LastTerminationState.Terminated)
			}
			t.Logf("vcp conditions: %+v", p.Status.Conditions)
		}()
		vcp, err := pods.Get(ctx, vcpPod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		vcp.Annotations[annotationSpec] = "earlier"
		if _, err := pods.Update(ctx, vcp, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := c.Outdated(ctx, names); !slices.Equal(got, []string{n}) {
			t.Fatalf("Outdated = %v, want [%s]", got, n)
		}
		// What class up --renew-outdated does: stop the outdated Pods within
		// their grace, then bring the learner up.
		sandboxUID := func() string {
			p, err := pods.Get(ctx, sandboxPod, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return string(p.UID)
		}
		before := sandboxUID()
		if err := c.Renew(ctx, n); err != nil {
			t.Fatal(err)
		}
		if err := c.Up(ctx, n); err != nil {
			t.Fatal(err)
		}
		if sandboxUID() != before {
			t.Error("the sandbox, made from these settings, was made anew too")
		}
		if got := c.Outdated(ctx, names); len(got) != 0 {
			t.Errorf("Outdated = %v after its Pods were made anew, want none", got)
		}
		// The control plane made anew may not be ready at every moment
		// just after it came up (its probes, while its node registers and
		// its images load): connect as a learner would, again until it is.
		var again *provision.Live
		for deadline := time.Now().Add(3 * time.Minute); ; time.Sleep(2 * time.Second) {
			again, err = c.Connect(ctx, n)
			if err == nil || !errors.Is(err, provision.ErrNotUp) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		ls[1].Close()
		ls[1] = again
		mustRun(t, ls[1], `set -e
grep -qx kept /root/kept
kubectl -n rollout get configmap kept >/dev/null
for i in $(seq 120); do
  kubectl -n rollout get pods -o jsonpath='{range .items[*]}{.spec.nodeName} {.status.phase}{"\n"}{end}' | grep -qx 'lab-node Running' && exit 0
  sleep 1
done
kubectl -n rollout get pods -o wide; exit 1`)
	})

	t.Run("a node-access learner is root on their node, and only they reach it", func(t *testing.T) { testClassNodeAccess(t, h, c, ls[0]) })
}
