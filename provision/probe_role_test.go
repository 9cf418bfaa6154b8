package provision

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/lab"
)

func probedLab() *lab.Lab {
	l := testLab()
	l.Steps = []lab.Step{{ID: "sync", Probe: &lab.Probe{Setup: "kubectl scale", Run: "/root/sync.sh", Restore: "kubectl scale"}}}
	return l
}

// The probe is admin of the lab's namespaces and may keep ConfigMaps in
// labctl-probe: nothing cluster-wide, no write on namespaces.
func TestSetupClusterGrantsTheProbeNoMoreThanTheLabsNamespaces(t *testing.T) {
	cs := fakeCluster()
	ctx := context.Background()
	l := probedLab()
	if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
		t.Fatal(err)
	}
	sa, err := cs.CoreV1().ServiceAccounts("labctl-system").Get(ctx, "labctl-probe", metav1.GetOptions{})
	if err != nil || sa.Labels["dev.labctl.lab"] != "gitops" {
		t.Fatalf("probe account = %+v, %v", sa, err)
	}
	for _, ns := range l.Cluster.Namespaces {
		rb, err := cs.RbacV1().RoleBindings(ns).Get(ctx, "labctl-probe", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the probe has no binding in %s: %v", ns, err)
		}
		if rb.RoleRef != (rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "labctl-probe-admin"}) ||
			len(rb.Subjects) != 1 || rb.Subjects[0] != (rbacv1.Subject{Kind: "ServiceAccount", Name: "labctl-probe", Namespace: "labctl-system"}) {
			t.Errorf("probe binding in %s = %+v", ns, rb)
		}
	}
	admin, err := cs.RbacV1().ClusterRoles().Get(ctx, "labctl-probe-admin", metav1.GetOptions{})
	if err != nil || len(admin.Rules) != 3 || admin.AggregationRule != nil {
		t.Fatalf("the probe's admin role = %+v, %v; want the 3 rules admin aggregates", admin, err)
	}
	for _, r := range admin.Rules {
		if slices.Contains(r.Resources, "namespaces") && !slices.Equal(r.Verbs, []string{"get", "list", "watch"}) {
			t.Errorf("the probe may write namespaces: %+v", r)
		}
	}
	// No cluster-wide grant names the probe.
	crbs, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, crb := range crbs.Items {
		for _, s := range crb.Subjects {
			if s.Name == ProbeAccount {
				t.Errorf("cluster-wide binding %s names the probe: %+v", crb.Name, crb)
			}
		}
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, "labctl-probe", metav1.GetOptions{})
	if err != nil || ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" || ns.Labels["dev.labctl.lab"] != "gitops" {
		t.Fatalf("the probe's namespace = %+v, %v; want restricted Pod Security", ns, err)
	}
	role, err := cs.RbacV1().Roles("labctl-probe").Get(ctx, "labctl-probe", metav1.GetOptions{})
	if err != nil || len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Resources, []string{"configmaps"}) || !slices.Equal(role.Rules[0].APIGroups, []string{""}) {
		t.Fatalf("the probe's role in labctl-probe = %+v, %v; want ConfigMaps only", role, err)
	}
	rb, err := cs.RbacV1().RoleBindings("labctl-probe").Get(ctx, "labctl-probe", metav1.GetOptions{})
	if err != nil || rb.RoleRef.Kind != "Role" || rb.Subjects[0].Name != "labctl-probe" {
		t.Fatalf("the probe's binding in labctl-probe = %+v, %v", rb, err)
	}
	// The learner has nothing in labctl-probe.
	rbs, err := cs.RbacV1().RoleBindings("labctl-probe").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range rbs.Items {
		for _, s := range b.Subjects {
			if s.Name != ProbeAccount {
				t.Errorf("binding %s in labctl-probe names %+v", b.Name, s)
			}
		}
	}
}

func TestSetupClusterWithoutProbesMakesNoProbeIdentity(t *testing.T) {
	cs := fakeCluster()
	ctx := context.Background()
	if _, _, err := SetupCluster(ctx, cs, []byte("CA"), testLab()); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ServiceAccounts("labctl-system").Get(ctx, "labctl-probe", metav1.GetOptions{}); err == nil {
		t.Error("a lab without probes got a probe account")
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "labctl-probe", metav1.GetOptions{}); err == nil {
		t.Error("a lab without probes got the probe's namespace")
	}
}

