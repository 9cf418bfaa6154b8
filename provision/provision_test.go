package provision

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/lab"
)

func TestKindConfig(t *testing.T) {
	patch := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\n"
	cfg := kindConfig(ClusterConfig{NodeImage: "labctl/node:x", DisableDefaultCNI: true, KubeadmPatches: []string{patch}})
	if len(cfg.Nodes) != 1 || cfg.Nodes[0].Role != "control-plane" || cfg.Nodes[0].Image != "labctl/node:x" {
		t.Fatalf("nodes = %+v", cfg.Nodes)
	}
	if !cfg.Networking.DisableDefaultCNI || len(cfg.KubeadmConfigPatches) != 1 || cfg.KubeadmConfigPatches[0] != patch {
		t.Fatalf("networking %+v patches %q", cfg.Networking, cfg.KubeadmConfigPatches)
	}
	if cfg.APIVersion != "kind.x-k8s.io/v1alpha4" || cfg.Kind != "Cluster" {
		t.Fatalf("type = %s %s", cfg.APIVersion, cfg.Kind)
	}
	if kindConfig(ClusterConfig{NodeImage: "kindest/node:v1"}).Networking.DisableDefaultCNI {
		t.Fatal("default CNI disabled without being asked")
	}
	if ClusterName("gitops") != "labctl-gitops" || ControlPlaneServer("gitops") != "https://labctl-gitops-control-plane:6443" {
		t.Fatal("names")
	}
}

func TestStepsThrough(t *testing.T) {
	steps := []lab.Step{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	ids := func(ss []lab.Step) string {
		var out []string
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return strings.Join(out, ",")
	}
	for upTo, want := range map[string]string{"": "a", "a": "a", "b": "a,b", "c": "a,b,c"} {
		got, err := stepsThrough(steps, upTo)
		if err != nil || ids(got) != want {
			t.Errorf("stepsThrough(%q) = %s, %v; want %s", upTo, ids(got), err, want)
		}
	}
	if _, err := stepsThrough(steps, "zz"); err == nil || !strings.Contains(err.Error(), `no step "zz"`) {
		t.Errorf("unknown step: %v", err)
	}
}

func TestMaterialiseFixtures(t *testing.T) {
	fsys := fstest.MapFS{
		"gitops/app.yaml": {Data: []byte("replicas: 2\n"), Mode: 0o444},
		"bin/run.sh":      {Data: []byte("#!/bin/sh\n"), Mode: 0o555},
	}
	base := t.TempDir()
	dir, err := materialiseFixtures(fsys, base, "lab1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "gitops", "app.yaml"))
	if err != nil || string(b) != "replicas: 2\n" {
		t.Fatalf("content %q %v", b, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "bin", "run.sh")); st.Mode().Perm() != 0o755 {
		t.Errorf("executable mode = %v", st.Mode())
	}
	if st, _ := os.Stat(filepath.Join(dir, "gitops", "app.yaml")); st.Mode().Perm() != 0o644 {
		t.Errorf("file mode = %v", st.Mode())
	}
	again, err := materialiseFixtures(fsys, base, "lab1")
	if err != nil || again != dir {
		t.Fatalf("same content: %s, %v; want %s reused", again, err, dir)
	}
	fsys["gitops/app.yaml"] = &fstest.MapFile{Data: []byte("replicas: 3\n")}
	changed, err := materialiseFixtures(fsys, base, "lab1")
	if err != nil || changed == dir {
		t.Fatalf("changed content kept directory %s (%v)", changed, err)
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 2 {
		t.Errorf("cache holds %d entries, want 2 (no temporary leftovers)", len(entries))
	}
}

func TestLearnerKubeconfig(t *testing.T) {
	b, err := learnerKubeconfig("gitops", "https://labctl-gitops-control-plane:6443", []byte("CA"), "tok", "gitops-lab")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil || ctx.Namespace != "gitops-lab" || ctx.AuthInfo != "learner" {
		t.Fatalf("context = %+v", ctx)
	}
	cl := cfg.Clusters[ctx.Cluster]
	if cl.Server != "https://labctl-gitops-control-plane:6443" || string(cl.CertificateAuthorityData) != "CA" {
		t.Fatalf("cluster = %+v", cl)
	}
	if cfg.AuthInfos["learner"].Token != "tok" || cfg.AuthInfos["learner"].ClientCertificateData != nil {
		t.Fatalf("user = %+v", cfg.AuthInfos["learner"])
	}
}

// fakeCluster is a fake clientset holding what a new cluster's API server
// bootstraps for labctl: the aggregated admin role (its rules not yet
// filled, as on a new cluster) and the roles it aggregates, and a
// TokenRequest API that issues "token-of-<account>".
func fakeCluster() *fake.Clientset {
	aggregate := func(name, to string, rules ...rbacv1.PolicyRule) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-" + to: "true"}}, Rules: rules}
	}
	selecting := func(name, from string, labels map[string]string) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{
			ObjectMeta:      metav1.ObjectMeta{Name: name, Labels: labels},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-" + from: "true"}}}},
		}
	}
	cs := fake.NewClientset(
		selecting("admin", "admin", nil),
		selecting("edit", "edit", map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}),
		selecting("view", "view", map[string]string{"rbac.authorization.k8s.io/aggregate-to-edit": "true"}),
		aggregate("system:aggregate-to-admin", "admin", rbacv1.PolicyRule{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"rolebindings"}, Verbs: []string{"create"}}),
		aggregate("system:aggregate-to-edit", "edit", rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"create", "patch"}}),
		aggregate("system:aggregate-to-view", "view", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}),
	)
	// The controller manager gives every new namespace its default
	// ServiceAccount.
	cs.PrependReactor("create", "namespaces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ns := a.(k8stesting.CreateAction).GetObject().(*corev1.Namespace)
		cs.Tracker().Add(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns.Name}})
		return false, nil, nil
	})
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		tr := a.(k8stesting.CreateAction).GetObject().(*authenticationv1.TokenRequest)
		account := a.(k8stesting.CreateActionImpl).Name
		switch secs := tr.Spec.ExpirationSeconds; {
		case secs == nil:
			return true, nil, apierrors.NewBadRequest("labctl's tokens must say how long they last")
		case account == "grader" && *secs != 3600:
			return true, nil, apierrors.NewBadRequest("the grader's token must last an hour")
		case account == ProbeAccount && *secs != 600:
			return true, nil, apierrors.NewBadRequest("the probe's token must last one script, ten minutes")
		case account == LearnerAccount && *secs < 30*24*3600:
			return true, nil, apierrors.NewBadRequest("the learner's token must last the lab")
		}
		tr = tr.DeepCopy()
		tr.Status.Token = "token-of-" + account
		tr.Status.ExpirationTimestamp = metav1.NewTime(time.Now().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second))
		return true, tr, nil
	})
	return cs
}

