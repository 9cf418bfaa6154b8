package checks

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/labctl/labctl/lab"
)

// shopCluster holds three Deployments in shop (web and api of the app
// shop, a legacy one without labels) and one in ci, and answers access
// reviews: only system:serviceaccount:ci:deployer may patch deployments
// in shop, and the group system:serviceaccounts:monitoring may list pods.
func shopCluster(t *testing.T) (*kubeReader, *[]map[string]any) {
	t.Helper()
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "apps", Version: "v1"}, {Version: "v1"}})
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Node"}, meta.RESTScopeRoot)
	deploy := func(ns, name string, labels map[string]any, image string) runtime.Object {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": name, "namespace": ns, "labels": labels},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": name, "image": image},
			}}}},
		}}
	}
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(),
		deploy("shop", "web", map[string]any{"app": "shop", "tier": "front"}, "web:2"),
		deploy("shop", "api", map[string]any{"app": "shop", "tier": "back"}, "api:1"),
		deploy("shop", "legacy", nil, "legacy:latest"),
		deploy("ci", "runner", map[string]any{"app": "ci"}, "runner:1"),
	)
	var reviews []map[string]any
	client.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		obj := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured)
		spec, _ := obj.Object["spec"].(map[string]any)
		reviews = append(reviews, spec)
		attrs, _ := spec["resourceAttributes"].(map[string]any)
		groups, _ := spec["groups"].([]any)
		allowed := spec["user"] == "system:serviceaccount:ci:deployer" && attrs["verb"] == "patch" &&
			attrs["group"] == "apps" && attrs["resource"] == "deployments" && attrs["namespace"] == "shop"
		for _, g := range groups {
			if g == "system:serviceaccounts:monitoring" && attrs["verb"] == "list" && attrs["resource"] == "pods" {
				allowed = true
			}
		}
		out := obj.DeepCopy()
		out.Object["status"] = map[string]any{"allowed": allowed}
		return true, out, nil
	})
	return newKubeReader(meta.ToRESTMapperWithContext(m), client), &reviews
}

func TestKubeCheckSelector(t *testing.T) {
	reader, _ := shopCluster(t)
	env := Env{Root: "/", Kube: reader}
	sel := func(ns, selector string, kc lab.KubeCheck) lab.Check {
		kc.APIVersion, kc.Kind, kc.Namespace, kc.Selector = "apps/v1", "Deployment", ns, &selector
		return lab.Check{Kube: &kc}
	}
	field := func(path string, a lab.Assert) *lab.FieldAssert { return &lab.FieldAssert{Path: path, Assert: a} }
	tests := []struct {
		name   string
		env    Env
		check  lab.Check
		status Status
		msg    string
	}{
		{"some match", env, sel("shop", "app=shop", lab.KubeCheck{}), Pass, ""},
		{"none match", env, sel("shop", "app=cart", lab.KubeCheck{}), Fail, `expected every apps/v1 Deployment in shop matching "app=cart": at least 1, found 0`},
		{"count exact", env, sel("shop", "app=shop", lab.KubeCheck{Count: &lab.Range{Min: intp(2), Max: intp(2)}}), Pass, ""},
		{"count too many", env, sel("shop", "", lab.KubeCheck{Count: &lab.Range{Max: intp(2)}}), Fail, "expected every apps/v1 Deployment in shop: at most 2, found 3 (shop/api, shop/legacy, shop/web)"},
		{"none wanted", env, sel("shop", "tier=db", lab.KubeCheck{Count: &lab.Range{Max: intp(0)}}), Pass, ""},
		{"set-based selector", env, sel("shop", "tier in (front,back),!legacy", lab.KubeCheck{Count: &lab.Range{Min: intp(2), Max: intp(2)}}), Pass, ""},
		{"every namespace", env, sel("", "app", lab.KubeCheck{Count: &lab.Range{Min: intp(3), Max: intp(3)}}), Pass, ""},
		{"labels on each", env, sel("shop", "app=shop", lab.KubeCheck{Labels: map[string]string{"tier": "front"}}), Fail, "expected label tier=front on apps/v1 Deployment shop/api, found tier=back"},
		{"field in each", env, sel("shop", "", lab.KubeCheck{Field: field("spec.template.spec.containers[*].image", lab.Assert{NotMatches: `:latest$`})}), Fail,
			`expected spec.template.spec.containers[0].image not to match ":latest$" in apps/v1 Deployment shop/legacy, found "legacy:latest"`},
		{"field in all together", env, sel("shop", "", lab.KubeCheck{Field: field("metadata.labels.tier", lab.Assert{Matches: `^(front|back)$`})}), Pass, ""},
		{"field absent from all", env, sel("shop", "", lab.KubeCheck{Field: field("metadata.labels.owner", lab.Assert{Exists: boolp(false)})}), Pass, ""},
		{"field absent but in one", env, sel("shop", "", lab.KubeCheck{Field: field("metadata.labels.tier", lab.Assert{Exists: boolp(false)})}), Fail,
			`expected metadata.labels.tier to be absent in apps/v1 Deployment shop/api, found "back"`},
		{"field found in none", env, sel("shop", "", lab.KubeCheck{Field: field("spec.paused", lab.Assert{Equals: lit(true)})}), Fail, "spec.paused not found in every apps/v1 Deployment in shop"},
		{"kind not served", env, lab.Check{Kube: &lab.KubeCheck{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "shop", Selector: new(string)}}, Fail, `expected every example.com/v1 Widget in shop: at least 1, found 0`},
		{"no credentials", Env{Root: "/"}, sel("shop", "", lab.KubeCheck{}), Error, "no cluster credentials were given to the checker"},
		{"a reader that cannot list", Env{Root: "/", Kube: brokenCluster{errors.New("x")}}, sel("shop", "", lab.KubeCheck{}), Error, "no cluster credentials were given to the checker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, runCheck(t, tt.env, tt.check), tt.status, tt.msg)
		})
	}
}

