package provision

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// Names of the identities labctl creates in every lab cluster.
const (
	SystemNamespace = "labctl-system"
	LearnerAccount  = "learner"
	GraderAccount   = "grader"
	learnerRole     = "labctl-learner"
	GraderRole      = "labctl-grader"
	// LearnerAdminRole holds the rules of the built-in admin ClusterRole;
	// by default the learner is bound to it in each lab namespace.
	LearnerAdminRole = "labctl-learner-admin"
	// LearnerViewRole names the ClusterRole and ClusterRoleBinding of the
	// learner's reading of the cluster (access.clusterView).
	LearnerViewRole = "labctl-learner-view"
	// BuiltinRolesWait bounds how long a new cluster's setup waits for the
	// controller manager to fill the built-in admin, edit and view roles.
	BuiltinRolesWait = 2 * time.Minute
	// builtinAdminRole is the aggregated ClusterRole LearnerAdminRole copies.
	builtinAdminRole = "admin"
)

// Lifetimes of the tokens labctl issues. The learner's lasts the lab: a lab
// may stay up for months, and every `labctl up` issues a new one. The
// grader's is short, an hour, and renewed by the host when less than
// graderRenewBefore of it is left (graderNeedsRenewal); the API server's
// shortest is ten minutes.
const (
	learnerTokenLifetime = 365 * 24 * time.Hour
	graderTokenLifetime  = time.Hour
)

// identity is one service account's credentials; Expires is when its token
// stops being valid.
type Identity struct {
	Token   string    `json:"token"`
	CAData  []byte    `json:"caData"`
	Expires time.Time `json:"expires,omitzero"`
}

// Labels of the Pod Security Admission controller on a lab namespace.
const (
	PodSecurityEnforce        = "pod-security.kubernetes.io/enforce"
	PodSecurityEnforceVersion = "pod-security.kubernetes.io/enforce-version"
	podSecurityWarn           = "pod-security.kubernetes.io/warn"
	podSecurityWarnVersion    = "pod-security.kubernetes.io/warn-version"
	podSecurityAudit          = "pod-security.kubernetes.io/audit"
	podSecurityAuditVersion   = "pod-security.kubernetes.io/audit-version"
)

// namespaceLabels are the labels of each of the lab's namespaces: the lab's
// own, and Pod Security Admission enforcing (and warning and auditing) the
// lab's level at the cluster's latest version. Under the default, baseline,
// the API server refuses privileged, host namespace and hostPath Pods: the
// learner, admin of the namespace, has no route from it to the node. Up and
// reset write them; the learner may not change them (no write on
// namespaces, see ensureLearnerAdminRole).
// The level is the lab's, which lab.Default filled in when the lab was
// loaded; a lab without one is refused rather than left unenforced.
func namespaceLabels(l *lab.Lab) (map[string]string, error) {
	level := l.Cluster.PodSecurity
	if level == "" {
		return nil, fmt.Errorf("lab %s has no Pod Security level (cluster.podSecurity): a lab is given its defaults when it is loaded (lab.Load, or lab.Default on one built in Go)", l.Metadata.Name)
	}
	return map[string]string{
		sandbox.LabelLab:          l.Metadata.Name,
		PodSecurityEnforce:        level,
		PodSecurityEnforceVersion: "latest",
		podSecurityWarn:           level,
		podSecurityWarnVersion:    "latest",
		podSecurityAudit:          level,
		podSecurityAuditVersion:   "latest",
	}, nil
}

