package class

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func fakeClass(objs ...corev1.Pod) (*Class, *fake.Clientset) {
	o := testObjects()
	cs := fake.NewClientset()
	for i := range objs {
		_, _ = cs.CoreV1().Pods(objs[i].Namespace).Create(context.Background(), &objs[i], metav1.CreateOptions{})
	}
	return &Class{cfg: Config{Lab: o.lab, Prefix: "labctl-", SandboxImage: o.image}, cs: cs, cp: o.cp}, cs
}

// A Pod that is not ready and was made from other settings (an image that
// could not be pulled, then --sandbox-image) is made again; a ready one,
// and one from the same settings, are kept.
func TestEnsurePodReplacesStaleUnreadyPods(t *testing.T) {
	ctx := context.Background()
	o := testObjects()
	old := *o.sandboxPod()
	old.Annotations = map[string]string{annotationSpec: "other"}
	old.UID = "old"
	c, cs := fakeClass(old)
	if err := c.ensurePod(ctx, o.sandboxPod()); err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().Pods(o.namespace).Get(ctx, sandboxPod, metav1.GetOptions{})
	if err != nil || got.Annotations[annotationSpec] == "other" {
		t.Fatalf("the stale Pod was kept: %+v, %v", got.Annotations, err)
	}
	same := got.Annotations[annotationSpec]
	if err := c.ensurePod(ctx, o.sandboxPod()); err != nil {
		t.Fatal(err)
	}
	if again, _ := cs.CoreV1().Pods(o.namespace).Get(ctx, sandboxPod, metav1.GetOptions{}); again.Annotations[annotationSpec] != same {
		t.Error("a Pod from the same settings changed")
	}

	ready := *o.sandboxPod()
	ready.Annotations = map[string]string{annotationSpec: "other"}
	ready.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	c, cs = fakeClass(ready)
	if err := c.ensurePod(ctx, o.sandboxPod()); err != nil {
		t.Fatal(err)
	}
	if kept, _ := cs.CoreV1().Pods(o.namespace).Get(ctx, sandboxPod, metav1.GetOptions{}); kept.Annotations[annotationSpec] != "other" {
		t.Error("a ready Pod was replaced: the learner's session would end")
	}
}

// Down removes only a namespace of this class and lab.
func TestDownLeavesOtherLabsAlone(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	other := testObjects().namespaceObject()
	other.Labels[LabelClassLab] = "another-lab"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Down(ctx, "ada"); err == nil || !strings.Contains(err.Error(), "left alone") {
		t.Errorf("down of another lab's learner: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, other.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the namespace is gone: %v", err)
	}
	if _, _, err := c.Invite(ctx, "ada", time.Hour); !errors.Is(err, ErrNoLearner) {
		t.Errorf("an invite for another lab's learner: %v", err)
	}
	if err := c.RevokeInvites(ctx, "ada"); !errors.Is(err, ErrNoLearner) {
		t.Errorf("revoking the invites of another lab's learner: %v", err)
	}
}

// The learners' Pods run the checker, so capacity counts only the nodes of
// its architecture, and says how many nodes of others it left out.
func TestCapacityCountsNodesOfTheCheckersArch(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	node := func(name, label, reported string, unschedulable bool) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if label != "" {
			n.Labels[corev1.LabelArchStable] = label
		}
		n.Spec.Unschedulable = unschedulable
		n.Status.NodeInfo.Architecture = reported
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceMemory: kresource.MustParse("8Gi"), corev1.ResourceCPU: kresource.MustParse("4")}
		return n
	}
	for _, n := range []*corev1.Node{
		node("amd-1", "amd64", "amd64", false),
		node("arm-1", "arm64", "arm64", false),
		node("arm-2", "", "arm64", false), // no label: the kubelet's report
		node("amd-off", "amd64", "amd64", true),
	} {
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []struct{ name, node string }{{"on-amd", "amd-1"}, {"on-arm", "arm-1"}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: "other"}, Spec: corev1.PodSpec{NodeName: p.node,
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceMemory: kresource.MustParse("1Gi"), corev1.ResourceCPU: kresource.MustParse("1")}}}}}}
		if _, err := cs.CoreV1().Pods("other").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	c.arch = "amd64"
	got, err := c.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Nodes != 1 || got.FreeMemory != 7<<30 || got.FreeMilliCPU != 3000 || got.Arch != "amd64" || !maps.Equal(got.OtherArch, map[string]int{"arm64": 2}) {
		t.Errorf("capacity for an amd64 checker: %+v, want the one schedulable amd64 node less its Pod, and 2 arm64 nodes left out", got)
	}

	c.arch = "" // a checker that could not be read: every node counts
	if got, err := c.Capacity(ctx); err != nil || got.Nodes != 3 || got.OtherArch != nil {
		t.Errorf("capacity without an architecture: %+v, %v", got, err)
	}
}

// A node just made (not Ready, or tainted not-ready by the kubelet or a
// network add-on) gives no room yet, and is named; a cordoned one is not.
func TestCapacityNamesNodesNotReady(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	c.arch = "amd64"
	node := func(name string, ready, cordoned bool, taint string) {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelArchStable: "amd64"}}}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
		n.Spec.Unschedulable = cordoned
		if taint != "" {
			n.Spec.Taints = []corev1.Taint{{Key: taint, Effect: corev1.TaintEffectNoSchedule}}
		}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceMemory: kresource.MustParse("8Gi"), corev1.ResourceCPU: kresource.MustParse("4")}
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	node("new", false, false, corev1.TaintNodeNotReady)
	node("network", true, false, "labctl.dev/network-unready")
	node("cordoned", false, true, "")
	node("ok", true, false, "")
	got, err := c.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Nodes != 1 || !slices.Equal(got.NotReady, []string{"network", "new"}) {
		t.Errorf("capacity %+v: want 1 node, and network and new not Ready", got)
	}
}
