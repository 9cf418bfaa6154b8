package checks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labctl/labctl/lab"
)

// fakeRBAC holds Roles and bindings and answers access questions the way
// RBAC's authorizer does, from them: the API server of the unit tests.
type fakeRBAC struct {
	objects map[string][]map[string]any // kind (and namespace) -> objects
	asked   atomic.Int64
	failOn  string // a verb whose question fails
}

func newFakeRBAC() *fakeRBAC { return &fakeRBAC{objects: map[string][]map[string]any{}} }

func (f *fakeRBAC) List(_ context.Context, apiVersion, kind, namespace, _ string) ([]map[string]any, error) {
	if apiVersion != lab.RBACAPIVersion {
		return nil, fmt.Errorf("unexpected list of %s", apiVersion)
	}
	return f.objects[kind+"/"+namespace], nil
}

func (f *fakeRBAC) Get(context.Context, string, string, string, string) (map[string]any, error) {
	return nil, errors.New("no get")
}

// role adds a Role (namespace set) or ClusterRole with rules written
// "group|resource,resource|verb,verb|name,name".
func (f *fakeRBAC) role(namespace, name string, rules ...string) {
	var rs []any
	for _, r := range rules {
		parts := strings.Split(r, "|")
		rule := map[string]any{"apiGroups": list(parts[0]), "resources": list(parts[1]), "verbs": list(parts[2])}
		if len(parts) > 3 {
			rule["resourceNames"] = list(parts[3])
		}
		rs = append(rs, rule)
	}
	kind := "ClusterRole"
	if namespace != "" {
		kind = "Role"
	}
	f.objects[kind+"/"+namespace] = append(f.objects[kind+"/"+namespace],
		map[string]any{"metadata": map[string]any{"name": name, "namespace": namespace}, "rules": rs})
}

// bind adds a RoleBinding (namespace set) or ClusterRoleBinding of role
// (Role when roleKind is Role) to subjects written "ServiceAccount:ns/name",
// "User:name" or "Group:name".
func (f *fakeRBAC) bind(namespace, name, roleKind, role string, subjects ...string) {
	var ss []any
	for _, s := range subjects {
		kind, rest, _ := strings.Cut(s, ":")
		sub := map[string]any{"kind": kind, "name": rest}
		if ns, n, ok := strings.Cut(rest, "/"); ok && kind == "ServiceAccount" {
			sub["namespace"], sub["name"] = ns, n
		}
		ss = append(ss, sub)
	}
	kind := "ClusterRoleBinding"
	if namespace != "" {
		kind = "RoleBinding"
	}
	f.objects[kind+"/"+namespace] = append(f.objects[kind+"/"+namespace], map[string]any{
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"roleRef":  map[string]any{"kind": roleKind, "name": role}, "subjects": ss})
}

func list(s string) []any {
	var out []any
	for _, x := range strings.Split(s, ",") {
		out = append(out, x)
	}
	if s == "" {
		return []any{""}
	}
	return out
}

// Ask answers as RBAC does: allowed when a binding that takes in the
// identity (a RoleBinding in the question's namespace, or a
// ClusterRoleBinding) refers to a role with a rule that matches.
func (f *fakeRBAC) Ask(_ context.Context, q AccessQuestion) (AccessAnswer, error) {
	f.asked.Add(1)
	if q.Verb == f.failOn {
		return AccessAnswer{}, errors.New("the API server refused")
	}
	id := identity{User: q.User, Groups: q.Groups}
	o := &rbacObjects{roles: map[string]map[string]any{}, clusterRoles: map[string]map[string]any{}}
	for k, objs := range f.objects {
		for _, obj := range objs {
			switch {
			case strings.HasPrefix(k, "Role/"):
				o.roles[objectNamespace(obj)+"/"+objectName(obj)] = obj
			case strings.HasPrefix(k, "ClusterRole/"):
				o.clusterRoles[objectName(obj)] = obj
			}
		}
	}
	res := lab.Resource{Group: q.Group, Resource: q.Resource, Subresource: q.Subresource}
	for _, b := range slices.Concat(f.objects["RoleBinding/"+q.Namespace], f.objects["ClusterRoleBinding/"]) {
		if !slices.ContainsFunc(subjectsOf(b), id.member) {
			continue
		}
		role := o.roleOf(b)
		if role == nil {
			continue
		}
		rules, _ := role["rules"].([]any)
		for _, x := range rules {
			rule := x.(map[string]any)
			verbs, names := strings_(rule["verbs"]), strings_(rule["resourceNames"])
			if !ruleCovers(rule, res) || !(slices.Contains(verbs, "*") || slices.Contains(verbs, q.Verb)) {
				continue
			}
			if len(names) > 0 && !slices.Contains(names, q.Name) {
				continue
			}
			return AccessAnswer{Allowed: true, Reason: fmt.Sprintf("RBAC: allowed by binding %q of %q", objectName(b), objectName(role))}, nil
		}
	}
	return AccessAnswer{}, nil
}