// SetupCluster creates the lab's namespaces under Pod Security Admission,
// the learner's identity with the lab's access, the grader's identity
// that may read exactly the objects the lab's checks read, and, for a lab
// with probes, the probe's (grantProbe), and issues the learner and the
// grader a token; ca is the cluster's CA, which their credentials carry. Last it
// deletes kind's bootstrap tokens, which would let anyone on the kind
// network join a node. It is idempotent.
func SetupCluster(ctx context.Context, cs kubernetes.Interface, ca []byte, l *lab.Lab) (learner, grader Identity, err error) {
	nsLabels, err := namespaceLabels(l)
	if err != nil {
		return learner, grader, err
	}
	labels := map[string]string{sandbox.LabelLab: l.Metadata.Name}
	if err := ensureNamespace(ctx, cs, SystemNamespace, labels); err != nil {
		return learner, grader, err
	}
	for _, ns := range l.Cluster.Namespaces {
		if err := ensureNamespace(ctx, cs, ns, nsLabels); err != nil {
			return learner, grader, err
		}
	}
	if err := grantLearner(ctx, cs, l, labels, true); err != nil {
		return learner, grader, err
	}
	grants, err := labGraderGrants(ctx, cs.Discovery(), l)
	if err != nil {
		return learner, grader, err
	}
	if err := grantGrader(ctx, cs, grants, labels); err != nil {
		return learner, grader, err
	}
	if hasProbes(l) {
		if err := grantProbe(ctx, cs, l, labels); err != nil {
			return learner, grader, err
		}
	}
	if err := ensureDefaultServiceAccounts(ctx, cs, l.Cluster.Namespaces); err != nil {
		return learner, grader, err
	}
	if learner, grader, err = issueTokens(ctx, cs, ca); err != nil {
		return learner, grader, err
	}
	return learner, grader, deleteBootstrapTokens(ctx, cs)
}

// bootstrapTokenType is the type of the Secrets holding kubeadm's bootstrap
// tokens, which kind leaves in kube-system.
const bootstrapTokenType = corev1.SecretType("bootstrap.kubernetes.io/token")

// deleteBootstrapTokens deletes every bootstrap token Secret: kind's
// well-known token would let anything that reaches the API server, the
// learner's sandbox included, join a node and read what the node may. A
// lab's cluster never adds nodes.
func deleteBootstrapTokens(ctx context.Context, cs kubernetes.Interface) error {
	secrets, err := cs.CoreV1().Secrets(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{FieldSelector: "type=" + string(bootstrapTokenType)})
	if err != nil {
		return fmt.Errorf("looking for the cluster's bootstrap tokens: %w", err)
	}
	for _, s := range secrets.Items {
		if s.Type != bootstrapTokenType {
			continue
		}
		err := cs.CoreV1().Secrets(metav1.NamespaceSystem).Delete(ctx, s.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting the cluster's bootstrap token %s: %w", s.Name, err)
		}
	}
	return nil
}

// fieldManager is the field manager of what labctl writes in a cluster.
const fieldManager = "labctl"

// ensureDefaultServiceAccounts makes sure each namespace holds its default
// ServiceAccount. The controller manager makes it too, but on a new cluster
// only some seconds after its namespace, and until then no pod can be
// created there: the learner's first `kubectl run` would be refused. The
// controller leaves an existing one alone.
func ensureDefaultServiceAccounts(ctx context.Context, cs kubernetes.Interface, nss []string) error {
	for _, ns := range nss {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}
		_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{FieldManager: fieldManager})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the default ServiceAccount of namespace %s: %w", ns, err)
		}
	}
	return nil
}

