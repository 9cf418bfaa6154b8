package provision

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/labctl/labctl/lab"
)

// trackerStore lists and deletes a fake clientset's objects, as the
// metadata client does a cluster's, and records the deletes. fail makes
// listing one resource type fail; a delete of an object named keep is
// accepted and does nothing, as if a finalizer held it.
type trackerStore struct {
	cs   *fake.Clientset
	fail string
	keep string
	// afterList, when set, runs after each list, as a controller acting
	// between two lists of one look would.
	afterList func(gvr schema.GroupVersionResource, ns string)

	mu      sync.Mutex
	deletes []string
}

var kinds = map[string]string{"configmaps": "ConfigMap", "serviceaccounts": "ServiceAccount", "pods": "Pod",
	"rolebindings": "RoleBinding", "roles": "Role", "events": "Event", "endpointslices": "EndpointSlice"}

func (l *trackerStore) List(_ context.Context, gvr schema.GroupVersionResource, ns string) ([]metav1.PartialObjectMetadata, error) {
	if gvr.Resource == l.fail {
		return nil, fmt.Errorf("%s are unreachable", gvr.Resource)
	}
	obj, err := l.cs.Tracker().List(gvr, gvr.GroupVersion().WithKind(kinds[gvr.Resource]), ns)
	if err != nil {
		return nil, err
	}
	if l.afterList != nil {
		defer l.afterList(gvr, ns)
	}
	items, err := meta.ExtractList(obj)
	if err != nil {
		return nil, err
	}
	var out []metav1.PartialObjectMetadata
	for _, it := range items {
		a, err := meta.Accessor(it)
		if err != nil {
			return nil, err
		}
		out = append(out, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: a.GetName(), Namespace: a.GetNamespace(), Labels: a.GetLabels(),
			UID: a.GetUID(), ResourceVersion: a.GetResourceVersion(), Generation: a.GetGeneration(),
			Annotations: a.GetAnnotations(), OwnerReferences: a.GetOwnerReferences(), Finalizers: a.GetFinalizers(),
			ManagedFields: a.GetManagedFields(), DeletionTimestamp: a.GetDeletionTimestamp(),
		}})
	}
	return out, nil
}

func (l *trackerStore) Delete(_ context.Context, gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
		return fmt.Errorf("deleting %s/%s with grace period %v, want 0", gvr.Resource, name, opts.GracePeriodSeconds)
	}
	l.deletes = append(l.deletes, ns+"/"+gvr.Resource+"/"+name)
	if name == l.keep {
		return nil
	}
	if err := l.cs.Tracker().Delete(gvr, ns, name); err != nil {
		return err
	}
	if gvr.Resource == "serviceaccounts" && name == "default" {
		// The controller manager makes it again.
		return l.cs.Tracker().Add(&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}})
	}
	return nil
}

func (l *trackerStore) deleted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Clone(l.deletes)
	slices.Sort(out)
	return slices.Compact(out)
}

func resource(name string, verbs ...string) metav1.APIResource {
	return metav1.APIResource{Name: name, Namespaced: true, Kind: kinds[name], Verbs: verbs}
}

var listDelete = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// resetFixture is a lab cluster as up leaves it: both namespaces hold the
// default ServiceAccount, kube-root-ca.crt and the learner's binding.
func resetFixture(t *testing.T) (*nsReset, *fake.Clientset, *trackerStore) {
	t.Helper()
	return resetFixtureOf(t, testLab())
}

