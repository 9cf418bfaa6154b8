package provision

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/lab"
)

// ensureLearnerAdminRole makes LearnerAdminRole hold the rules the built-in
// admin ClusterRole grants. admin is an aggregated role: the controller
// manager fills its rules from the roles its selectors match, seconds after
// a new cluster answers, and a learner bound to it before then is refused
// everything. The API server creates the roles it aggregates when it
// starts, so labctl resolves the aggregation itself and the learner's
// access works the moment it is granted. Whatever a role aggregated into
// admin may add, the learner gets no write on namespaces: a namespace's
// labels hold its Pod Security level.
//
// The add-ons start after this copy is made, so what they aggregate into
// admin is added here by name: the metrics add-on's read of metrics.k8s.io
// (kubectl top pods), the ingress add-on's Gateway API objects.
func ensureLearnerAdminRole(ctx context.Context, cs kubernetes.Interface, l *lab.Lab, lbls map[string]string) error {
	var extra []rbacv1.PolicyRule
	if l.Cluster.HasAddon(lab.AddonMetrics) {
		extra = append(extra, metricsReadRule)
	}
	if l.Cluster.HasAddon(lab.AddonIngress) {
		extra = append(extra, gatewayWriteRule)
	}
	if err := ensureAdminCopy(ctx, cs, LearnerAdminRole, lbls, extra...); err != nil {
		return fmt.Errorf("granting the learner access: %w", err)
	}
	return nil
}

// ensureAdminCopy makes the ClusterRole name hold the rules of the built-in
// admin ClusterRole, resolved as ensureLearnerAdminRole says, without
// writes on namespaces.
func ensureAdminCopy(ctx context.Context, cs kubernetes.Interface, name string, lbls map[string]string, extra ...rbacv1.PolicyRule) error {
	list, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("reading the cluster's roles: %w", err)
	}
	rules, err := aggregatedRules(list.Items, builtinAdminRole)
	if err != nil {
		return err
	}
	rules = append(withoutNamespaceWrites(rules), extra...)
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}, Rules: rules}
	return apply(ctx, cs.RbacV1().ClusterRoles(), cr, func(cur *rbacv1.ClusterRole) { cur.Rules = rules; cur.Labels = lbls })
}

// metricsReadRule is what the metrics add-on's role aggregates into the
// built-in admin, edit and view roles.
var metricsReadRule = rbacv1.PolicyRule{
	APIGroups: []string{"metrics.k8s.io"},
	Resources: []string{"pods", "nodes"},
	Verbs:     []string{"get", "list", "watch"},
}

// gatewayWriteRule is what the ingress add-on's role aggregates into the
// built-in admin and edit roles: the Gateway API objects a namespace holds.
var gatewayWriteRule = rbacv1.PolicyRule{
	APIGroups: []string{"gateway.networking.k8s.io"},
	Resources: []string{"gateways", "httproutes", "referencegrants"},
	Verbs:     []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"},
}

// aggregatedRules returns the rules of the ClusterRole name among roles:
// for a role with an aggregation rule, those of every role its selectors
// match, resolved in turn; for any other, its own.
func aggregatedRules(roles []rbacv1.ClusterRole, name string) ([]rbacv1.PolicyRule, error) {
	byName := make(map[string]*rbacv1.ClusterRole, len(roles))
	for i := range roles {
		byName[roles[i].Name] = &roles[i]
	}
	root, ok := byName[name]
	if !ok {
		return nil, fmt.Errorf("the cluster has no %s ClusterRole to give the learner", name)
	}
	var (
		rules []rbacv1.PolicyRule
		seen  = map[string]bool{}
		add   func(*rbacv1.ClusterRole) error
	)
	add = func(cr *rbacv1.ClusterRole) error {
		if seen[cr.Name] {
			return nil
		}
		seen[cr.Name] = true
		if cr.AggregationRule == nil {
			rules = append(rules, cr.Rules...)
			return nil
		}
		for _, sel := range cr.AggregationRule.ClusterRoleSelectors {
			s, err := metav1.LabelSelectorAsSelector(&sel)
			if err != nil {
				return fmt.Errorf("ClusterRole %s: aggregation selector: %w", cr.Name, err)
			}
			for i := range roles {
				if s.Matches(labels.Set(roles[i].Labels)) {
					if err := add(&roles[i]); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := add(root); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("the cluster's %s ClusterRole grants nothing to give the learner", name)
	}
	return rules, nil
}

// withoutNamespaceWrites returns rules with every verb but get, list and
// watch taken away from the core group's namespaces (and their
// subresources). RBAC authorizes a write on namespace N against the roles
// bound in N, so a write on namespaces granted in a lab namespace would let
// the learner relabel it out of Pod Security. A rule that also covers other
// resources keeps them as it was; one whose resources are a wildcard keeps
// its reads only.
func withoutNamespaceWrites(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	read := []string{"get", "list", "watch"}
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	for _, r := range rules {
		core := slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, "*")
		writes := slices.ContainsFunc(r.Verbs, func(v string) bool { return !slices.Contains(read, v) })
		if !core || !writes || len(r.NonResourceURLs) > 0 {
			out = append(out, r)
			continue
		}
		if slices.Contains(r.Resources, "*") {
			r.Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(v string) bool { return !slices.Contains(read, v) })
			if len(r.Verbs) > 0 {
				out = append(out, r)
			}
			continue
		}
		isNS := func(res string) bool { return res == "namespaces" || strings.HasPrefix(res, "namespaces/") }
		ns := slices.DeleteFunc(slices.Clone(r.Resources), func(res string) bool { return !isNS(res) })
		if len(ns) == 0 {
			out = append(out, r)
			continue
		}
		rest := r.DeepCopy()
		rest.Resources = slices.DeleteFunc(slices.Clone(r.Resources), isNS)
		if len(rest.Resources) > 0 {
			out = append(out, *rest)
		}
		reads := slices.DeleteFunc(slices.Clone(r.Verbs), func(v string) bool { return !slices.Contains(read, v) })
		if len(reads) > 0 {
			nsRule := r.DeepCopy()
			nsRule.Resources, nsRule.Verbs = ns, reads
			out = append(out, *nsRule)
		}
	}
	return out
}

// builtinUserRoles are the user-facing ClusterRoles a lab's scripts and a
// learner bind (kubectl create rolebinding --clusterrole=view): aggregated
// roles the controller manager fills seconds after a new cluster answers.
var builtinUserRoles = []string{"admin", "edit", "view"}

// rolePoll is how often WaitBuiltinRoles reads the roles.
const rolePoll = 250 * time.Millisecond

// WaitBuiltinRoles makes sure each of builtinUserRoles that aggregates
// others has their rules, so that a binding a step's setup or the learner
// makes grants what it says from the start, and an access check's answer is
// the one the binding gives. The controller manager fills them seconds after
// a new cluster answers; rather than wait for it, a role still empty is
// given the rules of the roles it aggregates, resolved as the learner's
// copy of admin is (the controller manager later writes the same union).
// It waits, up to timeout, only while a role cannot be resolved yet. A new
// cluster's setup calls it once its other objects are in place.
func WaitBuiltinRoles(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		list, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
		if err == nil {
			var empty []string
			for _, cr := range list.Items {
				if !slices.Contains(builtinUserRoles, cr.Name) || cr.AggregationRule == nil || len(cr.Rules) > 0 {
					continue
				}
				if fillAggregated(ctx, cs, list.Items, cr) != nil {
					empty = append(empty, cr.Name)
				}
			}
			if len(empty) == 0 {
				return nil
			}
			err = fmt.Errorf("the ClusterRoles %s have no rules yet", strings.Join(empty, ", "))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the cluster's built-in roles (its controller manager fills them): %w", err)
		case <-time.After(rolePoll):
		}
	}
}