func TestAccessCheck(t *testing.T) {
	reader, reviews := shopCluster(t)
	env := Env{Root: "/", Kube: reader}
	access := func(a lab.AccessCheck, allowed bool) lab.Check {
		a.Allowed = &allowed
		return lab.Check{Access: &a}
	}
	patch := lab.AccessCheck{ServiceAccount: "ci/deployer", Verb: "patch", Group: "apps", Resource: "deployments", Namespace: "shop"}
	secrets := lab.AccessCheck{ServiceAccount: "ci/deployer", Verb: "get", Resource: "secrets", Namespace: "shop"}
	tests := []struct {
		name   string
		env    Env
		check  lab.Check
		status Status
		msg    string
	}{
		{"may, as wanted", env, access(patch, true), Pass, ""},
		{"may, not wanted", env, access(patch, false), Fail, "expected kubectl auth can-i patch deployments.apps -n shop --as=system:serviceaccount:ci:deployer to answer no; the API server answers yes"},
		{"may not, as wanted", env, access(secrets, false), Pass, ""},
		{"may not, not wanted", env, access(secrets, true), Fail, "expected kubectl auth can-i get secrets -n shop --as=system:serviceaccount:ci:deployer to answer yes; the API server answers no"},
		{"through a group of the account", env, access(lab.AccessCheck{ServiceAccount: "monitoring/prometheus", Verb: "list", Resource: "pods", Namespace: "shop"}, true), Pass, ""},
		{"a user without the group", env, access(lab.AccessCheck{User: "alice", Verb: "list", Resource: "pods", Namespace: "shop"}, true), Fail,
			"expected kubectl auth can-i list pods -n shop --as=alice to answer yes; the API server answers no"},
		{"a user in the group", env, access(lab.AccessCheck{User: "alice", Groups: []string{"system:serviceaccounts:monitoring"}, Verb: "list", Resource: "pods", Namespace: "shop"}, true), Pass, ""},
		{"cluster-wide subresource", env, access(lab.AccessCheck{User: "bob", Verb: "update", Group: "apps", Resource: "deployments", Subresource: "scale", Name: "web"}, true), Fail,
			"expected kubectl auth can-i update deployments.apps/web --subresource=scale -A --as=bob to answer yes; the API server answers no"},
		{"no credentials", Env{Root: "/"}, access(patch, true), Error, "no cluster credentials were given to the checker"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, runCheck(t, tt.env, tt.check), tt.status, tt.msg)
		})
	}
	// The review of a service account carries the groups its tokens have.
	first := (*reviews)[0]
	want := []any{"system:serviceaccounts", "system:serviceaccounts:ci", "system:authenticated"}
	if got, _ := first["groups"].([]any); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("groups of ci/deployer's review = %v, want %v", got, want)
	}
}

// TestAccessCheckRefused: a review the API server refuses (the grader not
// allowed to ask) is an error, never a pass of "may not".
func TestAccessCheckRefused(t *testing.T) {
	reader, _ := shopCluster(t)
	reader.client.(*dynamicfake.FakeDynamicClient).PrependReactor("create", "subjectaccessreviews", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New(`subjectaccessreviews.authorization.k8s.io is forbidden: User "system:serviceaccount:labctl-system:labctl-grader" cannot create resource "subjectaccessreviews"`)
	})
	no := false
	c := lab.Check{Access: &lab.AccessCheck{ServiceAccount: "ci/deployer", Verb: "get", Resource: "secrets", Namespace: "shop", Allowed: &no}}
	got := runCheck(t, Env{Root: "/", Kube: reader}, c)
	if got.Status != Error {
		t.Errorf("a refused review: %s %q, want an error", got.Status, got.Message)
	}
}