// resetFixtureOf is resetFixture of the lab l.
func resetFixtureOf(t *testing.T, l *lab.Lab) (*nsReset, *fake.Clientset, *trackerStore) {
	t.Helper()
	cs := fakeCluster()
	ctx := context.Background()
	cs.Fake.Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			resource("configmaps", listDelete...), resource("serviceaccounts", listDelete...), resource("pods", listDelete...),
			{Name: "bindings", Namespaced: true, Kind: "Binding", Verbs: []string{"create"}},
		}},
		{GroupVersion: "rbac.authorization.k8s.io/v1", APIResources: []metav1.APIResource{
			resource("rolebindings", listDelete...), resource("roles", listDelete...),
		}},
	}
	if _, _, err := SetupCluster(ctx, cs, []byte("CA"), l); err != nil {
		t.Fatal(err)
	}
	for _, ns := range l.Cluster.Namespaces {
		byController := metav1.CreateOptions{FieldManager: controllerManager}
		cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns}}, byController)
		cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: ns,
				Annotations: map[string]string{"kubernetes.io/description": "the cluster's CA"}},
			Data: map[string]string{"ca.crt": "CA"},
		}, byController)
	}
	cs.ClearActions()
	store := &trackerStore{cs: cs}
	r := &nsReset{cs: cs, objs: store, disc: cs.Discovery().(*fakediscovery.FakeDiscovery),
		lab: l, wait: time.Minute, poll: time.Millisecond}
	return r, cs, store
}

// deletedNamespaces returns the namespaces deleted, each delete checked to
// skip the grace period.
func deletedNamespaces(t *testing.T, cs *fake.Clientset) []string {
	t.Helper()
	var nss []string
	for _, a := range cs.Actions() {
		d, ok := a.(k8stesting.DeleteAction)
		if !ok || d.GetResource().Resource != "namespaces" {
			continue
		}
		nss = append(nss, d.GetName())
		if g := d.GetDeleteOptions().GracePeriodSeconds; g == nil || *g != 0 {
			t.Errorf("namespace %s deleted with grace period %v, want 0", d.GetName(), g)
		}
	}
	return nss
}

func TestResetNamespacesKeepsPristine(t *testing.T) {
	r, cs, store := resetFixture(t)
	ctx := context.Background()
	if err := r.run(ctx); err != nil {
		t.Fatal(err)
	}
	if del, nss := store.deleted(), deletedNamespaces(t, cs); len(del)+len(nss) != 0 {
		t.Errorf("a pristine lab lost objects %v and namespaces %v", del, nss)
	}
	// The learner's access is granted again even so.
	rb, err := cs.RbacV1().RoleBindings("argo").Get(ctx, learnerRole, metav1.GetOptions{})
	if err != nil || rb.RoleRef.Name != LearnerAdminRole {
		t.Fatalf("learner binding = %+v, %v", rb, err)
	}
}

