package provision

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// ensureLearnerAdminRole makes learnerAdminRole hold the rules the built-in
// admin ClusterRole grants. admin is an aggregated role: the controller
// manager fills its rules from the roles its selectors match, seconds after
// a new cluster answers, and a learner bound to it before then is refused
// everything. The API server creates the roles it aggregates when it
// starts, so labctl resolves the aggregation itself and the learner's
// access works the moment it is granted.
func ensureLearnerAdminRole(ctx context.Context, cs kubernetes.Interface, lbls map[string]string) error {
	list, err := cs.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("reading the cluster's roles: %w", err)
	}
	rules, err := aggregatedRules(list.Items, builtinAdminRole)
	if err != nil {
		return err
	}
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: learnerAdminRole, Labels: lbls}, Rules: rules}
	if err := apply(ctx, cs.RbacV1().ClusterRoles(), cr, func(cur *rbacv1.ClusterRole) { cur.Rules = rules; cur.Labels = lbls }); err != nil {
		return fmt.Errorf("granting the learner access: %w", err)
	}
	return nil
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
