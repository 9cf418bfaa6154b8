package provision

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// controllerManager is the field manager of the objects Kubernetes itself
// puts in every namespace.
const controllerManager = "kube-controller-manager"

// StuckObjectsError names objects of a lab namespace that were deleted but
// did not go away in time.
type StuckObjectsError struct {
	Namespace string
	// Objects are "resource/name", e.g. "configmaps/web".
	Objects []string
	Wait    time.Duration
}

func (e *StuckObjectsError) Error() string {
	return fmt.Sprintf("objects of namespace %s still there %s after being deleted: %s (look for finalizers: `kubectl -n %s get %s -o yaml`)",
		e.Namespace, e.Wait, strings.Join(e.Objects, ", "), e.Namespace, e.Objects[0])
}

// objectStore lists and deletes the objects of one type in a namespace,
// by their metadata.
type objectStore interface {
	List(ctx context.Context, gvr schema.GroupVersionResource, ns string) ([]metav1.PartialObjectMetadata, error)
	Delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error
}

// metadataStore is the objectStore of a cluster.
type metadataStore struct{ md metadata.Interface }

func (m metadataStore) List(ctx context.Context, gvr schema.GroupVersionResource, ns string) ([]metav1.PartialObjectMetadata, error) {
	l, err := m.md.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

func (m metadataStore) Delete(ctx context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	return m.md.Resource(gvr).Namespace(ns).Delete(ctx, name, opts)
}

// object is one object of a namespace.
type object struct {
	gvr  schema.GroupVersionResource
	name string
}

func (o object) String() string { return o.gvr.GroupResource().String() + "/" + o.name }

// coreEvents are Kubernetes' events as the core group serves them.
var coreEvents = corev1.SchemeGroupVersion.WithResource("events")

// resourceTypes returns every namespaced resource type the cluster can list
// and delete, sorted; nil, without an error, when part of discovery failed
// and so the list would not be whole. Events are listed once, from the core
// group: events.k8s.io serves the same objects again, and deleting each
// twice was most of a reset's deletes.
func (r *nsReset) resourceTypes(ctx context.Context) ([]schema.GroupVersionResource, error) {
	lists, err := discovery.ServerPreferredNamespacedResourcesWithContext(ctx, r.disc)
	if discovery.IsGroupDiscoveryFailedError(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("discovering the cluster's resource types: %w", err)
	}
	set, err := discovery.GroupVersionResources(discovery.FilteredBy(discovery.SupportsAllVerbs{Verbs: []string{"list", "delete"}}, lists))
	if err != nil {
		return nil, fmt.Errorf("discovering the cluster's resource types: %w", err)
	}
	_, hasCoreEvents := set[coreEvents]
	out := make([]schema.GroupVersionResource, 0, len(set))
	for gvr := range set {
		if gvr.Group == "events.k8s.io" && gvr.Resource == "events" && hasCoreEvents {
			continue
		}
		out = append(out, gvr)
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionResource) int { return strings.Compare(a.String(), b.String()) })
	return out, nil
}

// settleLooks is how many looks in a row must find a namespace clear once
// something was deleted from it. One look lists type by type, so a
// controller whose owner goes during the look can make a dependent after
// its type was listed (a ReplicaSet's pod, listed before the ReplicaSet
// went); each further look catches one more level of owners
// (Deployment → ReplicaSet → Pod, CronJob → Job → Pod).
const settleLooks = 3