func TestResetNamespacesDeletesWhatChanged(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		change func(*fake.Clientset)
		want   []string
	}{
		{"a learner's ConfigMap and pod", func(cs *fake.Clientset) {
			cs.CoreV1().ConfigMaps("argo").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argo"}}, metav1.CreateOptions{})
			cs.CoreV1().Pods("argo").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argo"}}, metav1.CreateOptions{})
		}, []string{"argo/configmaps/web", "argo/pods/web"}},
		{"the default ServiceAccount given a pull secret", func(cs *fake.Clientset) {
			sa, _ := cs.CoreV1().ServiceAccounts("argo").Get(ctx, "default", metav1.GetOptions{})
			sa.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "regcred"}}
			cs.CoreV1().ServiceAccounts("argo").Update(ctx, sa, metav1.UpdateOptions{FieldManager: controllerManager})
		}, []string{"argo/serviceaccounts/default"}},
		{"kube-root-ca.crt edited", func(cs *fake.Clientset) {
			cm, _ := cs.CoreV1().ConfigMaps("argo").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
			cm.Data["extra"] = "x"
			cs.CoreV1().ConfigMaps("argo").Update(ctx, cm, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		}, []string{"argo/configmaps/kube-root-ca.crt"}},
		{"the learner's binding given another subject", func(cs *fake.Clientset) {
			rb, _ := cs.RbacV1().RoleBindings("argo").Get(ctx, learnerRole, metav1.GetOptions{})
			rb.Subjects = append(rb.Subjects, rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: "argo"})
			cs.RbacV1().RoleBindings("argo").Update(ctx, rb, metav1.UpdateOptions{})
		}, []string{"argo/rolebindings/labctl-learner"}},
		{"a Role of the learner's name the lab does not ask for", func(cs *fake.Clientset) {
			cs.RbacV1().Roles("argo").Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: learnerRole, Namespace: "argo"}}, metav1.CreateOptions{})
		}, []string{"argo/roles/labctl-learner"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, cs, store := resetFixture(t)
			c.change(cs)
			cs.ClearActions()
			if err := r.run(ctx); err != nil {
				t.Fatal(err)
			}
			if got := store.deleted(); !slices.Equal(got, c.want) {
				t.Errorf("deleted %v, want %v (the rest is as up left it)", got, c.want)
			}
			if nss := deletedNamespaces(t, cs); len(nss) != 0 {
				t.Errorf("namespaces %v deleted; their content is enough", nss)
			}
			extra, err := r.unexpected(ctx, "argo", mustTypes(t, r))
			if err != nil || len(extra) != 0 {
				t.Errorf("after the reset argo still holds %v (%v)", extra, err)
			}
			if _, err := cs.RbacV1().RoleBindings("argo").Get(ctx, learnerRole, metav1.GetOptions{}); err != nil {
				t.Fatalf("learner access not restored: %v", err)
			}
		})
	}
}

// TestResetNamespacesListsEventsOnce: events, which the core group and
// events.k8s.io both serve, are listed and deleted once, from the core
// group; without the core group, from events.k8s.io.
func TestResetNamespacesListsEventsOnce(t *testing.T) {
	r, cs, store := resetFixture(t)
	ctx := context.Background()
	cs.Fake.Resources = append(cs.Fake.Resources,
		&metav1.APIResourceList{GroupVersion: "events.k8s.io/v1", APIResources: []metav1.APIResource{resource("events", listDelete...)}})
	cs.Fake.Resources[0].APIResources = append(cs.Fake.Resources[0].APIResources, resource("events", listDelete...))
	for _, name := range []string{"web.1", "web.2"} {
		cs.CoreV1().Events("argo").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argo"}}, metav1.CreateOptions{})
	}
	gvrs, err := r.resourceTypes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, gvr := range gvrs {
		if gvr.Resource == "events" {
			events = append(events, gvr.String())
		}
	}
	if want := []string{coreEvents.String()}; !slices.Equal(events, want) {
		t.Errorf("event types listed %v, want %v", events, want)
	}
	if err := r.run(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := store.deleted(), []string{"argo/events/web.1", "argo/events/web.2"}; !slices.Equal(got, want) || len(store.deletes) != len(want) {
		t.Errorf("deleted %v (%d deletes), want %v, each once", got, len(store.deletes), want)
	}

	// A cluster that serves events only from events.k8s.io still has
	// them listed.
	cs.Fake.Resources[0].APIResources = slices.DeleteFunc(cs.Fake.Resources[0].APIResources,
		func(a metav1.APIResource) bool { return a.Name == "events" })
	gvrs, err = r.resourceTypes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(gvrs, func(g schema.GroupVersionResource) bool { return g.Group == "events.k8s.io" }) {
		t.Errorf("without the core group's events, events.k8s.io's are not listed: %v", gvrs)
	}
}

func mustTypes(t *testing.T, r *nsReset) []schema.GroupVersionResource {
	t.Helper()
	gvrs, err := r.resourceTypes(context.Background())
	if err != nil || len(gvrs) != 5 {
		t.Fatalf("resource types %v, %v; want the 5 listable ones (bindings cannot be listed)", gvrs, err)
	}
	return gvrs
}

func TestResetNamespacesLabRules(t *testing.T) {
	r, cs, store := resetFixture(t)
	ctx := context.Background()
	r.lab.Access.Rules = []lab.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get"}}}
	if err := r.run(ctx); err != nil {
		t.Fatal(err)
	}
	// The first reset found the old binding unlike what the lab now asks
	// for; after it, both namespaces hold the lab's Role and binding, and a
	// second reset keeps them.
	if got := store.deleted(); !slices.Equal(got, []string{"argo/rolebindings/labctl-learner", "gitops-lab/rolebindings/labctl-learner"}) {
		t.Errorf("first reset deleted %v", got)
	}
	store.deletes = nil
	if err := r.run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := store.deleted(); len(got) != 0 {
		t.Errorf("the lab's own Role and binding were deleted: %v", got)
	}
	role, _ := cs.RbacV1().Roles("argo").Get(ctx, learnerRole, metav1.GetOptions{})
	role.Rules[0].Verbs = append(role.Rules[0].Verbs, "delete")
	cs.RbacV1().Roles("argo").Update(ctx, role, metav1.UpdateOptions{})
	if err := r.run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := store.deleted(); !slices.Equal(got, []string{"argo/roles/labctl-learner"}) {
		t.Errorf("deleted %v, want the widened Role", got)
	}
	role, err := cs.RbacV1().Roles("argo").Get(ctx, learnerRole, metav1.GetOptions{})
	if err != nil || !slices.Equal(role.Rules[0].Verbs, []string{"get"}) {
		t.Errorf("the lab's Role is not back: %+v, %v", role, err)
	}
}

// failingGroup answers discovery of one API group with an error.
type failingGroup struct {
	*fakediscovery.FakeDiscovery
	group string
}

func (f failingGroup) ServerResourcesForGroupVersionWithContext(ctx context.Context, gv string) (*metav1.APIResourceList, error) {
	if strings.HasPrefix(gv, f.group+"/") {
		return nil, errors.New("the group's server is down")
	}
	return f.FakeDiscovery.ServerResourcesForGroupVersionWithContext(ctx, gv)
}

func (f failingGroup) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	return f.ServerResourcesForGroupVersionWithContext(context.Background(), gv)
}

