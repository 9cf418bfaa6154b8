package class

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
)

// Node access in a class (cluster.nodeAccess) makes each learner root on
// their learner node, a privileged container on a class-cluster node: root
// there may be root on that node, and on every Pod placed beside it. The
// instructor consents by naming the class-cluster nodes dedicated to such
// learners (class up --node-access-on KEY=VALUE, with --learner-nodes):
// nodes labelled KEY=VALUE and tainted KEY=VALUE, so that the learners'
// Pods go there and nothing else does. The consent is kept on each
// learner's namespace (annotationNodeAccessOn), so the class commands after
// up place Pods made anew on the same nodes.

// annotationNodeAccessOn is the consent a learner's namespace was made
// with: the label KEY=VALUE of the dedicated nodes.
const annotationNodeAccessOn = "labctl.dev/node-access-on"

// NodeLabel is a label KEY=VALUE of the class cluster's nodes; the zero
// value is none.
type NodeLabel struct{ Key, Value string }

// IsZero says no label is named.
func (l NodeLabel) IsZero() bool { return l.Key == "" }

func (l NodeLabel) String() string {
	if l.IsZero() {
		return ""
	}
	return l.Key + "=" + l.Value
}

// ParseNodeLabel reads the --node-access-on setting, KEY=VALUE; "" is none.
func ParseNodeLabel(s string) (NodeLabel, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return NodeLabel{}, nil
	}
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" || v == "" {
		return NodeLabel{}, fmt.Errorf("--node-access-on %q: write KEY=VALUE, the label and taint of the nodes dedicated to the class, e.g. labctl.dev/node-access=yes", s)
	}
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return NodeLabel{}, fmt.Errorf("--node-access-on %q: %q is not a label key: %s", s, k, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
		return NodeLabel{}, fmt.Errorf("--node-access-on %q: %q is not a label value: %s", s, v, strings.Join(errs, "; "))
	}
	return NodeLabel{Key: k, Value: v}, nil
}

// withNodeAccess is p keeping the learners' Pods on the nodes labelled
// on, tolerating their taint on of every effect. It fails when p already
// asks for another value of the same label.
func (p Placement) withNodeAccess(on NodeLabel) (Placement, error) {
	if on.IsZero() {
		return p, nil
	}
	if v, ok := p.NodeSelector[on.Key]; ok && v != on.Value {
		return p, fmt.Errorf("--node-selector %s=%s and --node-access-on %s ask for two values of one label: give the label of the dedicated nodes once", on.Key, v, on)
	}
	out := Placement{NodeSelector: map[string]string{on.Key: on.Value}, Tolerations: slices.Clone(p.Tolerations)}
	for k, v := range p.NodeSelector {
		out.NodeSelector[k] = v
	}
	tol := corev1.Toleration{Key: on.Key, Operator: corev1.TolerationOpEqual, Value: on.Value}
	if !slices.ContainsFunc(out.Tolerations, func(t corev1.Toleration) bool { return t == tol }) {
		out.Tolerations = append(out.Tolerations, tol)
	}
	return out, nil
}

// checkDedicatedNodes says why the class cluster has no node dedicated to
// learners who are root on their node, labelled on: none carries the
// label, or one that does lacks the taint that keeps other Pods off it.
func checkDedicatedNodes(ctx context.Context, cs kubernetes.Interface, on NodeLabel) error {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: on.Key + "=" + on.Value})
	if err != nil {
		return fmt.Errorf("listing the class cluster's nodes labelled %s: %w", on, err)
	}
	fix := "kubectl label nodes NODE " + on.String() + " && kubectl taint nodes NODE " + on.String() + ":NoSchedule"
	if len(nodes.Items) == 0 {
		return fmt.Errorf("no node of the class cluster carries the label %s that --node-access-on names: "+
			"dedicate nodes to the class's learners, who are root on their learner node, with: %s", on, fix)
	}
	var open []string
	for _, n := range nodes.Items {
		if !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == on.Key && t.Value == on.Value && (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute)
		}) {
			open = append(open, n.Name)
		}
	}
	if len(open) > 0 {
		slices.Sort(open)
		return fmt.Errorf("node(s) %s carry the label %s but not its taint, so other Pods may run beside learners who are root on their learner node: "+
			"taint them with: kubectl taint nodes %s %s:NoSchedule", strings.Join(open, ", "), on, strings.Join(open, " "), on)
	}
	return nil
}

// recordedNodeAccess is the consent the class's learners were brought up
// with, read from their namespaces: the zero NodeLabel when none was
// given or no learner is up.
func recordedNodeAccess(ctx context.Context, cs kubernetes.Interface, prefix, labName string) (NodeLabel, error) {
	nss, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{
		LabelSelector: LabelClassLab + "=" + labName + "," + LabelClassPrefix + "=" + prefixLabel(prefix)})
	if err != nil {
		return NodeLabel{}, fmt.Errorf("reading the class's namespaces: %w", err)
	}
	for _, ns := range nss.Items {
		if s := ns.Annotations[annotationNodeAccessOn]; s != "" {
			return ParseNodeLabel(s)
		}
	}
	return NodeLabel{}, nil
}