// clear deletes every object of ns that a fresh lab namespace does not
// hold, pods without a grace period and dependents in the background, and
// looks again until settleLooks looks in a row find none, at most r.wait. A
// namespace already as up left it costs one look.
func (r *nsReset) clear(ctx context.Context, ns string, gvrs []schema.GroupVersionResource) error {
	deadline := time.Now().Add(r.wait)
	need := 1
	for clean := 0; ; {
		extra, err := r.unexpected(ctx, ns, gvrs)
		if err != nil {
			return fmt.Errorf("looking into namespace %s: %w", ns, err)
		}
		if len(extra) == 0 {
			if clean++; clean >= need {
				return nil
			}
			if err := sleepCtx(ctx, r.poll); err != nil {
				return err
			}
			continue
		}
		clean, need = 0, settleLooks
		if time.Now().After(deadline) {
			names := make([]string, len(extra))
			for i, o := range extra {
				names[i] = o.String()
			}
			return &StuckObjectsError{Namespace: ns, Objects: names, Wait: r.wait}
		}
		now := int64(0)
		background := metav1.DeletePropagationBackground
		opts := metav1.DeleteOptions{GracePeriodSeconds: &now, PropagationPolicy: &background}
		err = parallel(ctx, extra, func(ctx context.Context, o object) error {
			if err := r.objs.Delete(ctx, o.gvr, ns, o.name, opts); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting %s from namespace %s: %w", o, ns, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := sleepCtx(ctx, r.poll); err != nil {
			return err
		}
	}
}

// sleepCtx waits d, or less when ctx ends first and then returns its error.
func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// unexpected lists every object of ns, type by type, and returns those a
// fresh lab namespace does not hold as they are.
func (r *nsReset) unexpected(ctx context.Context, ns string, gvrs []schema.GroupVersionResource) ([]object, error) {
	var (
		mu  sync.Mutex
		out []object
	)
	err := r.listEach(ctx, ns, gvrs, func(ctx context.Context, gvr schema.GroupVersionResource, items []metav1.PartialObjectMetadata) error {
		for i := range items {
			ok, err := r.expected(ctx, gvr, &items[i])
			if err != nil {
				return fmt.Errorf("reading %s %s: %w", gvr.GroupResource(), items[i].Name, err)
			}
			if !ok {
				mu.Lock()
				out = append(out, object{gvr: gvr, name: items[i].Name})
				mu.Unlock()
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b object) int { return strings.Compare(a.String(), b.String()) })
	return out, err
}

// listEach lists the objects of ns of every type in gvrs, a few types at
// once, and calls f with each type's (from several goroutines); a type the
// cluster no longer serves, or cannot list there, is passed over. A reset
// and a checkpoint's record both list a namespace this way.
func (r *nsReset) listEach(ctx context.Context, ns string, gvrs []schema.GroupVersionResource,
	f func(context.Context, schema.GroupVersionResource, []metav1.PartialObjectMetadata) error) error {
	return parallel(ctx, gvrs, func(ctx context.Context, gvr schema.GroupVersionResource) error {
		items, err := r.objs.List(ctx, gvr, ns)
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
		}
		return f(ctx, gvr, items)
	})
}

// parallel calls f on every item, a few at once, and returns the first
// error; after an error the items not yet started are skipped.
func parallel[T any](ctx context.Context, items []T, f func(context.Context, T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	todo := make(chan T)
	for range min(workers, len(items)) {
		wg.Go(func() {
			for it := range todo {
				if err := f(ctx, it); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		})
	}
feed:
	for _, it := range items {
		select {
		case todo <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(todo)
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		// Only the caller's context can have ended without an error.
		return ctx.Err()
	}
	return firstErr
}

// expected reports whether obj is one that Kubernetes or labctl's setup
// puts in a lab namespace, as they left it.
func (r *nsReset) expected(ctx context.Context, gvr schema.GroupVersionResource, obj *metav1.PartialObjectMetadata) (bool, error) {
	if obj.DeletionTimestamp != nil {
		return false, nil
	}
	ns, name := obj.Namespace, obj.Name
	core, rbac := gvr.Group == corev1.GroupName, gvr.Group == rbacv1.GroupName
	switch {
	case core && gvr.Resource == "serviceaccounts" && name == "default":
		if !onlyManager(obj, controllerManager, fieldManager) {
			return false, nil
		}
		sa, err := r.cs.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		return len(sa.Secrets) == 0 && len(sa.ImagePullSecrets) == 0 && sa.AutomountServiceAccountToken == nil &&
			len(sa.Labels) == 0 && len(sa.Annotations) == 0, nil
	case core && gvr.Resource == "configmaps" && name == "kube-root-ca.crt":
		return onlyManager(obj, controllerManager) && len(obj.Labels) == 0, nil
	case rbac && gvr.Resource == "rolebindings" && name == learnerRole:
		rb, err := r.cs.RbacV1().RoleBindings(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		want := learnerBinding(r.lab, ns, r.labels())
		return rb.RoleRef == want.RoleRef && reflect.DeepEqual(rb.Subjects, want.Subjects) &&
			reflect.DeepEqual(rb.Labels, want.Labels) && len(rb.Annotations) == 0, nil
	case rbac && gvr.Resource == "roles" && name == learnerRole && len(r.lab.Access.Rules) > 0:
		role, err := r.cs.RbacV1().Roles(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, ignoreNotFound(err)
		}
		return reflect.DeepEqual(role.Rules, policyRules(r.lab.Access.Rules)) &&
			reflect.DeepEqual(role.Labels, r.labels()) && len(role.Annotations) == 0, nil
	}
	return false, nil
}

// learnerBinding is the RoleBinding grantLearner gives the learner in ns.
func learnerBinding(l *lab.Lab, ns string, labels map[string]string) *rbacv1.RoleBinding {
	ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: LearnerAdminRole}
	if len(l.Access.Rules) > 0 {
		ref = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: learnerRole}
	}
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: learnerRole, Namespace: ns, Labels: labels},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: LearnerAccount, Namespace: SystemNamespace}},
		RoleRef:    ref,
	}
}