func TestResetNamespacesWhenDiscoveryFails(t *testing.T) {
	r, cs, store := resetFixture(t)
	var _ discovery.DiscoveryInterfaceWithContext = failingGroup{}
	r.disc = failingGroup{FakeDiscovery: r.disc.(*fakediscovery.FakeDiscovery), group: "rbac.authorization.k8s.io"}
	if err := r.run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if nss := deletedNamespaces(t, cs); !slices.Equal(nss, []string{"gitops-lab", "argo"}) {
		t.Errorf("deleted namespaces %v; when discovery is not whole every namespace must be deleted", nss)
	}
	if got := store.deleted(); len(got) != 0 {
		t.Errorf("objects deleted one by one %v", got)
	}
	if _, err := cs.CoreV1().Namespaces().Get(context.Background(), "argo", metav1.GetOptions{}); err != nil {
		t.Errorf("argo not created again: %v", err)
	}
}

func TestResetNamespacesWaitsForTerminating(t *testing.T) {
	r, cs, _ := resetFixture(t)
	ctx := context.Background()
	ns, _ := cs.CoreV1().Namespaces().Get(ctx, "argo", metav1.GetOptions{})
	ns.Status.Phase = corev1.NamespaceTerminating
	cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	// The namespace controller never finishes argo.
	cs.PrependReactor("delete", "namespaces", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, nil
	})
	r.wait = 50 * time.Millisecond
	err := r.run(ctx)
	var stuck *StuckNamespacesError
	if !errors.As(err, &stuck) || !slices.Equal(stuck.Namespaces, []string{"argo"}) {
		t.Fatalf("err = %v, want argo reported stuck", err)
	}
	if !strings.Contains(err.Error(), "kubectl get ns argo -o yaml") {
		t.Errorf("message lacks the way to look: %v", err)
	}
}

