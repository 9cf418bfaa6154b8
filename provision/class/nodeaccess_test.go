package class

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	kresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseNodeLabel(t *testing.T) {
	if l, err := ParseNodeLabel(" labctl.dev/node-access=yes "); err != nil || l != (NodeLabel{Key: "labctl.dev/node-access", Value: "yes"}) {
		t.Errorf("labctl.dev/node-access=yes: %+v, %v", l, err)
	}
	if l, err := ParseNodeLabel(""); err != nil || !l.IsZero() {
		t.Errorf("nothing: %+v, %v, want no label", l, err)
	}
	for in, says := range map[string]string{
		"dedicated":        "write KEY=VALUE",
		"=yes":             "write KEY=VALUE",
		"dedicated=":       "write KEY=VALUE",
		"bad key!=yes":     `"bad key!" is not a label key`,
		"dedicated=a b":    `"a b" is not a label value`,
		"a/b/c=yes":        "is not a label key",
		"dedicated=yes,no": "is not a label value",
	} {
		_, err := ParseNodeLabel(in)
		if err == nil || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), "--node-access-on") {
			t.Errorf("%q: %v, want an error naming --node-access-on that says %q", in, err, says)
		}
	}
}

// dedicatedNode is a Ready node with labels and taints, 8 GiB and 4 cores.
func dedicatedNode(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceMemory: kresource.MustParse("8Gi"), corev1.ResourceCPU: kresource.MustParse("4")}
	return n
}

// With the consent to node access, the learners' Pods go only to the nodes
// labelled with it and tolerate its taint; the room counted is theirs; and
// class up refuses, before it makes anything, a cluster where no node
// carries the label, or where one that does lacks the taint.
func TestNodeAccessDedicatedNodes(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	on := NodeLabel{Key: "labctl.dev/node-access", Value: "yes"}
	c.cfg.NodeAccessOn = on
	p, err := c.cfg.Placement.withNodeAccess(on)
	if err != nil {
		t.Fatal(err)
	}
	c.cfg.Placement = p
	create := func(n *corev1.Node) {
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create(dedicatedNode("shared", nil))

	_, err = c.Capacity(ctx)
	if err == nil || !strings.Contains(err.Error(), "no node of the class cluster carries the label labctl.dev/node-access=yes") ||
		!strings.Contains(err.Error(), "kubectl label nodes NODE labctl.dev/node-access=yes") ||
		!strings.Contains(err.Error(), "kubectl taint nodes NODE labctl.dev/node-access=yes:NoSchedule") {
		t.Errorf("capacity with no node labelled: %v, want the label and the kubectl commands named", err)
	}
	if err := c.Up(ctx, "ada"); err == nil || !strings.Contains(err.Error(), "no node of the class cluster carries the label") {
		t.Errorf("up with no node labelled: %v, want it refused", err)
	}
	if nss, _ := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); len(nss.Items) != 0 {
		t.Errorf("up refused, yet it made namespaces: %v", nss.Items)
	}

	create(dedicatedNode("open", map[string]string{on.Key: on.Value}))
	if _, err := c.Capacity(ctx); err == nil || !strings.Contains(err.Error(), "node(s) open carry the label labctl.dev/node-access=yes but not its taint") ||
		!strings.Contains(err.Error(), "kubectl taint nodes open labctl.dev/node-access=yes:NoSchedule") {
		t.Errorf("capacity with a labelled node untainted: %v, want it named with the kubectl taint command", err)
	}
	if err := cs.CoreV1().Nodes().Delete(ctx, "open", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	create(dedicatedNode("dedicated", map[string]string{on.Key: on.Value},
		corev1.Taint{Key: on.Key, Value: on.Value, Effect: corev1.TaintEffectNoSchedule}))
	got, err := c.Capacity(ctx)
	if err != nil || got.Nodes != 1 || got.FreeMemory != 8<<30 {
		t.Errorf("capacity with one dedicated node: %+v, %v, want that node alone", got, err)
	}
	o := c.objects("ada")
	for _, pod := range o.pods() {
		if pod.Spec.NodeSelector[on.Key] != on.Value {
			t.Errorf("pod %s: node selector %v, want %s", pod.Name, pod.Spec.NodeSelector, on)
		}
		taint := corev1.Taint{Key: on.Key, Value: on.Value, Effect: corev1.TaintEffectNoExecute}
		if !(Placement{Tolerations: pod.Spec.Tolerations}).tolerates(&taint) {
			t.Errorf("pod %s: tolerations %v do not tolerate %s:NoExecute", pod.Name, pod.Spec.Tolerations, on)
		}
	}
	if ns := o.namespaceObject(); ns.Annotations[annotationNodeAccessOn] != on.String() {
		t.Errorf("namespace annotations %v, want the consent recorded", ns.Annotations)
	}
}

// The consent joins the instructor's other placement; two values of one
// label are refused with both named.
func TestNodeAccessPlacement(t *testing.T) {
	on := NodeLabel{Key: "pool", Value: "root"}
	p, err := ParsePlacement("zone=a", "dedicated:NoSchedule")
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.withNodeAccess(on)
	if err != nil || got.NodeSelector["zone"] != "a" || got.NodeSelector["pool"] != "root" || len(got.Tolerations) != 2 {
		t.Errorf("placement %+v, %v: want zone=a, pool=root and both tolerations", got, err)
	}
	if len(p.NodeSelector) != 1 || len(p.Tolerations) != 1 {
		t.Errorf("the instructor's placement changed: %+v", p)
	}
	if same, err := (Placement{}).withNodeAccess(NodeLabel{}); err != nil || same.NodeSelector != nil || same.Tolerations != nil {
		t.Errorf("no consent: %+v, %v, want the placement as it was", same, err)
	}
	p, _ = ParsePlacement("pool=class", "")
	if _, err := p.withNodeAccess(on); err == nil || !strings.Contains(err.Error(), "--node-selector pool=class and --node-access-on pool=root") {
		t.Errorf("two values of pool: %v, want both named", err)
	}
}

// The class commands after up know the consent from the learners'
// namespaces; up refuses another label for a namespace made with one.
func TestNodeAccessRecorded(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	on := NodeLabel{Key: "labctl.dev/node-access", Value: "yes"}
	if got, err := recordedNodeAccess(ctx, cs, "labctl-", c.cfg.Lab.Metadata.Name); err != nil || !got.IsZero() {
		t.Errorf("no learner: %+v, %v, want no consent", got, err)
	}
	o := c.objects("ada")
	o.nodeAccessOn = on
	if _, err := cs.CoreV1().Namespaces().Create(ctx, o.namespaceObject(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := recordedNodeAccess(ctx, cs, "labctl-", c.cfg.Lab.Metadata.Name); err != nil || got != on {
		t.Errorf("a learner brought up with %s: %+v, %v", on, got, err)
	}
	if got, err := recordedNodeAccess(ctx, cs, "other-", c.cfg.Lab.Metadata.Name); err != nil || !got.IsZero() {
		t.Errorf("another class's prefix: %+v, %v, want no consent", got, err)
	}
	o.nodeAccessOn = NodeLabel{Key: "labctl.dev/node-access", Value: "other"}
	if err := c.ensureNamespace(ctx, o); err == nil || !strings.Contains(err.Error(), "was made with --node-access-on labctl.dev/node-access=yes") {
		t.Errorf("up with another label: %v, want it refused, naming the first", err)
	}
	o.nodeAccessOn = on
	if err := c.ensureNamespace(ctx, o); err != nil {
		t.Errorf("up with the same label: %v", err)
	}
}
