package provision

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// graderGrant is one thing the grader may do: get a resource of an API
// group in Namespace (empty for a cluster-scoped resource) named Name, or,
// with Verb list (a check's selector) or create (an access check's review),
// do that on every object of the resource.
type graderGrant struct {
	Group     string
	Resource  string
	Namespace string
	Name      string
	// Verb is get (default, on Name), list or create.
	Verb string
}

// accessReviewGrant lets the grader ask the API server what an identity
// may do (a SubjectAccessReview): an answer about authorization, never an
// object's content.
var accessReviewGrant = graderGrant{Group: "authorization.k8s.io", Resource: "subjectaccessreviews", Verb: "create"}

// labGraderGrants is everything the lab's checks need of the grader: its
// reads (graderGrants), the access review when a check asks about an
// identity's access, and, for reach and matrix checks, Pods (made, listed,
// deleted, and for a matrix check's probers patched: the checks' own) and
// the namespaces they run in (their owner).
func labGraderGrants(ctx context.Context, disc resourceLister, l *lab.Lab) ([]graderGrant, error) {
	grants, err := graderGrants(ctx, disc, l.KubeReads())
	if err != nil {
		return nil, err
	}
	if l.AsksAccess() {
		grants = append(grants, accessReviewGrant)
	}
	for _, ns := range l.ReachNamespaces() {
		// The exec API's WebSocket is a get, its SPDY stream a create;
		// the check's Pods have names no rule can know ahead.
		grants = append(grants, graderGrant{Resource: "namespaces", Name: ns, Verb: "get"},
			graderGrant{Resource: "pods/exec", Namespace: ns, Verb: "create"},
			graderGrant{Resource: "pods/exec", Namespace: ns, Verb: "get", Name: anyName})
		for _, verb := range []string{"create", "list", "delete"} {
			grants = append(grants, graderGrant{Resource: "pods", Namespace: ns, Verb: verb})
		}
	}
	for _, ns := range l.MatrixNamespaces() {
		// A matrix check seals each prober it makes with the UID the API
		// server gave it (checks.ProbeMatrix).
		grants = append(grants, graderGrant{Resource: "pods", Namespace: ns, Verb: "patch"})
	}
	if len(l.ReachNamespaces()) > 0 {
		grants = append(grants, policyAgentGrants...)
	}
	slices.SortFunc(grants, compareGrants)
	return slices.Compact(grants), nil
}

// policyAgentGrants let a reach check find the network policy agent's
// Pods and read their count of syncs through the API server's proxy
// (checks.PolicyAgentNamespace). The proxy is granted on every Pod, since
// the agent's Pods have names no rule can know ahead; like every grant,
// it is the grader's alone.
var policyAgentGrants = []graderGrant{
	{Resource: "pods", Namespace: checks.PolicyAgentNamespace, Verb: "list"},
	{Resource: "pods/proxy", Namespace: checks.PolicyAgentNamespace, Verb: "get", Name: anyName},
}

// anyName, as a get grant's Name, grants get on every object of the
// resource.
const anyName = "*"

// resourceLister is the part of discovery that maps a kind to its resource.
type resourceLister interface {
	ServerResourcesForGroupVersionWithContext(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error)
}

// graderGrants maps every object the lab's checks read (lab.KubeReads) to
// the resource serving it, as the cluster's discovery says, the way the
// checker does. A kind the cluster does not serve yet (a CRD the learner
// installs later) gets the resource name Kubernetes derives from it
// (Widget: widgets) and is namespaced when the check names a namespace.
// The grants are sorted and each is given once.
func graderGrants(ctx context.Context, disc resourceLister, reads []lab.KubeRead) ([]graderGrant, error) {
	lists := map[string]*metav1.APIResourceList{}
	var out []graderGrant
	for _, r := range reads {
		gv, err := schema.ParseGroupVersion(r.APIVersion)
		if err != nil {
			return nil, fmt.Errorf("the lab reads %s: apiVersion %q: %w", r, r.APIVersion, err)
		}
		list, seen := lists[r.APIVersion]
		if !seen {
			list, err = disc.ServerResourcesForGroupVersionWithContext(ctx, r.APIVersion)
			if err != nil && !apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("finding the resource for %s %s: %w", r.APIVersion, r.Kind, err)
			}
			lists[r.APIVersion] = list
		}
		g := graderGrant{Group: gv.Group, Namespace: r.Namespace, Name: r.Name, Verb: "get"}
		if r.List {
			g.Verb = "list"
		}
		if res, ok := findKind(list, r.Kind); ok {
			g.Resource = res.Name
			if !res.Namespaced {
				g.Namespace = ""
			}
		} else {
			plural, _ := meta.UnsafeGuessKindToResource(gv.WithKind(r.Kind))
			g.Resource = plural.Resource
		}
		out = append(out, g)
	}
	slices.SortFunc(out, compareGrants)
	return slices.Compact(out), nil
}

