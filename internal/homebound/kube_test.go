package homebound

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The sandbox Pod is stopped by an eviction of that Pod (its UID as the
// precondition, so a Pod made anew meanwhile is not the one evicted), and
// an Event on it says why; a Pod that is gone or ending does not run.
func TestPodSandboxEvictsAndSaysWhy(t *testing.T) {
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sandbox", Namespace: "ns", UID: "u1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	cs := fake.NewClientset(pod)
	var evicted []string
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		ev := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		if p := ev.DeleteOptions.Preconditions; p == nil || p.UID == nil || *p.UID != "u1" {
			t.Errorf("an eviction without the Pod's UID: %+v", ev.DeleteOptions)
		}
		evicted = append(evicted, ev.GetName())
		return true, nil, cs.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), "ns", ev.GetName())
	})
	s := PodSandbox{Client: cs, Namespace: "ns", Pod: "sandbox", Component: "test"}
	if ok, err := s.Running(ctx); !ok || err != nil {
		t.Fatalf("running: %v, %v", ok, err)
	}
	if err := s.Stop(ctx, "too big"); err != nil {
		t.Fatal(err)
	}
	if len(evicted) != 1 || evicted[0] != "sandbox" {
		t.Errorf("evicted %v", evicted)
	}
	evs, err := cs.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
	if err != nil || len(evs.Items) != 1 {
		t.Fatalf("events %+v, %v", evs, err)
	}
	if e := evs.Items[0]; e.Reason != EventReason || e.Message != "too big" || e.InvolvedObject.UID != "u1" || e.Type != corev1.EventTypeWarning {
		t.Errorf("event %+v", e)
	}
	if ok, err := s.Running(ctx); ok || err != nil {
		t.Errorf("running after the eviction: %v, %v", ok, err)
	}
	if err := s.Stop(ctx, "again"); err != nil {
		t.Errorf("stopping a sandbox that is gone: %v", err)
	}
	// A Pod that is ending may still write; one that has ended does not.
	ending := pod.DeepCopy()
	ending.DeletionTimestamp = &metav1.Time{}
	if ok, _ := (PodSandbox{Client: fake.NewClientset(ending), Namespace: "ns", Pod: "sandbox"}).Running(ctx); !ok {
		t.Error("a Pod that is ending does not run")
	}
	ended := pod.DeepCopy()
	ended.Status.Phase = corev1.PodSucceeded
	if ok, _ := (PodSandbox{Client: fake.NewClientset(ended), Namespace: "ns", Pod: "sandbox"}).Running(ctx); ok {
		t.Error("a Pod that has ended runs")
	}
}
