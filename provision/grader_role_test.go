package provision

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/labctl/labctl/lab"
)

// discoveryResources is what a cluster's discovery says of the kinds the
// tests read.
var discoveryResources = []*metav1.APIResourceList{
	{GroupVersion: "v1", APIResources: []metav1.APIResource{
		{Name: "configmaps", Namespaced: true, Kind: "ConfigMap"},
		{Name: "namespaces", Namespaced: false, Kind: "Namespace"},
		{Name: "namespaces/status", Namespaced: false, Kind: "Namespace"},
		{Name: "services", Namespaced: true, Kind: "Service"},
		{Name: "services/proxy", Namespaced: true, Kind: "ServiceProxyOptions"},
	}},
	{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
		{Name: "deployments/scale", Namespaced: true, Kind: "Scale"},
		{Name: "deployments", Namespaced: true, Kind: "Deployment"},
	}},
}

// readingLab is testLab with kube checks and references reading objects of
// its namespaces, a cluster-scoped one, one in a namespace that does not
// exist, and one of a kind the cluster does not serve yet.
func readingLab(t *testing.T) *lab.Lab {
	t.Helper()
	src := `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata: {name: gitops}
cluster: {namespaces: [gitops-lab, argo]}
steps:
  - id: s
    title: S
    instructions: I
    solve: "true"
    checks:
      - name: deploy
        kube:
          apiVersion: apps/v1
          kind: Deployment
          namespace: gitops-lab
          name: web
          field: {path: spec.replicas, equals: {ref: 'kube:v1/ConfigMap/gitops-lab/settings#data.replicas'}}
      - name: svc
        kube: {apiVersion: v1, kind: Service, namespace: gitops-lab, name: web}
      - name: other-svc
        kube: {apiVersion: v1, kind: Service, namespace: gitops-lab, name: api}
      - name: ns
        kube: {apiVersion: v1, kind: Namespace, namespace: gitops-lab, name: argo}
      - name: elsewhere
        kube: {apiVersion: v1, kind: ConfigMap, namespace: staging, name: settings}
      - name: crd
        kube: {apiVersion: example.com/v1, kind: Widget, namespace: argo, name: w}
`
	l, err := lab.Parse("lab.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func grantStrings(gs []graderGrant) []string {
	var out []string
	for _, g := range gs {
		out = append(out, fmt.Sprintf("%s|%s|%s|%s", g.Namespace, g.Group, g.Resource, g.Name))
	}
	return out
}

func TestGraderGrants(t *testing.T) {
	cs := fake.NewClientset()
	cs.Fake.Resources = discoveryResources
	grants, err := graderGrants(context.Background(), cs.Discovery(), readingLab(t).KubeReads())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"||namespaces|argo", // cluster-scoped: the namespace written is ignored, as the checker does
		"argo|example.com|widgets|w",
		"gitops-lab||configmaps|settings",
		"gitops-lab||services|api",
		"gitops-lab||services|web",
		"gitops-lab|apps|deployments|web",
		"staging||configmaps|settings",
	}
	if got := grantStrings(grants); !slices.Equal(got, want) {
		t.Errorf("grants:\n got %q\nwant %q", got, want)
	}
}

func TestGraderGrantsDiscoveryFails(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("get", "resource", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("the API server is starting")
	})
	_, err := graderGrants(context.Background(), cs.Discovery(), readingLab(t).KubeReads())
	if err == nil || !strings.Contains(err.Error(), "finding the resource for") {
		t.Fatalf("err = %v, want the failed discovery named", err)
	}
}

func TestGraderPolicy(t *testing.T) {
	grants := []graderGrant{
		{Resource: "namespaces", Name: "argo"},
		{Group: "apps", Resource: "deployments", Namespace: "gitops-lab", Name: "web"},
		{Resource: "services", Namespace: "gitops-lab", Name: "web"},
		{Resource: "services", Namespace: "gitops-lab", Name: "api"},
		{Resource: "configmaps", Namespace: "staging", Name: "settings"},
		{Resource: "configmaps", Namespace: "later", Name: "flags"},
	}
	rules := graderPolicy(grants)
	var got []string
	for _, r := range rules {
		got = append(got, fmt.Sprintf("%v %v %v %v", r.Verbs, r.APIGroups, r.Resources, r.ResourceNames))
		if len(r.ResourceNames) == 0 || !slices.Equal(r.Verbs, []string{"get"}) {
			t.Errorf("rule %+v is wider than get on named objects", r)
		}
	}
	want := []string{
		"[get] [] [configmaps] [flags settings]",
		"[get] [] [namespaces] [argo]",
		"[get] [] [services] [api web]",
		"[get] [apps] [deployments] [web]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n got %q\nwant %q", got, want)
	}
	if rules := graderPolicy(nil); len(rules) != 0 {
		t.Errorf("a lab reading nothing grants %v", rules)
	}
}

