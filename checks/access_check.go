package checks

import (
	"context"
	"strings"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// AccessReviewer asks the API server whether an identity may do what an
// access check says (a SubjectAccessReview) and returns its answer.
type AccessReviewer interface {
	Review(ctx context.Context, a *lab.AccessCheck) (allowed bool, err error)
}

// checkAccess asks the API server, with the grader's credentials, whether
// a's identity may do what a says. The answer is the cluster's authorizers'
// (every Role, ClusterRole and binding, through users and groups), which
// nothing in the sandbox can write but RBAC objects themselves.
//
// pass: the answer is a.Allowed. fail: it is not. error: no credentials, the
// cluster unreachable or refusing the review.
func checkAccess(ctx context.Context, env Env, a *lab.AccessCheck) error {
	if a.Mark != "" {
		return checkMark(ctx, env, a)
	}
	reviewer, ok := env.Kube.(AccessReviewer)
	if env.Kube == nil || !ok {
		return errNoCluster
	}
	allowed, err := reviewer.Review(ctx, a)
	if err != nil {
		return err
	}
	want := a.Allowed != nil && *a.Allowed
	switch {
	case want && !allowed:
		return failf(msg.AccessExpectYes, canI(a))
	case !want && allowed:
		return failf(msg.AccessExpectNo, canI(a))
	}
	return nil
}

// accessReviewSpec is the spec of a's SubjectAccessReview. A service
// account carries the groups the API server gives its tokens, so that a
// binding to system:serviceaccounts:NS counts as it does for the account's
// own requests.
func accessReviewSpec(a *lab.AccessCheck) map[string]any {
	attrs := map[string]any{"verb": a.Verb, "group": a.Group, "resource": a.Resource}
	for k, v := range map[string]string{"subresource": a.Subresource, "namespace": a.Namespace, "name": a.Name} {
		if v != "" {
			attrs[k] = v
		}
	}
	user, groups := a.User, append([]string{}, a.Groups...)
	if ns, name, ok := strings.Cut(a.ServiceAccount, "/"); ok {
		user = "system:serviceaccount:" + ns + ":" + name
		groups = []string{"system:serviceaccounts", "system:serviceaccounts:" + ns}
	}
	groups = append(groups, "system:authenticated")
	gs := make([]any, len(groups))
	for i, g := range groups {
		gs[i] = g
	}
	return map[string]any{"user": user, "groups": gs, "resourceAttributes": attrs}
}

// canI writes the question as the kubectl command that asks it, e.g.
// "kubectl auth can-i get secrets -n shop --as=system:serviceaccount:ci:deployer".
func canI(a *lab.AccessCheck) string {
	res := a.Resource
	if a.Group != "" {
		res += "." + a.Group
	}
	if a.Name != "" {
		res += "/" + a.Name
	}
	parts := []string{"kubectl auth can-i", a.Verb, res}
	if a.Subresource != "" {
		parts = append(parts, "--subresource="+a.Subresource)
	}
	if a.Namespace != "" {
		parts = append(parts, "-n "+a.Namespace)
	} else {
		parts = append(parts, "-A")
	}
	if ns, name, ok := strings.Cut(a.ServiceAccount, "/"); ok {
		parts = append(parts, "--as=system:serviceaccount:"+ns+":"+name)
	} else {
		parts = append(parts, "--as="+a.User)
		for _, g := range a.Groups {
			parts = append(parts, "--as-group="+g)
		}
	}
	return strings.Join(parts, " ")
}