// shopWorld is the rbac-ci lab's shop after its first step: Prometheus and
// the on-call group view shop, and labctl's learner is admin there.
func shopWorld() *fakeRBAC {
	f := newFakeRBAC()
	f.role("", "view", "|pods,configmaps|get,list,watch", "apps|deployments|get,list,watch")
	f.role("", "edit", "|pods,configmaps,secrets|get,list,watch,create,update,patch,delete", "apps|deployments|get,list,watch,create,update,patch,delete")
	f.role("", "admin", "*|*|*")
	f.bind("shop", "prometheus-view", "ClusterRole", "view", "ServiceAccount:monitoring/prometheus")
	f.bind("shop", "oncall-view", "ClusterRole", "view", "Group:shop-oncall")
	f.bind("shop", "labctl-learner", "ClusterRole", "admin", "ServiceAccount:labctl-system/learner")
	// A cluster-wide binding of the cluster's own, to a subject outside the lab.
	f.bind("", "system:controller", "ClusterRole", "admin", "User:system:kube-controller-manager")
	return f
}

// deployRights is the rbac-ci lab's statement of its second step.
func deployRights() *lab.PermissionsCheck {
	view := lab.Permission{Verbs: []string{"get", "list", "watch"}, Resources: []string{"pods", "configmaps", "deployments.apps"}, Namespaces: []string{"shop"}}
	return &lab.PermissionsCheck{
		Namespaces: []string{"shop", "ci"},
		Resources:  []string{"deployments.apps"},
		Subjects: []lab.PermissionSubject{
			{ServiceAccount: "ci/deployer",
				Must: []lab.Permission{{Verbs: []string{"get", "list", "watch", "patch"}, Resources: []string{"deployments.apps"}, Namespaces: []string{"shop"}, Names: []string{"web"}}},
				May:  []lab.Permission{{Verbs: []string{"get", "list", "watch", "patch", "update"}, Resources: []string{"deployments.apps"}, Namespaces: []string{"shop"}}}},
			{ServiceAccount: "ci/test-runner"},
			{ServiceAccount: "monitoring/prometheus", May: []lab.Permission{view}},
			{Group: "shop-oncall", May: []lab.Permission{view}},
		},
	}
}