// TestGrantGraderOutsideLabNamespaces: the grader's grants are a
// ClusterRole and a ClusterRoleBinding only, none of them in a lab
// namespace, where the learner is admin and could delete them; the Role and
// RoleBinding a former version left in a lab namespace are removed, and a
// lab's other Roles are left alone.
func TestGrantGraderOutsideLabNamespaces(t *testing.T) {
	ctx := context.Background()
	labels := map[string]string{"dev.labctl.lab": "gitops"}
	stale := []runtime.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gitops-lab"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: GraderRole, Namespace: "gitops-lab", Labels: labels}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: GraderRole, Namespace: "gitops-lab", Labels: labels}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: learnerRole, Namespace: "gitops-lab", Labels: labels}},
	}
	cs := fake.NewClientset(stale...)
	grants := []graderGrant{{Group: "apps", Resource: "deployments", Namespace: "gitops-lab", Name: "web"}}
	if err := grantGrader(ctx, cs, grants, labels); err != nil {
		t.Fatal(err)
	}
	roles, _ := cs.RbacV1().Roles("gitops-lab").List(ctx, metav1.ListOptions{})
	var names []string
	for _, r := range roles.Items {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{learnerRole}) {
		t.Errorf("roles in gitops-lab: %v, want only the learner's", names)
	}
	if _, err := cs.RbacV1().RoleBindings("gitops-lab").Get(ctx, GraderRole, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the grader's former binding in gitops-lab is still there: %v", err)
	}
	cr, err := cs.RbacV1().ClusterRoles().Get(ctx, GraderRole, metav1.GetOptions{})
	if err != nil || len(cr.Rules) != 1 || !slices.Equal(cr.Rules[0].ResourceNames, []string{"web"}) ||
		!slices.Equal(cr.Rules[0].Resources, []string{"deployments"}) {
		t.Fatalf("the grader's cluster role = %+v, %v; want get on deployments web only", cr, err)
	}
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, GraderRole, metav1.GetOptions{})
	if err != nil || crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != GraderRole || len(crb.Subjects) != 1 ||
		crb.Subjects[0].Name != GraderAccount || crb.Subjects[0].Namespace != SystemNamespace {
		t.Fatalf("the grader's cluster role binding = %+v, %v", crb, err)
	}
}

// TestSetupClusterGrader: up gives the grader get on exactly what the lab
// reads, by name, in a ClusterRole (no Role in a lab namespace, where the
// learner is admin), and no Secrets; a later lab file that reads less takes
// the rest away.
func TestSetupClusterGrader(t *testing.T) {
	cs := fakeCluster()
	cs.Fake.Resources = discoveryResources
	ctx := context.Background()
	l := readingLab(t)
	for range 2 {
		if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range l.Cluster.Namespaces {
		if _, err := cs.RbacV1().Roles(ns).Get(ctx, GraderRole, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the grader has a Role in %s, where the learner is admin: %v", ns, err)
		}
		if _, err := cs.RbacV1().RoleBindings(ns).Get(ctx, GraderRole, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the grader has a RoleBinding in %s, where the learner is admin: %v", ns, err)
		}
	}
	rules := func() []string {
		cr, err := cs.RbacV1().ClusterRoles().Get(ctx, GraderRole, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range cr.Rules {
			if len(r.ResourceNames) == 0 || !slices.Equal(r.Verbs, []string{"get"}) {
				t.Errorf("cluster rule %+v is wider than get on named objects", r)
			}
			if slices.Contains(r.Resources, "secrets") || slices.Contains(r.Resources, "*") {
				t.Errorf("the grader may read %v", r.Resources)
			}
			out = append(out, fmt.Sprintf("%s/%s %v", r.APIGroups[0], r.Resources[0], r.ResourceNames))
		}
		return out
	}
	want := []string{"/configmaps [settings]", "/namespaces [argo]", "/services [api web]",
		"apps/deployments [web]", "example.com/widgets [w]"}
	if got := rules(); !slices.Equal(got, want) {
		t.Errorf("the grader's cluster rules:\n got %q\nwant %q", got, want)
	}
	// The lab now reads only web and the ConfigMap its reference names.
	l.Steps[0].Checks = l.Steps[0].Checks[:1]
	if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
		t.Fatal(err)
	}
	if got, want := rules(), []string{"/configmaps [settings]", "apps/deployments [web]"}; !slices.Equal(got, want) {
		t.Errorf("the grader's cluster rules after the lab reads less:\n got %q\nwant %q", got, want)
	}
}

// A lab that was never given its defaults (lab.Default) has no Pod Security
// level: its namespaces are not made without one, and neither reset makes
// them again.
func TestNamespacesRefuseALabWithoutItsDefaults(t *testing.T) {
	l := &lab.Lab{Metadata: lab.Metadata{Name: "gitops"}}
	l.Cluster.Namespaces = []string{"gitops-lab"}
	want := "lab gitops has no Pod Security level (cluster.podSecurity)"
	if _, _, err := SetupCluster(context.Background(), fakeCluster(), []byte("CA"), l); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("SetupCluster: %v, want %s", err, want)
	}
	r, _, _ := resetFixture(t)
	r.lab = l
	if err := r.run(context.Background()); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("reset: %v, want %s", err, want)
	}
}