// onlyManager reports whether every field of obj was written by one of
// managers.
func onlyManager(obj *metav1.PartialObjectMetadata, managers ...string) bool {
	for _, f := range obj.ManagedFields {
		if !slices.Contains(managers, f.Manager) {
			return false
		}
	}
	return true
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

const (
	// namespaceDeleteWait bounds the wait for the lab's namespaces, or what
	// they hold, to go away.
	namespaceDeleteWait = 2 * time.Minute
	// namespacePoll is how often a deleted namespace or object is looked
	// for.
	namespacePoll = 100 * time.Millisecond
	// workers is how many lists or deletes run at once when a namespace is
	// inspected or cleared.
	workers = 8
)

// StuckNamespacesError names namespaces that did not finish terminating.
type StuckNamespacesError struct {
	Namespaces []string
	Wait       time.Duration
}

func (e *StuckNamespacesError) Error() string {
	return fmt.Sprintf("namespaces still terminating after %s: %s (look for finalizers: `kubectl get ns %s -o yaml`)",
		e.Wait, strings.Join(e.Namespaces, ", "), e.Namespaces[0])
}

// resetNamespaces resets l's namespaces in the cluster admin reaches;
// cluster names it in messages.
func resetNamespaces(ctx context.Context, admin *rest.Config, l *lab.Lab, cluster string) error {
	r, err := newNSReset(admin, l, cluster)
	if err != nil {
		return err
	}
	return r.run(ctx)
}

// newNSReset makes the clients that inspect and reset l's namespaces in
// the cluster admin reaches; cluster names it in messages.
func newNSReset(admin *rest.Config, l *lab.Lab, cluster string) (*nsReset, error) {
	cfg := rest.CopyConfig(admin)
	// A namespace is inspected with one list per resource type; the
	// client's default of 5 requests a second would make that the slowest
	// part of a reset.
	cfg.QPS, cfg.Burst = 200, 400
	// Listing every type lists deprecated ones too (v1 Endpoints); their
	// warnings say nothing to the learner.
	cfg.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to cluster %s: %w", cluster, err)
	}
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to cluster %s: %w", cluster, err)
	}
	return &nsReset{cs: cs, objs: metadataStore{md}, disc: cs.Discovery(), lab: l, wait: namespaceDeleteWait, poll: namespacePoll}, nil
}

// nsReset resets a lab's namespaces through these clients.
type nsReset struct {
	cs   kubernetes.Interface
	objs objectStore
	disc discovery.DiscoveryInterfaceWithContext
	lab  *lab.Lab
	wait time.Duration
	poll time.Duration
}

func (r *nsReset) run(ctx context.Context) error {
	nss := r.lab.Cluster.Namespaces
	nsLabels, err := namespaceLabels(r.lab)
	if err != nil {
		return err
	}
	grants, err := labGraderGrants(ctx, r.disc, r.lab)
	if err != nil {
		return err
	}
	gvrs, err := r.resourceTypes(ctx)
	if err != nil {
		return err
	}
	var gone []string
	for _, ns := range nss {
		n, err := r.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			continue
		case err != nil:
			return fmt.Errorf("looking up namespace %s: %w", ns, err)
		case gvrs == nil || n.DeletionTimestamp != nil || n.Status.Phase == corev1.NamespaceTerminating:
			if err := r.deleteNamespace(ctx, ns); err != nil {
				return err
			}
			gone = append(gone, ns)
		default:
			if err := r.clear(ctx, ns, gvrs); err != nil {
				return err
			}
		}
	}
	if err := r.waitGone(ctx, gone); err != nil {
		return err
	}
	labels := r.labels()
	for _, ns := range nss {
		if err := ensureNamespace(ctx, r.cs, ns, nsLabels); err != nil {
			return err
		}
	}
	if err := grantLearner(ctx, r.cs, r.lab, labels, false); err != nil {
		return err
	}
	if err := grantGrader(ctx, r.cs, grants, labels); err != nil {
		return err
	}
	return ensureDefaultServiceAccounts(ctx, r.cs, nss)
}

func (r *nsReset) labels() map[string]string {
	return map[string]string{sandbox.LabelLab: r.lab.Metadata.Name}
}

// deleteNamespace deletes ns and, so that the namespace controller need not
// wait out their grace periods, its pods at once.
func (r *nsReset) deleteNamespace(ctx context.Context, ns string) error {
	now := int64(0)
	background := metav1.DeletePropagationBackground
	err := r.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{GracePeriodSeconds: &now, PropagationPolicy: &background})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	err = r.cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &now}, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the pods of namespace %s: %w", ns, err)
	}
	return nil
}

// waitGone waits, at most r.wait, until none of nss exists.
func (r *nsReset) waitGone(ctx context.Context, nss []string) error {
	wctx, cancel := context.WithTimeout(ctx, r.wait)
	defer cancel()
	remaining := slices.Clone(nss)
	for len(remaining) > 0 {
		var still []string
		for _, ns := range remaining {
			_, err := r.cs.CoreV1().Namespaces().Get(wctx, ns, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil && wctx.Err() == nil:
				return fmt.Errorf("waiting for namespace %s to go: %w", ns, err)
			default:
				still = append(still, ns)
			}
		}
		if remaining = still; len(remaining) == 0 {
			break
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &StuckNamespacesError{Namespaces: remaining, Wait: r.wait}
		case <-time.After(r.poll):
		}
	}
	return nil
}