func compareGrants(a, b graderGrant) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Verb, b.Verb), cmp.Compare(a.Name, b.Name))
}

// findKind returns the resource of list serving kind, not a subresource.
func findKind(list *metav1.APIResourceList, kind string) (metav1.APIResource, bool) {
	if list == nil {
		return metav1.APIResource{}, false
	}
	for _, r := range list.APIResources {
		if r.Kind == kind && !strings.Contains(r.Name, "/") {
			return r, true
		}
	}
	return metav1.APIResource{}, false
}

// graderPolicy turns grants into the rules of the grader's ClusterRole: get
// on exactly the named objects, one rule per resource, list on the
// resources a selector lists and create on the access reviews, sorted. The rules
// live in a ClusterRole bound by a ClusterRoleBinding, never in a Role of a
// lab namespace, where the learner is admin and could delete or rewrite
// them and turn every kube check into "could not run". A name granted in a
// ClusterRole matches in every namespace; the grader's token never leaves
// the grader container, and the names are the lab's own.
func graderPolicy(grants []graderGrant) []rbacv1.PolicyRule {
	type key struct{ group, resource, verb string }
	names := map[key][]string{}
	var keys []key
	for _, g := range grants {
		k := key{group: g.Group, resource: g.Resource, verb: cmp.Or(g.Verb, "get")}
		if _, ok := names[k]; !ok {
			keys = append(keys, k)
			names[k] = nil
		}
		if k.verb == "get" && !slices.Contains(names[k], g.Name) {
			names[k] = append(names[k], g.Name)
		}
	}
	for k, rn := range names {
		if slices.Contains(rn, anyName) {
			names[k] = nil
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.resource, b.resource), cmp.Compare(a.verb, b.verb))
	})
	rules := []rbacv1.PolicyRule{}
	for _, k := range keys {
		rn := names[k]
		slices.Sort(rn)
		rules = append(rules, rbacv1.PolicyRule{Verbs: []string{k.verb}, APIGroups: []string{k.group}, Resources: []string{k.resource}, ResourceNames: rn})
	}
	return rules
}

// grantGrader gives the grader account get on exactly the objects the lab's
// checks read (graderGrants) and nothing else, in a ClusterRole and a
// ClusterRoleBinding, which an admin of a lab namespace can neither change
// nor delete. The Roles and RoleBindings former versions gave the grader in
// lab namespaces are removed.
func grantGrader(ctx context.Context, cs kubernetes.Interface, grants []graderGrant, labels map[string]string) error {
	if err := ensureAccount(ctx, cs, GraderAccount, labels); err != nil {
		return err
	}
	rules := graderPolicy(grants)
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: GraderAccount, Namespace: SystemNamespace}}
	cr := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: GraderRole, Labels: labels}, Rules: rules}
	if err := apply(ctx, cs.RbacV1().ClusterRoles(), cr, func(cur *rbacv1.ClusterRole) {
		cur.Rules, cur.Labels, cur.AggregationRule = rules, labels, nil
	}); err != nil {
		return fmt.Errorf("granting the grader read access: %w", err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: GraderRole, Labels: labels},
		Subjects:   subjects,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: GraderRole},
	}
	if err := apply(ctx, cs.RbacV1().ClusterRoleBindings(), crb, func(cur *rbacv1.ClusterRoleBinding) { cur.Subjects = subjects }); err != nil {
		return fmt.Errorf("granting the grader read access: %w", err)
	}
	return removeStaleGraderRoles(ctx, cs, labels)
}

// removeStaleGraderRoles deletes the Roles and RoleBindings named for the
// grader that former versions made for this lab in its namespaces.
func removeStaleGraderRoles(ctx context.Context, cs kubernetes.Interface, labels map[string]string) error {
	sel := metav1.ListOptions{LabelSelector: sandbox.LabelLab + "=" + labels[sandbox.LabelLab]}
	roles, err := cs.RbacV1().Roles(metav1.NamespaceAll).List(ctx, sel)
	if err != nil {
		return fmt.Errorf("looking for the grader's former roles: %w", err)
	}
	for _, r := range roles.Items {
		if r.Name != GraderRole {
			continue
		}
		if err := cs.RbacV1().RoleBindings(r.Namespace).Delete(ctx, GraderRole, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("removing the grader's former access in %s: %w", r.Namespace, err)
		}
		if err := cs.RbacV1().Roles(r.Namespace).Delete(ctx, GraderRole, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("removing the grader's former access in %s: %w", r.Namespace, err)
		}
	}
	return nil
}