// ensureNamespace creates a namespace with labels, or adds the labels to an
// existing one. A namespace still terminating is waited for, bounded.
func ensureNamespace(ctx context.Context, cs kubernetes.Interface, name string, labels map[string]string) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			}, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return false, nil
			}
			return err == nil, err
		}
		if err != nil {
			return false, err
		}
		if ns.Status.Phase == corev1.NamespaceTerminating {
			return false, nil
		}
		if hasLabels(ns.Labels, labels) {
			return true, nil
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		maps.Copy(ns.Labels, labels)
		_, err = cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
		return err == nil, ignoreConflict(err)
	})
	if err != nil {
		return fmt.Errorf("ensuring namespace %s: %w", name, err)
	}
	return nil
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func ignoreConflict(err error) error {
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// grantLearner gives the learner account the lab's access: by default the
// built-in admin ClusterRole in each lab namespace; with access.rules a Role
// of those rules in each; with access.clusterRules a ClusterRole. Beside
// them the learner reads the cluster as access.clusterView says
// (grantClusterView). With cluster.nodeAccess, the learner reaches the
// nodes (grantNodeAccess) unless the runtime serves that itself
// (NodeAccessServed); renew makes the certificates of that anew.
func grantLearner(ctx context.Context, cs kubernetes.Interface, l *lab.Lab, labels map[string]string, renew bool) error {
	if err := ensureAccount(ctx, cs, LearnerAccount, labels); err != nil {
		return err
	}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: LearnerAccount, Namespace: SystemNamespace}}
	if len(l.Access.Rules) == 0 && len(l.Cluster.Namespaces) > 0 {
		if err := ensureLearnerAdminRole(ctx, cs, l, labels); err != nil {
			return err
		}
	}
	for _, ns := range l.Cluster.Namespaces {
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: LearnerAdminRole}
		if len(l.Access.Rules) > 0 {
			role := &rbacv1.Role{
				ObjectMeta: metav1.ObjectMeta{Name: learnerRole, Namespace: ns, Labels: labels},
				Rules:      policyRules(l.Access.Rules),
			}
			if err := apply(ctx, cs.RbacV1().Roles(ns), role, func(cur *rbacv1.Role) { cur.Rules = role.Rules; cur.Labels = labels }); err != nil {
				return fmt.Errorf("granting the learner access in %s: %w", ns, err)
			}
			ref = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: learnerRole}
		}
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: learnerRole, Namespace: ns, Labels: labels},
			Subjects:   subject,
			RoleRef:    ref,
		}
		if err := ensureRoleBinding(ctx, cs, rb); err != nil {
			return fmt.Errorf("granting the learner access in %s: %w", ns, err)
		}
	}
	if err := grantClusterView(ctx, cs, l, labels); err != nil {
		return err
	}
	if l.Cluster.NodeAccess && !nodeAccessServed(ctx) {
		if err := grantNodeAccess(ctx, cs, l, labels, renew); err != nil {
			return err
		}
	}
	if len(l.Access.ClusterRules) == 0 {
		return nil
	}
	cr := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: learnerRole, Labels: labels},
		Rules:      policyRules(l.Access.ClusterRules),
	}
	if err := apply(ctx, cs.RbacV1().ClusterRoles(), cr, func(cur *rbacv1.ClusterRole) { cur.Rules = cr.Rules; cur.Labels = labels }); err != nil {
		return fmt.Errorf("granting the learner cluster-wide access: %w", err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: learnerRole, Labels: labels},
		Subjects:   subject,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: learnerRole},
	}
	return apply(ctx, cs.RbacV1().ClusterRoleBindings(), crb, func(cur *rbacv1.ClusterRoleBinding) { cur.Subjects = crb.Subjects })
}

func policyRules(rules []lab.PolicyRule) []rbacv1.PolicyRule {
	out := make([]rbacv1.PolicyRule, 0, len(rules))
	for _, r := range rules {
		out = append(out, rbacv1.PolicyRule{APIGroups: r.APIGroups, Resources: r.Resources, Verbs: r.Verbs})
	}
	return out
}

func ensureAccount(ctx context.Context, cs kubernetes.Interface, name string, labels map[string]string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: SystemNamespace, Labels: labels}}
	if err := apply(ctx, cs.CoreV1().ServiceAccounts(SystemNamespace), sa, func(*corev1.ServiceAccount) {}); err != nil {
		return fmt.Errorf("creating service account %s: %w", name, err)
	}
	return nil
}

