package provision

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
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
	l.Default()
	return l
}

func TestSetupClusterDefaultAccess(t *testing.T) {
	cs := fakeCluster()
	ctx := context.Background()
	l := testLab()
	for range 2 { // idempotent
		learner, grader, err := SetupCluster(ctx, cs, []byte("CA"), l)
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
	if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
		t.Fatal(err)
	}
	l.Access.Rules = []lab.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "patch"}}}
	l.Access.ClusterRules = []lab.PolicyRule{{Resources: []string{"nodes"}, Verbs: []string{"get"}}}
	if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
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

// jwt makes a token shaped like the API server's with the given exp claim
// (none when exp is 0); its signature is not a real one.
func jwt(exp int64) string {
	claims := `{"iss":"https://kubernetes.default.svc","sub":"system:serviceaccount:labctl-system:grader"}`
	if exp != 0 {
		claims = fmt.Sprintf(`{"exp":%d,"sub":"system:serviceaccount:labctl-system:grader"}`, exp)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + ".c2ln"
}

func TestTokenExpiry(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if got := TokenExpiry(jwt(at.Unix())); !got.Equal(at) {
		t.Errorf("TokenExpiry = %v, want %v", got, at)
	}
	for _, tok := range []string{"", "opaque-token", jwt(0), "a.!!!.c", "a." + base64.RawURLEncoding.EncodeToString([]byte("[1]")) + ".c"} {
		if got := TokenExpiry(tok); !got.IsZero() {
			t.Errorf("TokenExpiry(%q) = %v, want zero (unknown)", tok, got)
		}
	}
}

func TestGraderNeedsRenewal(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		expires time.Time
		want    bool
	}{
		{"just issued", now.Add(time.Hour), false},
		{"issued a little long", now.Add(time.Hour + 4*time.Minute), false},
		{"11 minutes left", now.Add(11 * time.Minute), false},
		{"exactly 10 minutes left", now.Add(10 * time.Minute), false},
		{"9 minutes left", now.Add(9 * time.Minute), true},
		{"expired", now.Add(-time.Minute), true},
		{"unknown", time.Time{}, true},
		{"a year's token of an earlier labctl", now.Add(300 * 24 * time.Hour), true},
	} {
		if got := graderNeedsRenewal(tc.expires, now); got != tc.want {
			t.Errorf("%s: graderNeedsRenewal = %v, want %v", tc.name, got, tc.want)
		}
	}
}