// TestSetupClusterSecurity: the lab's namespaces enforce their Pod Security
// level, and kind's bootstrap tokens are gone, other Secrets kept.
func TestSetupClusterSecurity(t *testing.T) {
	for _, level := range []string{"", lab.PodSecurityRestricted} {
		cs := fakeCluster()
		ctx := context.Background()
		for _, s := range []*corev1.Secret{
			{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-abcdef", Namespace: "kube-system"}, Type: bootstrapTokenType},
			{ObjectMeta: metav1.ObjectMeta{Name: "keep", Namespace: "kube-system"}, Type: corev1.SecretTypeOpaque},
		} {
			if _, err := cs.CoreV1().Secrets("kube-system").Create(ctx, s, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		l := &lab.Lab{Metadata: lab.Metadata{Name: "gitops"}}
		l.Cluster.Namespaces = []string{"gitops-lab", "argo"}
		l.Cluster.PodSecurity = level
		l.Default()
		// A namespace the learner's earlier work left without the labels.
		cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argo",
			Labels: map[string]string{PodSecurityEnforce: "privileged"}}}, metav1.CreateOptions{})
		for range 2 {
			if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
				t.Fatal(err)
			}
		}
		want := level
		if want == "" {
			want = lab.PodSecurityBaseline
		}
		for _, ns := range l.Cluster.Namespaces {
			n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if n.Labels[PodSecurityEnforce] != want || n.Labels[PodSecurityEnforceVersion] != "latest" || n.Labels[podSecurityWarn] != want {
				t.Errorf("podSecurity %q: namespace %s labels %v, want enforce=%s", level, ns, n.Labels, want)
			}
		}
		secrets, err := cs.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(secrets.Items) != 1 || secrets.Items[0].Name != "keep" {
			t.Errorf("Secrets of kube-system after up: %v, want only keep", secrets.Items)
		}
	}
}

// TestGraderPolicyListAndReview: a selector's kind is listed without
// names, an access check's review is created, and neither widens the gets.
func TestGraderPolicyListAndReview(t *testing.T) {
	grants := []graderGrant{
		{Group: "apps", Resource: "deployments", Namespace: "shop", Name: "web", Verb: "get"},
		{Group: "apps", Resource: "deployments", Namespace: "shop", Verb: "list"},
		{Group: "rbac.authorization.k8s.io", Resource: "rolebindings", Namespace: "shop", Verb: "list"},
		accessReviewGrant,
	}
	var got []string
	for _, r := range graderPolicy(grants) {
		got = append(got, fmt.Sprintf("%v %v %v %v", r.Verbs, r.APIGroups, r.Resources, r.ResourceNames))
	}
	want := []string{
		"[get] [apps] [deployments] [web]",
		"[list] [apps] [deployments] []",
		"[create] [authorization.k8s.io] [subjectaccessreviews] []",
		"[list] [rbac.authorization.k8s.io] [rolebindings] []",
	}
	if !slices.Equal(got, want) {
		t.Errorf("rules:\n got %q\nwant %q", got, want)
	}
}

// TestLabGraderGrants: a lab with a selector and an access check grants
// list on the selected kind and the access review, beside its gets.
func TestLabGraderGrants(t *testing.T) {
	cs := fake.NewClientset()
	cs.Fake.Resources = discoveryResources
	sel, yes := "app=web", true
	l := &lab.Lab{Steps: []lab.Step{{Checks: []lab.Check{
		{Kube: &lab.KubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "gitops-lab", Selector: &sel}},
		{Kube: &lab.KubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "gitops-lab", Name: "web"}},
		{Access: &lab.AccessCheck{ServiceAccount: "ci/deployer", Verb: "get", Resource: "secrets", Allowed: &yes}},
	}}}}
	grants, err := labGraderGrants(context.Background(), cs.Discovery(), l)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range grants {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s|%s", g.Namespace, g.Group, g.Resource, g.Verb, g.Name))
	}
	want := []string{
		"|authorization.k8s.io|subjectaccessreviews|create|",
		"gitops-lab|apps|deployments|get|web",
		"gitops-lab|apps|deployments|list|",
	}
	if !slices.Equal(got, want) {
		t.Errorf("grants:\n got %q\nwant %q", got, want)
	}
}