// fillAggregated writes into cr the rules of the roles it aggregates, as
// read in roles; an error when they hold none yet or the write loses.
func fillAggregated(ctx context.Context, cs kubernetes.Interface, roles []rbacv1.ClusterRole, cr rbacv1.ClusterRole) error {
	rules, err := aggregatedRules(roles, cr.Name)
	if err != nil {
		return err
	}
	if len(rules) == 0 {
		return fmt.Errorf("%s aggregates no rules yet", cr.Name)
	}
	cur := cr.DeepCopy()
	cur.Rules = rules
	_, err = cs.RbacV1().ClusterRoles().Update(ctx, cur, metav1.UpdateOptions{})
	return err
}

// clusterViewRules are the rules of the learner's reading of the cluster:
// get, list and watch of each kind of l's access.clusterView, one rule per
// API group. A rule may name a group the cluster does not serve (the
// Gateway API's without the ingress add-on): RBAC grants it, and it reads
// nothing until the group is served.
func clusterViewRules(l *lab.Lab) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	for _, k := range l.LearnerClusterView() {
		i := slices.IndexFunc(rules, func(r rbacv1.PolicyRule) bool { return r.APIGroups[0] == k.Group })
		if i < 0 {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{k.Group}, Verbs: []string{"get", "list", "watch"}})
			i = len(rules) - 1
		}
		rules[i].Resources = append(rules[i].Resources, k.Resource)
	}
	return rules
}

// grantClusterView gives the learner the ClusterRole LearnerViewRole of
// clusterViewRules, bound cluster-wide; for a lab whose view is none it
// deletes both, which an up of the lab before it changed may have made.
// The rules name resources, never subresources: nodes/proxy, nodes/log and
// nodes/status are not among them.
func grantClusterView(ctx context.Context, cs kubernetes.Interface, l *lab.Lab, lbls map[string]string) error {
	rules := clusterViewRules(l)
	if len(rules) == 0 {
		err := cs.RbacV1().ClusterRoleBindings().Delete(ctx, LearnerViewRole, metav1.DeleteOptions{})
		if err == nil || apierrors.IsNotFound(err) {
			err = cs.RbacV1().ClusterRoles().Delete(ctx, LearnerViewRole, metav1.DeleteOptions{})
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("taking back the learner's reading of the cluster: %w", err)
		}
		return nil
	}
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: LearnerViewRole, Labels: lbls}, Rules: rules}
	if err := apply(ctx, cs.RbacV1().ClusterRoles(), cr, func(cur *rbacv1.ClusterRole) { cur.Rules = rules; cur.Labels = lbls }); err != nil {
		return fmt.Errorf("letting the learner read the cluster: %w", err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: LearnerViewRole, Labels: lbls},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: LearnerAccount, Namespace: SystemNamespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: LearnerViewRole},
	}
	if err := apply(ctx, cs.RbacV1().ClusterRoleBindings(), crb, func(cur *rbacv1.ClusterRoleBinding) { cur.Subjects = crb.Subjects; cur.Labels = lbls }); err != nil {
		return fmt.Errorf("letting the learner read the cluster: %w", err)
	}
	return nil
}
