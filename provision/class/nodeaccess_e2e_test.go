//go:build e2e

package class

import (
	"bytes"
	"context"
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
// without the client certificate fails, and another learner's sandbox
// cannot connect at all; a listener stopped on the node is started again
// by class up.
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