// TestLabGraderGrantsPermissions: a permissions check lets the grader
// list the bindings and roles (in the check's namespaces, and the
// cluster's own) and ask the access reviews, and nothing more.
func TestLabGraderGrantsPermissions(t *testing.T) {
	cs := fake.NewClientset()
	cs.Fake.Resources = discoveryResources
	l := &lab.Lab{Steps: []lab.Step{{Checks: []lab.Check{
		{Permissions: &lab.PermissionsCheck{Namespaces: []string{"shop"}, Subjects: []lab.PermissionSubject{{ServiceAccount: "ci/deployer"}}}},
	}}}}
	grants, err := labGraderGrants(context.Background(), cs.Discovery(), l)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range grants {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s|%s", g.Namespace, g.Group, g.Resource, g.Verb, g.Name))
	}
	want := []string{
		"|authorization.k8s.io|subjectaccessreviews|create|",
		"|rbac.authorization.k8s.io|clusterrolebindings|list|",
		"|rbac.authorization.k8s.io|clusterroles|list|",
		"shop|rbac.authorization.k8s.io|rolebindings|list|",
		"shop|rbac.authorization.k8s.io|roles|list|",
	}
	if !slices.Equal(got, want) {
		t.Errorf("grants:\n got %q\nwant %q", got, want)
	}
}

// TestLabGraderGrantsReach: a lab with a reach check lets the grader make,
// list, delete and exec into Pods (its own) and read its namespace; and
// find the network policy agent's Pods and read their metrics through the
// proxy, whatever their names.
func TestLabGraderGrantsReach(t *testing.T) {
	cs := fake.NewClientset()
	cs.Fake.Resources = discoveryResources
	no := false
	l := &lab.Lab{Steps: []lab.Step{{Checks: []lab.Check{
		{Reach: &lab.ReachCheck{From: lab.ReachFrom{Namespace: "shop"}, To: "db:5432", Allowed: &no}},
	}}}}
	grants, err := labGraderGrants(context.Background(), cs.Discovery(), l)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range grants {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", g.Namespace, g.Resource, g.Verb, g.Name))
	}
	want := []string{
		"|namespaces|get|shop",
		"labctl-system|pods|list|",
		"labctl-system|pods/proxy|get|*",
		"shop|pods|create|",
		"shop|pods|delete|",
		"shop|pods|list|",
		"shop|pods/exec|create|",
		"shop|pods/exec|get|*",
	}
	if !slices.Equal(got, want) {
		t.Errorf("grants:\n got %q\nwant %q", got, want)
	}
	var proxy *rbacv1.PolicyRule
	for _, r := range graderPolicy(grants) {
		if slices.Contains(r.Resources, "pods/proxy") {
			proxy = &r
		}
	}
	if proxy == nil || proxy.ResourceNames != nil || !slices.Equal(proxy.Verbs, []string{"get"}) {
		t.Errorf("the proxy rule is %+v, want get on every Pod's proxy", proxy)
	}
}

// TestLabGraderGrantsMatrix: a lab with a matrix check lets the grader do
// what a reach check's Pods need in each source's namespace, and patch
// Pods there (the seal of its probers); nothing more.
func TestLabGraderGrantsMatrix(t *testing.T) {
	cs := fake.NewClientset()
	cs.Fake.Resources = discoveryResources
	l := &lab.Lab{Steps: []lab.Step{{Checks: []lab.Check{
		{Matrix: &lab.MatrixCheck{
			Sources:  []lab.MatrixSource{{Name: "web", Namespace: "shop"}, {Name: "debug", Namespace: "tools"}},
			Targets:  []lab.MatrixTarget{{Name: "db", To: "db.shop:5432"}},
			Unlisted: lab.MatrixClosed,
		}},
	}}}}
	grants, err := labGraderGrants(context.Background(), cs.Discovery(), l)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range grants {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", g.Namespace, g.Resource, g.Verb, g.Name))
	}
	want := []string{
		"|namespaces|get|shop",
		"|namespaces|get|tools",
		"labctl-system|pods|list|",
		"labctl-system|pods/proxy|get|*",
	}
	for _, ns := range []string{"shop", "tools"} {
		want = append(want, ns+"|pods|create|", ns+"|pods|delete|", ns+"|pods|list|", ns+"|pods|patch|", ns+"|pods/exec|create|", ns+"|pods/exec|get|*")
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("grants:\n got %q\nwant %q", got, want)
	}
}