// The learner, admin of a lab namespace, deletes the probe's binding there
// and rebinds the name to a role of their own: the next grant puts both
// back, the whole one of a probe's first script and the bindings alone of
// its later scripts.
func TestGrantProbeRestoresWhatTheLearnerChanged(t *testing.T) {
	for name, grant := range map[string]func(context.Context, kubernetes.Interface, *lab.Lab, map[string]string) error{
		"first script": grantProbe, "later script": grantProbeBindings,
	} {
		t.Run(name, func(t *testing.T) {
			cs := fakeCluster()
			ctx := context.Background()
			l := probedLab()
			labels := map[string]string{"dev.labctl.lab": "gitops"}
			if err := grantProbe(ctx, cs, l, labels); err != nil {
				t.Fatal(err)
			}
			if err := cs.RbacV1().RoleBindings("gitops-lab").Delete(ctx, "labctl-probe", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := cs.RbacV1().RoleBindings("argo").Delete(ctx, "labctl-probe", metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.RbacV1().RoleBindings("argo").Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "labctl-probe", Namespace: "argo"},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "default", Namespace: "argo"}},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := grant(ctx, cs, l, labels); err != nil {
				t.Fatal(err)
			}
			for _, ns := range l.Cluster.Namespaces {
				rb, err := cs.RbacV1().RoleBindings(ns).Get(ctx, "labctl-probe", metav1.GetOptions{})
				if err != nil || rb.RoleRef.Name != "labctl-probe-admin" || len(rb.Subjects) != 1 || rb.Subjects[0].Name != "labctl-probe" {
					t.Errorf("binding in %s after a new grant = %+v, %v", ns, rb, err)
				}
			}
		})
	}
}

// Each probe script gets a token of its own that lasts ten minutes, and a
// kubeconfig of the probe's account, not the learner's or the admin's.
func TestProbeTokenAndKubeconfig(t *testing.T) {
	cs := fakeCluster()
	ctx := context.Background()
	if err := grantProbe(ctx, cs, probedLab(), map[string]string{"dev.labctl.lab": "gitops"}); err != nil {
		t.Fatal(err)
	}
	id, err := issueToken(ctx, cs, ProbeAccount, []byte("CA"), probeTokenLifetime)
	if err != nil {
		t.Fatal(err)
	}
	if id.Token != "token-of-labctl-probe" || time.Until(id.Expires) > probeTokenLifetime+time.Minute {
		t.Fatalf("probe identity = %+v", id)
	}
	b, err := kubeconfig("gitops", "https://labctl-gitops-control-plane:6443", id.CAData, ProbeAccount, id.Token, "gitops-lab")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	ctxt := cfg.Contexts[cfg.CurrentContext]
	if ctxt == nil || ctxt.AuthInfo != "labctl-probe" || ctxt.Namespace != "gitops-lab" {
		t.Fatalf("context = %+v", ctxt)
	}
	if u := cfg.AuthInfos["labctl-probe"]; u == nil || u.Token != "token-of-labctl-probe" || u.ClientCertificateData != nil {
		t.Fatalf("user = %+v", u)
	}
	if cl := cfg.Clusters[ctxt.Cluster]; cl.Server != "https://labctl-gitops-control-plane:6443" {
		t.Fatalf("cluster = %+v", cl)
	}
}

// The API server's audit log records the learner's writes alone: the
// probe's are never counted as the learner's.
func TestAuditPolicyLeavesOutTheProbe(t *testing.T) {
	p := string(AuditPolicy(probedLab(), true))
	if strings.Contains(p, ProbeAccount) || !strings.Contains(p, `"system:serviceaccount:labctl-system:learner"`) {
		t.Errorf("audit policy:\n%s", p)
	}
}

// Rights that stand are only read: a probe's first script, which gets
// every right again, writes nothing when nothing changed, and a later
// script writes back only the binding the learner changed.
func TestProbeRightsThatStandAreOnlyRead(t *testing.T) {
	cs := fakeCluster()
	ctx := context.Background()
	l := probedLab()
	if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
		t.Fatal(err)
	}
	writes := func() []string {
		var out []string
		for _, a := range cs.Actions() {
			switch {
			case a.GetVerb() == "create" && a.GetSubresource() == "token":
			case a.GetVerb() == "get" || a.GetVerb() == "list":
			default:
				out = append(out, a.GetVerb()+" "+a.GetResource().Resource+" "+a.GetNamespace())
			}
		}
		return out
	}
	cs.ClearActions()
	if _, err := ProbeKubeconfig(ctx, cs, l, "https://api:6443", []byte("CA"), true); err != nil {
		t.Fatal(err)
	}
	if w := writes(); len(w) > 0 {
		t.Errorf("a probe's first script wrote rights that stand: %v", w)
	}

	// The learner empties the probe's binding in their namespace.
	rb, err := cs.RbacV1().RoleBindings("gitops-lab").Get(ctx, "labctl-probe", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rb.Subjects = nil
	if _, err := cs.RbacV1().RoleBindings("gitops-lab").Update(ctx, rb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cs.ClearActions()
	if _, err := ProbeKubeconfig(ctx, cs, l, "https://api:6443", []byte("CA"), false); err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(writes(), ", "); w != "update rolebindings gitops-lab" {
		t.Errorf("writes %q, want the changed binding's update alone", w)
	}
	rb, err = cs.RbacV1().RoleBindings("gitops-lab").Get(ctx, "labctl-probe", metav1.GetOptions{})
	if err != nil || len(rb.Subjects) != 1 || rb.Subjects[0].Name != ProbeAccount {
		t.Errorf("the probe's binding is not granted again: %+v, %v", rb, err)
	}
}
