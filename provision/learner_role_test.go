package provision

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labctl/labctl/lab"
)

func clusterRoles(t *testing.T) []rbacv1.ClusterRole {
	t.Helper()
	list, err := fakeCluster().RbacV1().ClusterRoles().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// admin aggregates edit, which aggregates view: the learner gets the rules
// of all three, though no controller has filled admin's.
func TestAggregatedRulesFollowTheChain(t *testing.T) {
	rules, err := aggregatedRules(clusterRoles(t), "admin")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rules {
		got = append(got, strings.Join(r.Resources, ","))
	}
	slices.Sort(got)
	if strings.Join(got, " ") != "deployments pods rolebindings" {
		t.Errorf("admin's rules cover %q, want rolebindings, deployments and pods", got)
	}
	edit, err := aggregatedRules(clusterRoles(t), "edit")
	if err != nil || len(edit) != 2 {
		t.Errorf("edit's rules = %+v, %v; want deployments and pods", edit, err)
	}
}

func TestAggregatedRulesFailures(t *testing.T) {
	roles := clusterRoles(t)
	if _, err := aggregatedRules(roles, "cluster-owner"); err == nil || !strings.Contains(err.Error(), "no cluster-owner ClusterRole") {
		t.Errorf("a missing role: err = %v", err)
	}
	// A cycle ends; a role whose selectors match nothing grants nothing.
	loop := []rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"to": "b"}},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"to": "a"}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b", Labels: map[string]string{"to": "a"}},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"to": "b"}}}}},
	}
	if _, err := aggregatedRules(loop, "a"); err == nil || !strings.Contains(err.Error(), "grants nothing") {
		t.Errorf("a cycle of empty roles: err = %v", err)
	}
	bad := []rbacv1.ClusterRole{{ObjectMeta: metav1.ObjectMeta{Name: "a"}, AggregationRule: &rbacv1.AggregationRule{
		ClusterRoleSelectors: []metav1.LabelSelector{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Sometimes"}}}}}}}
	if _, err := aggregatedRules(bad, "a"); err == nil || !strings.Contains(err.Error(), "aggregation selector") {
		t.Errorf("a broken selector: err = %v", err)
	}
}

func TestEnsureDefaultServiceAccounts(t *testing.T) {
	ctx := context.Background()
	cs := fakeCluster()
	for _, ns := range []string{"a", "b"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// b's has not been made yet; a's is the controller's and stays so.
	if err := cs.CoreV1().ServiceAccounts("b").Delete(ctx, "default", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("a").Update(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: "a", Labels: map[string]string{"by": "controller"}}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := ensureDefaultServiceAccounts(ctx, cs, []string{"a", "b"}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := cs.CoreV1().ServiceAccounts("a").Get(ctx, "default", metav1.GetOptions{})
	if err != nil || a.Labels["by"] != "controller" {
		t.Errorf("a's default ServiceAccount = %+v, %v; want it left alone", a, err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("b").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("b's default ServiceAccount: %v", err)
	}
}

func TestWithoutNamespaceWrites(t *testing.T) {
	rule := func(groups, resources, verbs []string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: groups, Resources: resources, Verbs: verbs}
	}
	core, all := []string{""}, []string{"*"}
	rw := []string{"get", "list", "watch", "update", "patch"}
	for _, tc := range []struct {
		name string
		in   []rbacv1.PolicyRule
		want []rbacv1.PolicyRule
	}{{
		name: "reads of namespaces stay",
		in:   []rbacv1.PolicyRule{rule(core, []string{"namespaces"}, []string{"get", "list", "watch"})},
		want: []rbacv1.PolicyRule{rule(core, []string{"namespaces"}, []string{"get", "list", "watch"})},
	}, {
		name: "writes of namespaces go, other resources keep theirs",
		in:   []rbacv1.PolicyRule{rule(core, []string{"pods", "namespaces", "namespaces/status"}, rw)},
		want: []rbacv1.PolicyRule{
			rule(core, []string{"pods"}, rw),
			rule(core, []string{"namespaces", "namespaces/status"}, []string{"get", "list", "watch"}),
		},
	}, {
		name: "a rule writing only namespaces goes",
		in:   []rbacv1.PolicyRule{rule(all, []string{"namespaces"}, []string{"patch", "update"})},
		want: []rbacv1.PolicyRule{},
	}, {
		name: "a wildcard of the core group keeps its reads",
		in:   []rbacv1.PolicyRule{rule(core, all, []string{"*"}), rule(core, all, rw)},
		want: []rbacv1.PolicyRule{rule(core, all, []string{"get", "list", "watch"})},
	}, {
		name: "other groups are untouched",
		in:   []rbacv1.PolicyRule{rule([]string{"apps"}, all, []string{"*"})},
		want: []rbacv1.PolicyRule{rule([]string{"apps"}, all, []string{"*"})},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := withoutNamespaceWrites(tc.in)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if !slices.Equal(got[i].APIGroups, tc.want[i].APIGroups) || !slices.Equal(got[i].Resources, tc.want[i].Resources) ||
					!slices.Equal(got[i].Verbs, tc.want[i].Verbs) {
					t.Errorf("rule %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// The metrics and ingress add-ons start after the learner's copy of admin
// is made, so what they aggregate into admin (metrics.k8s.io reads, the
// Gateway API's namespaced objects) is added by name, and only for a lab
// that asks for them.
func TestLearnerAdminRoleFollowsTheAddons(t *testing.T) {
	ctx := context.Background()
	for _, addons := range [][]string{nil, {lab.AddonMetrics, lab.AddonIngress}} {
		cs := fakeCluster()
		l := &lab.Lab{Cluster: lab.Cluster{Addons: addons}}
		if err := ensureLearnerAdminRole(ctx, cs, l, nil); err != nil {
			t.Fatal(err)
		}
		cr, err := cs.RbacV1().ClusterRoles().Get(ctx, LearnerAdminRole, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		reads := slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, "metrics.k8s.io") && slices.Contains(r.Resources, "pods") && slices.Contains(r.Verbs, "list")
		})
		if want := len(addons) > 0; reads != want {
			t.Errorf("add-ons %v: the learner reads pod metrics = %v, want %v", addons, reads, want)
		}
		routes := slices.ContainsFunc(cr.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, "gateway.networking.k8s.io") && slices.Contains(r.Resources, "httproutes") && slices.Contains(r.Verbs, "create")
		})
		if want := len(addons) > 0; routes != want {
			t.Errorf("add-ons %v: the learner writes HTTPRoutes = %v, want %v", addons, routes, want)
		}
	}
}