func TestResetNamespacesListFails(t *testing.T) {
	r, cs, store := resetFixture(t)
	store.fail = "configmaps"
	cs.CoreV1().Pods("gitops-lab").Create(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "gitops-lab"}}, metav1.CreateOptions{})
	err := r.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "namespace gitops-lab") || !strings.Contains(err.Error(), "configmaps are unreachable") {
		t.Fatalf("err = %v, want the failed list named", err)
	}
	if got := store.deleted(); len(got) != 0 {
		t.Errorf("deleted %v after a failed look", got)
	}
}

// TestResetNamespacesLateDependent: a ReplicaSet that made one more pod
// after the pods of a look were listed, and went before its own type was
// listed, leaves a pod that one clean look misses; reset looks until the
// namespace stays clear.
func TestResetNamespacesLateDependent(t *testing.T) {
	r, cs, store := resetFixture(t)
	ctx := context.Background()
	cs.CoreV1().ConfigMaps("argo").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "argo"}}, metav1.CreateOptions{})
	var mu sync.Mutex
	podLists := 0
	store.afterList = func(gvr schema.GroupVersionResource, ns string) {
		mu.Lock()
		defer mu.Unlock()
		if ns != "argo" || gvr.Resource != "pods" {
			return
		}
		// The second look's pod list: the first look found the
		// ConfigMap, the second finds nothing, and then the pod comes.
		if podLists++; podLists == 2 {
			cs.Tracker().Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-late", Namespace: "argo"}})
		}
	}
	if err := r.run(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := store.deleted(), []string{"argo/configmaps/web", "argo/pods/web-late"}; !slices.Equal(got, want) {
		t.Errorf("deleted %v, want %v", got, want)
	}
	if _, err := cs.CoreV1().Pods("argo").Get(ctx, "web-late", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the late pod is still there after the reset (%v)", err)
	}
}

func TestResetNamespacesStuckObject(t *testing.T) {
	r, cs, store := resetFixture(t)
	ctx := context.Background()
	cs.CoreV1().ConfigMaps("argo").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "argo"}}, metav1.CreateOptions{})
	store.keep = "held"
	r.wait = 50 * time.Millisecond
	err := r.run(ctx)
	var stuck *StuckObjectsError
	if !errors.As(err, &stuck) || stuck.Namespace != "argo" || !slices.Equal(stuck.Objects, []string{"configmaps/held"}) {
		t.Fatalf("err = %v, want configmaps/held reported stuck", err)
	}
	if !strings.Contains(err.Error(), "kubectl -n argo get configmaps/held -o yaml") {
		t.Errorf("message lacks the way to look: %v", err)
	}
}