func judge(t *testing.T, f *fakeRBAC, p *lab.PermissionsCheck) []string {
	t.Helper()
	fs, err := judgePermissions(context.Background(), f, f, p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range fs {
		out = append(out, x.text().String())
	}
	return out
}

func TestPermissionsRightAnswerPasses(t *testing.T) {
	f := shopWorld()
	f.role("shop", "ci-deployer", "apps|deployments|get,list,watch,patch")
	f.bind("shop", "ci-deployer", "Role", "ci-deployer", "ServiceAccount:ci/deployer")
	if got := judge(t, f, deployRights()); len(got) > 0 {
		t.Errorf("the right answer: %q", got)
	}
	// Limited to web, with update: still within what is stated.
	f = shopWorld()
	f.role("shop", "web-deployer", "apps|deployments|get,list,watch,patch,update|web")
	f.bind("shop", "web-deployer", "Role", "web-deployer", "ServiceAccount:ci/deployer")
	if got := judge(t, f, deployRights()); len(got) > 0 {
		t.Errorf("the answer limited to web: %q", got)
	}
}

// Each wrong answer is named by the subject, the verb, the resource, the
// object, the namespace and the binding that grants it.
func TestPermissionsWrongAnswersFail(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fakeRBAC)
		want  []string // each must be in some finding
	}{{
		name: "every verb, but only on web",
		setup: func(f *fakeRBAC) {
			f.role("shop", "ci-deployer", "apps|deployments|*|web")
			f.bind("shop", "ci-deployer", "Role", "ci-deployer", "ServiceAccount:ci/deployer")
		},
		want: []string{`ci/deployer may delete deployments.apps web in shop, which the lab does not allow (allowed by binding "ci-deployer" of "ci-deployer")`},
	}, {
		name: "the payment Secret by name",
		setup: func(f *fakeRBAC) {
			f.role("shop", "ci-deployer", "apps|deployments|get,list,watch,patch", "|secrets|get|payment-api")
			f.bind("shop", "ci-deployer", "Role", "ci-deployer", "ServiceAccount:ci/deployer")
		},
		want: []string{"ci/deployer may get secrets payment-api in shop"},
	}, {
		name: "bound to the group of ci's service accounts",
		setup: func(f *fakeRBAC) {
			f.role("shop", "ci-deployer", "apps|deployments|get,list,watch,patch")
			f.bind("shop", "ci-deployer", "Role", "ci-deployer", "Group:system:serviceaccounts:ci")
		},
		want: []string{"ci/test-runner may get deployments.apps in shop", "group system:serviceaccounts:ci may patch deployments.apps in shop"},
	}, {
		name: "view beside the deploy rights",
		setup: func(f *fakeRBAC) {
			f.role("shop", "ci-deployer", "apps|deployments|get,list,watch,patch")
			f.bind("shop", "ci-deployer", "Role", "ci-deployer", "ServiceAccount:ci/deployer")
			f.bind("shop", "ci-deployer-view", "ClusterRole", "view", "ServiceAccount:ci/deployer")
		},
		want: []string{"ci/deployer may get configmaps in shop", "ci/deployer may list pods in shop"},
	}, {
		name: "a service account bound that the lab does not name",
		setup: func(f *fakeRBAC) {
			f.role("shop", "ci-deployer", "apps|deployments|get,list,watch,patch")
			f.bind("shop", "ci-deployer", "Role", "ci-deployer", "ServiceAccount:ci/deployer", "ServiceAccount:shop/deployer")
		},
		want: []string{"shop/deployer may patch deployments.apps in shop"},
	}, {
		name: "a cluster-wide binding of a lab service account",
		setup: func(f *fakeRBAC) {
			f.role("shop", "ci-deployer", "apps|deployments|get,list,watch,patch")
			f.bind("shop", "ci-deployer", "Role", "ci-deployer", "ServiceAccount:ci/deployer")
			f.bind("", "ci-edit", "ClusterRole", "edit", "ServiceAccount:ci/builder")
		},
		want: []string{"ci/builder may get secrets in ci", "ci/builder may delete deployments.apps in shop"},
	}, {
		name: "short of the deploy rights",
		setup: func(f *fakeRBAC) {
			f.role("shop", "ci-deployer", "apps|deployments|get,patch")
			f.bind("shop", "ci-deployer", "Role", "ci-deployer", "ServiceAccount:ci/deployer")
		},
		want: []string{"ci/deployer may not list deployments.apps web in shop, which the lab requires", "ci/deployer may not watch deployments.apps web in shop"},
	}, {
		name: "the deploy rights in the wrong namespace",
		setup: func(f *fakeRBAC) {
			f.role("ci", "ci-deployer", "apps|deployments|get,list,watch,patch")
			f.bind("ci", "ci-deployer", "Role", "ci-deployer", "ServiceAccount:ci/deployer")
		},
		want: []string{"ci/deployer may patch deployments.apps in ci", "ci/deployer may not patch deployments.apps web in shop"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := shopWorld()
			tc.setup(f)
			got := judge(t, f, deployRights())
			for _, w := range tc.want {
				if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
					t.Errorf("no finding says %q; findings:\n%s", w, strings.Join(got, "\n"))
				}
			}
			for _, g := range got {
				if strings.Contains(g, " create deployments.apps web") {
					t.Errorf("a create naming an object, which no request makes: %s", g)
				}
				if strings.Contains(g, "labctl-system") || strings.Contains(g, "kube-controller-manager") {
					t.Errorf("finding about labctl's or the cluster's own subject: %s", g)
				}
			}
		})
	}
}

// A named object's finding is left out where the question naming none
// already says it: delete on every Deployment is one finding, not one
// per name a rule names.
func TestPermissionsNamedFindingsFoldIntoUnnamed(t *testing.T) {
	f := shopWorld()
	f.role("shop", "ci-deployer", "apps|deployments|get,list,watch,patch,delete", "apps|deployments|get|web")
	f.bind("shop", "ci-deployer", "Role", "ci-deployer", "ServiceAccount:ci/deployer")
	got := judge(t, f, deployRights())
	n := 0
	for _, g := range got {
		if strings.Contains(g, "ci/deployer may delete deployments.apps") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("delete on every Deployment found %d times: %q", n, got)
	}
}

// A question the API server refuses makes the check an error, not a pass.
func TestPermissionsErrorStopsTheCheck(t *testing.T) {
	f := shopWorld()
	f.failOn = "watch"
	if _, err := judgePermissions(context.Background(), f, f, deployRights()); err == nil {
		t.Fatal("a refused question passed")
	}
}

// The check's failure message names the findings and counts the rest.
func TestPermissionsCheckMessage(t *testing.T) {
	f := shopWorld()
	f.bind("shop", "ci-deployer", "ClusterRole", "edit", "ServiceAccount:ci/deployer")
	err := checkPermissions(context.Background(), Env{Kube: f}, deployRights())
	st, text := outcome(err)
	if st != Fail || !strings.Contains(text, "ci/deployer may") || !strings.Contains(text, "more") {
		t.Errorf("got %s %q", st, text)
	}
	if err := checkPermissions(context.Background(), Env{}, deployRights()); !errors.Is(err, errNoCluster) {
		t.Errorf("no cluster: %v", err)
	}
}
