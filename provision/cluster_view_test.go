package provision

import (
	"context"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labctl/labctl/lab"
)

// ruleAllows says whether rules let a subject do verb on group's resource
// (with its subresource, "" for none), as RBAC matches them: a rule names
// "resource/subresource" for a subresource, "*" for any.
func ruleAllows(rules []rbacv1.PolicyRule, verb, group, resource string) bool {
	for _, r := range rules {
		if (slices.Contains(r.Verbs, verb) || slices.Contains(r.Verbs, "*")) &&
			(slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")) &&
			(slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")) {
			return true
		}
	}
	return false
}

// asked is one request of the learner's: verb on group's resource.
type asked struct{ verb, group, resource string }

func (a asked) String() string { return a.verb + " " + a.group + "/" + a.resource }

// What courses read first, which the learner's default view allows.
var courseReads = []asked{
	{"list", "", "nodes"}, {"get", "", "nodes"}, {"watch", "", "nodes"},
	{"list", "", "persistentvolumes"},
	{"list", "storage.k8s.io", "storageclasses"}, {"list", "storage.k8s.io", "csidrivers"}, {"list", "storage.k8s.io", "csinodes"},
	{"list", "networking.k8s.io", "ingressclasses"},
	{"list", "gateway.networking.k8s.io", "gatewayclasses"},
	{"list", "apiextensions.k8s.io", "customresourcedefinitions"},
	{"list", "node.k8s.io", "runtimeclasses"},
	{"list", "scheduling.k8s.io", "priorityclasses"},
	{"list", "metrics.k8s.io", "nodes"},
}

// What no view gives: secrets, what reaches a node's kubelet, and writes.
var neverViewed = []asked{
	{"list", "", "secrets"}, {"get", "", "secrets"}, {"list", "", "configmaps"},
	{"create", "", "serviceaccounts/token"}, {"list", "", "serviceaccounts"},
	{"get", "", "nodes/proxy"}, {"create", "", "nodes/proxy"}, {"get", "", "nodes/log"}, {"get", "", "nodes/stats"},
	{"update", "", "nodes/status"}, {"patch", "", "nodes/status"},
	{"update", "", "nodes"}, {"patch", "", "nodes"}, {"delete", "", "nodes"}, {"create", "", "nodes"},
	{"create", "", "persistentvolumes"}, {"delete", "storage.k8s.io", "storageclasses"},
	{"create", "apiextensions.k8s.io", "customresourcedefinitions"},
	{"list", "", "namespaces"}, {"list", "", "pods"},
	{"list", "metrics.k8s.io", "pods"},
}

func TestClusterViewRules(t *testing.T) {
	rules := clusterViewRules(testLab())
	for _, a := range courseReads {
		if !ruleAllows(rules, a.verb, a.group, a.resource) {
			t.Errorf("the default view refuses %s", a)
		}
	}
	for _, a := range neverViewed {
		if ruleAllows(rules, a.verb, a.group, a.resource) {
			t.Errorf("the default view allows %s", a)
		}
	}
	for _, r := range rules {
		if len(r.APIGroups) != 1 || !slices.Equal(r.Verbs, []string{"get", "list", "watch"}) || len(r.NonResourceURLs) > 0 || len(r.ResourceNames) > 0 {
			t.Errorf("rule %+v: want one group, get, list and watch", r)
		}
		for _, res := range r.Resources {
			if strings.Contains(res, "/") || res == "*" {
				t.Errorf("rule %+v names %q: a view names whole resources, never a subresource or all", r, res)
			}
		}
	}

	l := testLab()
	l.Access.ClusterView = lab.ClusterView{"storageclasses", "nodes"}
	rules = clusterViewRules(l)
	if !ruleAllows(rules, "list", "", "nodes") || !ruleAllows(rules, "list", "storage.k8s.io", "storageclasses") {
		t.Errorf("a view of nodes and storageclasses: %+v", rules)
	}
	for _, a := range []asked{{"list", "networking.k8s.io", "ingressclasses"}, {"list", "metrics.k8s.io", "nodes"}, {"list", "", "persistentvolumes"}} {
		if ruleAllows(rules, a.verb, a.group, a.resource) {
			t.Errorf("a view of nodes and storageclasses allows %s", a)
		}
	}
	l.Access.ClusterView = lab.ClusterView{lab.ClusterViewNone}
	if rules := clusterViewRules(l); len(rules) != 0 {
		t.Errorf("clusterView none gives %+v", rules)
	}
}

// SetupCluster binds the learner to the view cluster-wide, in either
// runtime (kind's up and a class's control planes both call it), and a lab
// narrowed to none takes both objects back.
func TestSetupClusterGrantsClusterView(t *testing.T) {
	cs := fakeCluster()
	ctx := context.Background()
	l := testLab()
	for range 2 { // idempotent
		if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
			t.Fatal(err)
		}
	}
	cr, err := cs.RbacV1().ClusterRoles().Get(ctx, "labctl-learner-view", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cr.Labels["dev.labctl.lab"] != "gitops" {
		t.Errorf("the view's labels: %v", cr.Labels)
	}
	for _, a := range courseReads {
		if !ruleAllows(cr.Rules, a.verb, a.group, a.resource) {
			t.Errorf("the learner's view refuses %s", a)
		}
	}
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, "labctl-learner-view", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "learner", Namespace: "labctl-system"}}
	if !slices.Equal(crb.Subjects, want) || crb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "labctl-learner-view"}) {
		t.Errorf("the view's binding: %+v -> %+v", crb.Subjects, crb.RoleRef)
	}

	l.Access.ClusterView = lab.ClusterView{"nodes"}
	if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
		t.Fatal(err)
	}
	cr, _ = cs.RbacV1().ClusterRoles().Get(ctx, "labctl-learner-view", metav1.GetOptions{})
	if len(cr.Rules) != 1 || !slices.Equal(cr.Rules[0].Resources, []string{"nodes"}) || cr.Rules[0].APIGroups[0] != "" {
		t.Errorf("a lab narrowed to nodes: %+v", cr.Rules)
	}

	l.Access.ClusterView = lab.ClusterView{lab.ClusterViewNone}
	if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, "labctl-learner-view", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("clusterView none left the binding: %v", err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, "labctl-learner-view", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("clusterView none left the role: %v", err)
	}
	// Again, with nothing to take back.
	if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
		t.Fatal(err)
	}
}
