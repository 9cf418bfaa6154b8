package provision

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// ProbeDir is the directory a probe's setup and restore scripts run in;
// setup may leave notes there for restore.
const ProbeDir = sandbox.ProbeDir

// The probe's identity: what a probe's setup and restore scripts, the lab
// author's, may do in the lab's cluster.
const (
	// ProbeAccount is the probe's ServiceAccount, in SystemNamespace
	// beside the learner's and the grader's.
	ProbeAccount = "labctl-probe"
	// probeRole names the probe's RoleBindings, in each of the lab's
	// namespaces and in ProbeNamespace, and its Role in ProbeNamespace.
	probeRole = "labctl-probe"
	// probeAdminRole holds the rules of the built-in admin ClusterRole
	// (without writes on namespaces), which the probe has in each of the
	// lab's namespaces.
	probeAdminRole = "labctl-probe-admin"
	// ProbeNamespace is where a probe keeps what only the grader may read
	// (the answer the learner's script must find, for instance): the probe
	// may write ConfigMaps there, the learner may not read them, and the
	// grader reads those the lab's checks name.
	ProbeNamespace = "labctl-probe"
)

// probeTokenLifetime is how long the token of one probe script lasts: the
// API server's shortest. Each setup and restore gets its own.
const probeTokenLifetime = 10 * time.Minute

// hasProbes reports whether a step of l has a probe.
func hasProbes(l *lab.Lab) bool {
	return slices.ContainsFunc(l.Steps, func(s lab.Step) bool { return s.Probe != nil })
}

// grantProbe gives the probe's account its rights: the built-in admin
// role's rules (without writes on namespaces) in each of the lab's
// namespaces, by a RoleBinding there, and ConfigMaps in ProbeNamespace,
// which it creates under restricted Pod Security. Nothing cluster-wide:
// the probe's scripts are the lab author's, and under the lab's Pod
// Security level (baseline unless the user consented to more) no Pod they
// make reaches the node. The learner, admin of the lab's namespaces, may
// delete or replace the bindings there (grantProbeBindings), which would
// only make the probe fail; each of a probe's scripts gets them again, so a
// binding removed does not last. It is idempotent.
func grantProbe(ctx context.Context, cs kubernetes.Interface, l *lab.Lab, labels map[string]string) error {
	// Each part names the others only by name, so they are made at once.
	errs := make([]error, 4)
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = ensureAccount(ctx, cs, ProbeAccount, labels) })
	if len(l.Cluster.Namespaces) > 0 {
		wg.Go(func() {
			if err := ensureAdminCopy(ctx, cs, probeAdminRole, labels); err != nil {
				errs[1] = fmt.Errorf("granting the probe access: %w", err)
			}
		})
	}
	wg.Go(func() { errs[2] = grantProbeBindings(ctx, cs, l, labels) })
	wg.Go(func() { errs[3] = grantProbeNamespace(ctx, cs, labels) })
	wg.Wait()
	return errors.Join(errs...)
}

// grantProbeNamespace makes ProbeNamespace, under restricted Pod Security,
// and lets the probe's account keep ConfigMaps there.
func grantProbeNamespace(ctx context.Context, cs kubernetes.Interface, labels map[string]string) error {
	nsLabels := map[string]string{
		sandbox.LabelLab:          labels[sandbox.LabelLab],
		PodSecurityEnforce:        lab.PodSecurityRestricted,
		PodSecurityEnforceVersion: "latest",
	}
	if err := ensureNamespace(ctx, cs, ProbeNamespace, nsLabels); err != nil {
		return err
	}
	rules := []rbacv1.PolicyRule{{
		APIGroups: []string{""},
		Resources: []string{"configmaps"},
		Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: probeRole, Namespace: ProbeNamespace, Labels: labels}, Rules: rules}
	if err := apply(ctx, cs.RbacV1().Roles(ProbeNamespace), role, func(cur *rbacv1.Role) { cur.Rules = rules; cur.Labels = labels }); err != nil {
		return fmt.Errorf("granting the probe access in %s: %w", ProbeNamespace, err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: probeRole, Namespace: ProbeNamespace, Labels: labels},
		Subjects:   probeSubjects(),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: probeRole},
	}
	if err := ensureRoleBinding(ctx, cs, rb); err != nil {
		return fmt.Errorf("granting the probe access in %s: %w", ProbeNamespace, err)
	}
	return nil
}

// probeSubjects is the probe's account as a binding names it.
func probeSubjects() []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ProbeAccount, Namespace: SystemNamespace}}
}

// grantProbeBindings binds the probe's account to its admin role in each of
// the lab's namespaces, all at once: of the probe's rights, these are the
// ones the learner, admin there, can take away.
func grantProbeBindings(ctx context.Context, cs kubernetes.Interface, l *lab.Lab, labels map[string]string) error {
	errs := make([]error, len(l.Cluster.Namespaces))
	var wg sync.WaitGroup
	for i, ns := range l.Cluster.Namespaces {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: probeRole, Namespace: ns, Labels: labels},
			Subjects:   probeSubjects(),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: probeAdminRole},
		}
		wg.Go(func() {
			if err := ensureRoleBinding(ctx, cs, rb); err != nil {
				errs[i] = fmt.Errorf("granting the probe access in %s: %w", ns, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ProbeKubeconfig grants the probe its rights through cs, the admin's
// client, issues it a token for one script, and returns its kubeconfig:
// that token against server, the API server's address as the probe's
// container reaches it; ca is the cluster's CA. A probe's first script
// (first) gets every right again (grantProbe); its later ones only the
// bindings the learner could have removed since (grantProbeBindings): the
// rest is out of the learner's reach.
func ProbeKubeconfig(ctx context.Context, cs kubernetes.Interface, l *lab.Lab, server string, ca []byte, first bool) ([]byte, error) {
	grant := grantProbeBindings
	if first {
		grant = grantProbe
	}
	if err := grant(ctx, cs, l, map[string]string{sandbox.LabelLab: l.Metadata.Name}); err != nil {
		return nil, fmt.Errorf("the probe's rights could not be granted: %w", err)
	}
	id, err := issueToken(ctx, cs, ProbeAccount, ca, probeTokenLifetime)
	if err != nil {
		return nil, err
	}
	return kubeconfig(l.Metadata.Name, server, id.CAData, ProbeAccount, id.Token, FirstNamespace(l))
}
