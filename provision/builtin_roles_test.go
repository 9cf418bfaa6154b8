package provision

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestWaitBuiltinRoles: setup fills an aggregated role itself when the
// roles it aggregates exist, waits while they hold nothing (here until the
// third read), and gives up, naming the roles, when they never do.
func TestWaitBuiltinRoles(t *testing.T) {
	agg := &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"x": "y"}}}}
	view := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "view"}, AggregationRule: agg}
	edit := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "edit"}, AggregationRule: agg,
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"get"}, Resources: []string{"pods"}}}}
	cs := fake.NewClientset(view, edit)
	reads := 0
	cs.PrependReactor("list", "clusterroles", func(k8stesting.Action) (bool, runtime.Object, error) {
		if reads++; reads == 3 {
			filled := view.DeepCopy()
			filled.Rules = edit.Rules
			if _, err := cs.Tracker().Get(rbacv1.SchemeGroupVersion.WithResource("clusterroles"), "", "view"); err == nil {
				_ = cs.Tracker().Update(rbacv1.SchemeGroupVersion.WithResource("clusterroles"), filled, "")
			}
		}
		return false, nil, nil
	})
	if err := WaitBuiltinRoles(context.Background(), cs, 10*time.Second); err != nil {
		t.Fatalf("WaitBuiltinRoles: %v", err)
	}
	if reads < 3 {
		t.Errorf("returned after %d reads, before view had rules", reads)
	}

	never := fake.NewClientset(view.DeepCopy())
	err := WaitBuiltinRoles(context.Background(), never, 600*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "the ClusterRoles view have no rules yet") {
		t.Errorf("a role never filled: %v, want it named", err)
	}

	// A role whose aggregated roles exist is filled at once, without
	// waiting for the controller manager.
	part := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "part", Labels: map[string]string{"x": "y"}},
		Rules: []rbacv1.PolicyRule{{Verbs: []string{"list"}, Resources: []string{"services"}}}}
	now := fake.NewClientset(view.DeepCopy(), part)
	start := time.Now()
	if err := WaitBuiltinRoles(context.Background(), now, 10*time.Second); err != nil {
		t.Fatalf("WaitBuiltinRoles with the parts present: %v", err)
	}
	if waited := time.Since(start); waited >= rolePoll {
		t.Errorf("waited %s for a role labctl can resolve itself", waited)
	}
	got, _ := now.RbacV1().ClusterRoles().Get(context.Background(), "view", metav1.GetOptions{})
	if len(got.Rules) != 1 || got.Rules[0].Resources[0] != "services" {
		t.Errorf("view's rules = %+v, want part's", got.Rules)
	}

	// A cluster without them (or whose roles aggregate nothing) is not waited for.
	if err := WaitBuiltinRoles(context.Background(), fake.NewClientset(), time.Second); err != nil {
		t.Errorf("no built-in roles: %v", err)
	}
}