// TestResetNamespacesGraderAndPodSecurity: the grader's access lives in a
// ClusterRole that reset restores, no Role in a lab namespace is taken for
// the grader's (a Role the learner made under its name is deleted), and the
// namespace's Pod Security labels are restored.
func TestResetNamespacesGraderAndPodSecurity(t *testing.T) {
	ctx := context.Background()
	reading := func() *lab.Lab {
		l := testLab()
		l.Steps = []lab.Step{{ID: "s", Checks: []lab.Check{{Name: "cm",
			Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "ConfigMap", Namespace: "argo", Name: "settings"}}}}}
		return l
	}
	r, cs, store := resetFixtureOf(t, reading())
	if err := r.run(ctx); err != nil {
		t.Fatal(err)
	}
	if del := store.deleted(); len(del) != 0 {
		t.Errorf("a pristine lab lost %v", del)
	}
	if _, err := cs.RbacV1().Roles("argo").Get(ctx, GraderRole, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the grader has a Role in argo, where the learner is admin: %v", err)
	}

	r, cs, store = resetFixtureOf(t, reading())
	forged := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: GraderRole, Namespace: "argo"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}}
	if _, err := cs.RbacV1().Roles("argo").Create(ctx, forged, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cr, _ := cs.RbacV1().ClusterRoles().Get(ctx, GraderRole, metav1.GetOptions{})
	cr.Rules = nil
	cs.RbacV1().ClusterRoles().Update(ctx, cr, metav1.UpdateOptions{})
	ns, _ := cs.CoreV1().Namespaces().Get(ctx, "argo", metav1.GetOptions{})
	ns.Labels[PodSecurityEnforce] = "privileged"
	cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
	if err := r.run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := store.deleted(); !slices.Equal(got, []string{"argo/roles/" + GraderRole}) {
		t.Errorf("deleted %v, want the Role the learner made under the grader's name", got)
	}
	cr, err := cs.RbacV1().ClusterRoles().Get(ctx, GraderRole, metav1.GetOptions{})
	if err != nil || len(cr.Rules) != 1 || cr.Rules[0].Resources[0] != "configmaps" ||
		!slices.Equal(cr.Rules[0].ResourceNames, []string{"settings"}) {
		t.Errorf("the grader's cluster role after reset = %+v, %v; want get on ConfigMap settings only", cr, err)
	}
	ns, _ = cs.CoreV1().Namespaces().Get(ctx, "argo", metav1.GetOptions{})
	if ns.Labels[PodSecurityEnforce] != lab.PodSecurityBaseline {
		t.Errorf("argo enforces %q after reset, want baseline", ns.Labels[PodSecurityEnforce])
	}
}

// listStore answers List from a map of resource to items, or to an error.
type listStore map[string]any

func (s listStore) List(_ context.Context, gvr schema.GroupVersionResource, _ string) ([]metav1.PartialObjectMetadata, error) {
	switch v := s[gvr.Resource].(type) {
	case error:
		return nil, v
	case []string:
		var out []metav1.PartialObjectMetadata
		for _, n := range v {
			out = append(out, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
		return out, nil
	}
	return nil, nil
}

func (listStore) Delete(context.Context, schema.GroupVersionResource, string, string, metav1.DeleteOptions) error {
	return errors.New("not deleting")
}

// listEach, the one way a reset and a checkpoint list a namespace, hands
// over every type's objects, passes over a type gone from the cluster or
// that cannot be listed, and names the type whose list failed.
func TestListEach(t *testing.T) {
	gr := schema.GroupResource{Resource: "widgets"}
	store := listStore{
		"configmaps": []string{"a", "b"},
		"pods":       []string{"web"},
		"widgets":    apierrors.NewNotFound(gr, ""),
		"gadgets":    apierrors.NewMethodNotSupported(gr, "list"),
	}
	gvrs := []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "pods"},
		{Group: "x.io", Version: "v1", Resource: "widgets"}, {Group: "x.io", Version: "v1", Resource: "gadgets"}}
	r := &nsReset{objs: store}
	var (
		mu  sync.Mutex
		got []string
	)
	err := r.listEach(context.Background(), "ns", gvrs, func(_ context.Context, gvr schema.GroupVersionResource, items []metav1.PartialObjectMetadata) error {
		mu.Lock()
		defer mu.Unlock()
		for _, it := range items {
			got = append(got, gvr.Resource+"/"+it.Name)
		}
		if len(items) == 0 {
			got = append(got, gvr.Resource+" empty")
		}
		return nil
	})
	slices.Sort(got)
	if want := []string{"configmaps/a", "configmaps/b", "pods/web"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("listed %v, %v; want %v", got, err, want)
	}
	store["pods"] = errors.New("the API server is down")
	err = r.listEach(context.Background(), "ns", gvrs, func(context.Context, schema.GroupVersionResource, []metav1.PartialObjectMetadata) error { return nil })
	if err == nil || err.Error() != "listing pods: the API server is down" {
		t.Errorf("a failed list: %v", err)
	}
}