func testLab() *lab.Lab {
	l := &lab.Lab{Metadata: lab.Metadata{Name: "gitops"}}
	l.Cluster.Namespaces = []string{"gitops-lab", "argo"}
	return l
}

func TestSetupClusterDefaultAccess(t *testing.T) {
	cs := fakeCluster()
	ctx := context.Background()
	l := testLab()
	for range 2 { // idempotent
		learner, grader, err := setupCluster(ctx, cs, []byte("CA"), l)
		if err != nil {
			t.Fatal(err)
		}
		if learner.Token != "token-of-learner" || grader.Token != "token-of-grader" || string(learner.CAData) != "CA" {
			t.Fatalf("tokens = %+v %+v", learner, grader)
		}
	}
	for _, ns := range []string{"gitops-lab", "argo", "labctl-system"} {
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil || n.Labels["dev.labctl.lab"] != "gitops" {
			t.Fatalf("namespace %s: %+v %v", ns, n, err)
		}
		if ns == "labctl-system" {
			continue
		}
		rb, err := cs.RbacV1().RoleBindings(ns).Get(ctx, "labctl-learner", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rb.RoleRef.Kind != "ClusterRole" || rb.RoleRef.Name != "labctl-learner-admin" || len(rb.Subjects) != 1 ||
			rb.Subjects[0].Name != "learner" || rb.Subjects[0].Namespace != "labctl-system" {
			t.Fatalf("learner binding in %s = %+v", ns, rb)
		}
	}
	admin, err := cs.RbacV1().ClusterRoles().Get(ctx, "labctl-learner-admin", metav1.GetOptions{})
	if err != nil || len(admin.Rules) != 3 || admin.AggregationRule != nil {
		t.Fatalf("the learner's admin role = %+v, %v; want the 3 rules admin aggregates", admin, err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, "labctl-learner", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the learner got a cluster-wide binding by default: %v", err)
	}
	cr, err := cs.RbacV1().ClusterRoles().Get(ctx, "labctl-grader", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cr.Rules {
		for _, v := range r.Verbs {
			if v != "get" && v != "list" && v != "watch" {
				t.Fatalf("the grader may %s: %+v", v, cr.Rules)
			}
		}
	}
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, "labctl-grader", metav1.GetOptions{})
	if err != nil || crb.Subjects[0].Name != "grader" || crb.RoleRef.Name != "labctl-grader" {
		t.Fatalf("grader binding = %+v %v", crb, err)
	}
}

func TestSetupClusterLabRules(t *testing.T) {
	cs := fakeCluster()
	ctx := context.Background()
	l := testLab()
	// A first up with default access, then the lab narrows it: the binding's
	// immutable roleRef must be replaced.
	if _, _, err := setupCluster(ctx, cs, []byte("CA"), l); err != nil {
		t.Fatal(err)
	}
	l.Access.Rules = []lab.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "patch"}}}
	l.Access.ClusterRules = []lab.PolicyRule{{Resources: []string{"nodes"}, Verbs: []string{"get"}}}
	if _, _, err := setupCluster(ctx, cs, []byte("CA"), l); err != nil {
		t.Fatal(err)
	}
	role, err := cs.RbacV1().Roles("argo").Get(ctx, "labctl-learner", metav1.GetOptions{})
	if err != nil || len(role.Rules) != 1 || role.Rules[0].Resources[0] != "deployments" {
		t.Fatalf("role = %+v %v", role, err)
	}
	rb, _ := cs.RbacV1().RoleBindings("argo").Get(ctx, "labctl-learner", metav1.GetOptions{})
	if rb.RoleRef != (rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "labctl-learner"}) {
		t.Fatalf("binding still refers to %+v", rb.RoleRef)
	}
	crb, err := cs.RbacV1().ClusterRoleBindings().Get(ctx, "labctl-learner", metav1.GetOptions{})
	if err != nil || crb.RoleRef.Name != "labctl-learner" {
		t.Fatalf("cluster binding = %+v %v", crb, err)
	}
}

func TestTokenRefused(t *testing.T) {
	cs := fake.NewClientset() // no TokenRequest API
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts/token"}, a.(k8stesting.CreateActionImpl).Name, errors.New("no"))
	})
	_, _, err := issueTokens(context.Background(), cs, nil)
	if err == nil || !strings.Contains(err.Error(), "issuing a token to learner") {
		t.Fatalf("err = %v, want the refusal named", err)
	}
}
