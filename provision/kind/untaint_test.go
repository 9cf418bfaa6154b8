package kind

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestUntaintNodesRetriesAConflict: the kubelet writes its node while up
// removes the network-unready taint; the update that loses reads the node
// again and removes the taint, keeping the node's other taints.
func TestUntaintNodesRetriesAConflict(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{
		{Key: networkUnreadyTaint, Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule},
	}}}
	cs := fake.NewClientset(node)
	conflicts := 1
	cs.PrependReactor("update", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts > 0 {
			conflicts--
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, "w1", nil)
		}
		return false, nil, nil
	})
	if err := untaintNodes(context.Background(), cs); err != nil {
		t.Fatalf("untaintNodes: %v", err)
	}
	got, _ := cs.CoreV1().Nodes().Get(context.Background(), "w1", metav1.GetOptions{})
	if len(got.Spec.Taints) != 1 || got.Spec.Taints[0].Key != "dedicated" {
		t.Errorf("taints %v, want only dedicated left", got.Spec.Taints)
	}
}
