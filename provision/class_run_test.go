package provision

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func fakeClass(objs ...corev1.Pod) (*Class, *fake.Clientset) {
	o := testObjects()
	cs := fake.NewClientset()
	for i := range objs {
		_, _ = cs.CoreV1().Pods(objs[i].Namespace).Create(context.Background(), &objs[i], metav1.CreateOptions{})
	}
	return &Class{cfg: ClassConfig{Lab: o.lab, Prefix: "labctl-", SandboxImage: o.image}, cs: cs, cp: o.cp}, cs
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
	if _, err := c.Invite(ctx, "ada"); err == nil {
		t.Error("an invite for another lab's learner")
	}
}