// ensureRoleBinding creates a RoleBinding, replacing one whose immutable
// roleRef differs.
func ensureRoleBinding(ctx context.Context, cs kubernetes.Interface, rb *rbacv1.RoleBinding) error {
	c := cs.RbacV1().RoleBindings(rb.Namespace)
	mutate := func(cur *rbacv1.RoleBinding) { cur.Subjects = rb.Subjects; cur.Labels = rb.Labels }
	cur, err := c.Get(ctx, rb.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return err
	case cur.RoleRef != rb.RoleRef:
		if err := c.Delete(ctx, rb.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	default:
		return update(ctx, c, cur, mutate)
	}
	return apply(ctx, c, rb, mutate)
}

// client is the part of a typed client-go resource client apply needs.
type client[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// kubeObject is a typed Kubernetes object, as apply reads and writes it.
type kubeObject interface {
	GetName() string
	DeepCopyObject() runtime.Object
}

// apply creates obj, or makes the existing object what mutate makes of
// it. The object is read first: one that is already so is not written
// (each probe's first script, and every later one's bindings, go through
// here), so that granting rights that stand costs one read an object.
func apply[T kubeObject](ctx context.Context, c client[T], obj T, mutate func(T)) error {
	cur, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err = c.Create(ctx, obj, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
			return err
		}
		// Made by another since the read.
		cur, err = c.Get(ctx, obj.GetName(), metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	return update(ctx, c, cur, mutate)
}

// update writes what mutate makes of cur, when that differs from cur.
func update[T kubeObject](ctx context.Context, c client[T], cur T, mutate func(T)) error {
	want, ok := cur.DeepCopyObject().(T)
	if !ok {
		return fmt.Errorf("copying %s: not an object of its own type", cur.GetName())
	}
	mutate(want)
	if equality.Semantic.DeepEqual(cur, want) {
		return nil
	}
	_, err := c.Update(ctx, want, metav1.UpdateOptions{})
	return err
}

// issueTokens issues a token to the learner's and the grader's service
// accounts through the TokenRequest API, which the API server answers
// itself: nothing waits for a controller. Tokens issued before stay valid
// until they expire or their account is deleted.
func issueTokens(ctx context.Context, cs kubernetes.Interface, ca []byte) (learner, grader Identity, err error) {
	if learner, err = issueToken(ctx, cs, LearnerAccount, ca, learnerTokenLifetime); err != nil {
		return Identity{}, Identity{}, err
	}
	if grader, err = issueToken(ctx, cs, GraderAccount, ca, graderTokenLifetime); err != nil {
		return Identity{}, Identity{}, err
	}
	return learner, grader, nil
}

func issueToken(ctx context.Context, cs kubernetes.Interface, account string, ca []byte, lifetime time.Duration) (Identity, error) {
	secs := int64(lifetime / time.Second)
	asked := time.Now()
	tr, err := cs.CoreV1().ServiceAccounts(SystemNamespace).CreateToken(ctx, account, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs},
	}, metav1.CreateOptions{})
	if err != nil {
		return Identity{}, fmt.Errorf("issuing a token to %s: %w", account, err)
	}
	if tr.Status.Token == "" {
		return Identity{}, fmt.Errorf("issuing a token to %s: the API server answered an empty token", account)
	}
	expires := tr.Status.ExpirationTimestamp.Time
	if expires.IsZero() {
		expires = asked.Add(lifetime)
	}
	return Identity{Token: tr.Status.Token, CAData: ca, Expires: expires.UTC()}, nil
}

// graderRenewBefore is how much of the grader's token must be left for a
// check round to use it; a shorter rest is renewed first.
const graderRenewBefore = 10 * time.Minute

// graderTokenSlack tolerates the API server answering a lifetime a little
// longer than asked.
const graderTokenSlack = 5 * time.Minute

// graderNeedsRenewal reports whether a grader token expiring at expires
// must be replaced at now: its expiry is unknown, less than
// graderRenewBefore is left, or it lasts longer than labctl issues grader
// tokens for (one issued by an earlier labctl, valid for a year).
func graderNeedsRenewal(expires, now time.Time) bool {
	left := expires.Sub(now)
	return expires.IsZero() || left < graderRenewBefore || left > graderTokenLifetime+graderTokenSlack
}

// TokenExpiry reads the expiry (the exp claim) of a service account token,
// a JWT the API server issued to labctl over TLS; zero when the token is
// not a JWT with one. The signature is not checked: the API server does,
// and the expiry only decides when labctl asks for a new token.
func TokenExpiry(token string) time.Time {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp <= 0 {
		return time.Time{}
	}
	return time.Unix(claims.Exp, 0).UTC()
}
