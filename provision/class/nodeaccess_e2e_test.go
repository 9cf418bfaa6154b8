//go:build e2e

package class

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// testClassNodeAccess brings up, beside class c (whose first learner is
// other), a node-access class of testdata/class-node, one learner on a
// class node labelled and tainted for it: the learner reaches their node
// as root with node lab-node, the solve makes the grade pass and the report
// says the learner was root on their node. A connection to the listener
// without the client certificate fails, and neither another learner's
// sandbox nor a Pod of their lab can connect at all; Pods made through the
// API server in place of the static Pod fail the grade; a listener
// stopped on the node is started again by class up.
func testClassNodeAccess(t *testing.T, h *classHost, c *Class, other *provision.Live) {
	ctx := context.Background()
	l, err := lab.Load("testdata/class-node/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	on := NodeLabel{Key: "labctl.dev/e2e-node-root", Value: "yes"}
	if err := CheckLab(l, Consent{LearnerNodes: true, NodeAccessOn: on}); err != nil {
		t.Fatal(err)
	}
	nodes, err := h.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("listing the class cluster's nodes: %v", err)
	}
	// The last node: the other learners' Pods already run where they run,
	// and a taint that says NoSchedule moves none of them.
	node := nodes.Items[len(nodes.Items)-1].Name
	patch := func(p string) {
		if _, err := h.cs.CoreV1().Nodes().Patch(context.Background(), node, types.StrategicMergePatchType, []byte(p), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	patch(`{"metadata":{"labels":{"` + on.Key + `":"` + on.Value + `"}},"spec":{"taints":[{"key":"` + on.Key + `","value":"` + on.Value + `","effect":"NoSchedule"}]}}`)
	defer func() {
		n, err := h.cs.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		delete(n.Labels, on.Key)
		var keep = n.Spec.Taints[:0]
		for _, tn := range n.Spec.Taints {
			if tn.Key != on.Key {
				keep = append(keep, tn)
			}
		}
		n.Spec.Taints = keep
		if _, err := h.cs.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
			t.Error(err)
		}
	}()
	cfg := c.cfg
	cfg.Prefix, cfg.Lab, cfg.Fixtures, cfg.Images = "root-", l, nil, nil
	cfg.NodeAccessOn = on
	d, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	const name = "learner-1"
	start := time.Now()
	if err := d.Up(ctx, name); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Down(context.Background(), name); err != nil {
			t.Error(err)
		}
	}()
	t.Logf("a node-access learner up in %s", time.Since(start).Round(time.Millisecond))
	if p, err := h.cs.CoreV1().Pods(d.Namespace(name)).Get(ctx, vcpPod, metav1.GetOptions{}); err != nil || p.Spec.NodeName != node {
		t.Errorf("the learner's control plane runs on %v (%v), want the dedicated node %s", p.Spec.NodeName, err, node)
	}
	live, err := d.Connect(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	mustRun(t, live, `kubectl get nodes -o name | grep -qx node/lab-node
node lab-node true
[ "$(node lab-node id -u)" = 0 ]
node lab-node sh -c 'exit 7'; [ $? = 7 ]`)

	host := nodeAccessHost(d.Namespace(name))
	// Without the client certificate: the handshake or the first read
	// fails, and no frame of the session comes back.
	noCert := `python3 - <<'P'
import socket, ssl
ctx = ssl.create_default_context(cafile="/etc/labctl/node-access/ca.crt")
try:
    s = ctx.wrap_socket(socket.create_connection(("` + host + `", 10290), timeout=10), server_hostname="lab-node")
    s.sendall(b"H\0\0\0\x10" + b"0\0xterm\x0024\x0080\0id")
    s.sendall(b"E\0\0\0\0")
    got = s.recv(100)
    print("answered" if got else "closed")
except (OSError, ssl.SSLError) as e:
    print("refused", e)
P`
	var out bytes.Buffer
	if code, err := live.RunScript(ctx, noCert, &out, &out); err != nil || code != 0 || strings.HasPrefix(out.String(), "answered") ||
		!(strings.HasPrefix(out.String(), "closed") || strings.HasPrefix(out.String(), "refused")) {
		t.Errorf("a connection without the client certificate: exit %d, %v: %s", code, err, out.String())
	}
	t.Logf("without the client certificate: %s", strings.TrimSpace(out.String()))
	// Another learner's sandbox: the wall around the learner's namespace.
	out.Reset()
	connect := `python3 -c 'import socket
try:
    socket.create_connection(("` + host + `", 10290), timeout=5); print("open")
except OSError as e:
    print("walled", e)'`
	if code, err := other.RunScript(ctx, connect, &out, &out); err != nil || code != 0 || !strings.HasPrefix(out.String(), "walled") {
		t.Errorf("another learner's sandbox connecting to %s:10290: exit %d, %v: %s", host, code, err, out.String())
	}
	t.Logf("from another learner's sandbox: %s", strings.TrimSpace(out.String()))
	// A Pod of another learner's lab, on their node, at the listener's
	// address itself: the same wall, before any handshake.
	vcp, err := h.cs.CoreV1().Pods(d.Namespace(name)).Get(ctx, vcpPod, metav1.GetOptions{})
	if err != nil || vcp.Status.PodIP == "" {
		t.Fatalf("the node-access learner's control-plane Pod has no address: %v", err)
	}
	got, _ := runAs(t, other, `kubectl -n rollout delete pod reach --ignore-not-found --wait >/dev/null
kubectl -n rollout apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: reach}
spec:
  restartPolicy: Never
  securityContext: {runAsNonRoot: true, runAsUser: 65532, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: reach
    image: `+netToolRef+`
    imagePullPolicy: Never
    args: [get, "https://`+vcp.Status.PodIP+`:`+fmt.Sprint(provision.NodeAccessPort)+`/"]
    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
EOF
for i in $(seq 60); do
  case $(kubectl -n rollout get pod reach -o jsonpath='{.status.phase}') in Succeeded|Failed) break ;; esac
  sleep 1
done
kubectl -n rollout logs reach
kubectl -n rollout delete pod reach --wait=false >/dev/null`)
	if !strings.Contains(got, "dial tcp") || strings.Contains(got, "x509") || strings.Contains(got, "tls:") {
		t.Errorf("a Pod of another learner's lab connecting to %s:%d: %s", vcp.Status.PodIP, provision.NodeAccessPort, got)
	}
	t.Logf("from a Pod of another learner's lab: %s", strings.TrimSpace(got))

	// The grade without the work: Pods made through the API server pass
	// no check of the static Pod, neither a plain one on the node nor one
	// dressed as the kubelet's mirror Pod (which the learner may create,
	// but the kubelet never runs, and removes).
	testForgedStaticPod(t, live)

	results, err := solveAll(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	if f := failed(results); len(f) > 0 || len(results) == 0 {
		t.Fatalf("after the solve:\n%s", strings.Join(f, "\n"))
	}
	if r := report.Build(l, "", time.Now(), map[string][]checks.Result{l.Steps[0].ID: results}); !r.Lab.NodeRoot {
		t.Error("the class's grade report does not say the learner was root on their node")
	}
	mustRun(t, live, `kubectl -n node-lab get pod web-lab-node -o jsonpath='{.spec.nodeName}' | grep -qx lab-node`)

	// The listener stopped on the node: class up starts it again.
	mustRun(t, live, `node lab-node sh -c 'kill "$(cat /run/labctl-node-access/pid)"'
for i in $(seq 20); do node lab-node true 2>/dev/null || exit 0; sleep 0.5; done; exit 1`)
	if err := d.Up(ctx, name); err != nil {
		t.Fatal(err)
	}
	mustRun(t, live, `node lab-node true`)
}

// mirrorPodForged is a Pod of the learner's that also carries the
// kubelet's mirror annotation and its owner, the Node, and asks for the
// status Running.
const mirrorPodForged = `uid=$(kubectl get node lab-node -o jsonpath='{.metadata.uid}') || exit 1
kubectl -n node-lab create -f - <<Y >/dev/null 2>&1 || { echo refused; exit 0; }
apiVersion: v1
kind: Pod
metadata:
  name: web-lab-node
  labels: {app: web}
  annotations: {kubernetes.io/config.mirror: forged, kubernetes.io/config.source: file, kubernetes.io/config.hash: forged}
  ownerReferences: [{apiVersion: v1, kind: Node, name: lab-node, uid: "$uid", controller: true}]
spec:
  nodeName: lab-node
  containers: [{name: web, image: registry.k8s.io/pause:3.10.2, imagePullPolicy: Never}]
Y
echo created
kubectl -n node-lab patch pod web-lab-node --subresource=status --type=merge -p '{"status":{"phase":"Running"}}' >/dev/null 2>&1 && echo status-written
kubectl -n node-lab get pod web-lab-node -o jsonpath='{.status.phase}' 2>/dev/null || echo gone`

// testForgedStaticPod makes, in live's lab, the Pods that pretend to be
// the static Pod web's mirror Pod (mirrorPodForged, then the lab's mistake,
// a Pod made through the API server on the node), grades each, and wants a
// check failed (the mistake's own); the mistake's way back then passes.
func testForgedStaticPod(t *testing.T, live *provision.Live) {
	ctx := context.Background()
	m := live.Lab.Steps[0].Mistakes[0]
	for _, f := range []struct {
		what, script string
		fails        []string
	}{
		{"a Pod dressed as the mirror Pod", mirrorPodForged, nil},
		{m.Description, m.Script, m.Fails},
	} {
		mustRun(t, live, `kubectl -n node-lab delete pod web-lab-node --ignore-not-found --wait --timeout=60s >/dev/null`)
		var out bytes.Buffer
		code, err := live.RunScript(ctx, f.script, &out, &out)
		if err != nil || code != 0 {
			t.Fatalf("%s: exit %d, %v: %s", f.what, code, err, out.String())
		}
		rs, err := gradeAll(ctx, live)
		if err != nil {
			t.Fatal(err)
		}
		failing := failed(rs)
		t.Logf("%s (%s): the grade fails %d check(s): %s", f.what, strings.Join(strings.Fields(out.String()), " "), len(failing), strings.Join(failing, "; "))
		if len(failing) == 0 {
			t.Errorf("%s passes every check of the static Pod", f.what)
		}
		for _, name := range f.fails {
			if !slices.ContainsFunc(failing, func(s string) bool { return strings.HasPrefix(s, name+": ") }) {
				t.Errorf("%s: check %s passes", f.what, name)
			}
		}
	}
	mustRun(t, live, m.Recover)
	rs, err := gradeAll(ctx, live)
	if err != nil {
		t.Fatal(err)
	}
	if f := failed(rs); len(f) > 0 {
		t.Errorf("after the mistake's way back:\n%s", strings.Join(f, "\n"))
	}
}
