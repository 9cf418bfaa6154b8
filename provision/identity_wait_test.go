package provision

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestWaitAggregatedWaitsForTheControllerToFillRules(t *testing.T) {
	cs := fake.NewSimpleClientset(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin"}})
	filled := make(chan struct{})
	go func() {
		time.Sleep(300 * time.Millisecond)
		cr, _ := cs.RbacV1().ClusterRoles().Get(context.Background(), "admin", metav1.GetOptions{})
		cr.Rules = []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}
		cs.RbacV1().ClusterRoles().Update(context.Background(), cr, metav1.UpdateOptions{})
		close(filled)
	}()
	if err := waitAggregated(context.Background(), cs, "admin"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-filled:
	default:
		t.Fatal("waitAggregated returned before the rules were filled")
	}
}

func TestWaitAggregatedGivesUpWithAMessage(t *testing.T) {
	cs := fake.NewSimpleClientset(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin"}})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := waitAggregated(ctx, cs, "admin")
	if err == nil || !strings.Contains(err.Error(), "admin ClusterRole still has no rules") {
		t.Fatalf("err = %v, want a message naming the empty ClusterRole", err)
	}
}
