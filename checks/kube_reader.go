package checks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/internal/mutant"
	"github.com/labctl/labctl/lab"
)

// mapper finds the resource serving a kind: a groupVersionMapper in the
// checker, a static one in tests.
type mapper interface {
	RESTMappingWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error)
}

// kubeReader reads objects through a RESTMapper and a dynamic client.
type kubeReader struct {
	mapper mapper
	client dynamic.Interface
	// agent is the cluster's network policy agent as reach checks ask
	// it; nil in tests that do without.
	agent policyAgent
	// syncs is the round's one wait for the agent's syncs, made at its
	// first use.
	syncsOnce sync.Once
	syncs     *syncWaiter
	// sealKey seals the matrix checks' probers (proberSealKey).
	sealKey []byte
	// matrixMu lets one matrix check at a time find or make its probers.
	matrixMu sync.Mutex
	// gets are the reads of objects under way (Get), by object.
	getsMu sync.Mutex
	gets   map[string]*inflightGet
	// round is the secret of the round's tries (proberRound).
	roundOnce sync.Once
	round     string
}

// agentWaiter is the wait for the agent's syncs that the round's reach
// checks share.
func (k *kubeReader) agentWaiter() *syncWaiter {
	k.syncsOnce.Do(func() { k.syncs = newSyncWaiter(k.agent, agentPollEvery, agentAskEvery) })
	return k.syncs
}

// NewKubeReader returns an ObjectReader for the cluster cfg names. It does
// not contact the cluster until the first Get, asks the cluster about each
// group version at most once, and its clients share one connection.
func NewKubeReader(cfg *rest.Config) (ObjectReader, error) {
	hc, err := kubeHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("creating dynamic client: %w", err)
	}
	k := newKubeReader(newBuiltinMapper(newGroupVersionMapper(dc)), dyn)
	k.sealKey = proberSealKey(cfg)
	if k.agent, err = newKubePolicyAgent(cfg, hc); err != nil {
		return nil, err
	}
	return k, nil
}

func newKubeReader(m mapper, client dynamic.Interface) *kubeReader {
	return &kubeReader{mapper: m, client: client}
}

// resource is the client of kind's resource: in namespace when the kind is
// namespaced and namespace is set, else across the cluster. A kind the
// cluster does not serve gives an error satisfying meta.IsNoMatchError.
func (k *kubeReader) resource(ctx context.Context, apiVersion, kind, namespace string) (dynamic.ResourceInterface, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	mapping, err := k.mapper.RESTMappingWithContext(ctx, schema.GroupKind{Group: gv.Group, Kind: kind}, gv.Version)
	if err != nil {
		return nil, fmt.Errorf("finding the resource for %s %s: %w", apiVersion, kind, err)
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace && namespace != "" {
		return k.client.Resource(mapping.Resource).Namespace(namespace), nil
	}
	return k.client.Resource(mapping.Resource), nil
}

// inflightGet is a read of one object under way, which the checks that
// ask for the same object meanwhile wait for rather than read again.
type inflightGet struct {
	done chan struct{}
	obj  map[string]any
	err  error
}

// Get reads one object. A kind the cluster does not serve gives an error
// satisfying meta.IsNoMatchError, a missing object one satisfying
// apierrors.IsNotFound. Checks of the round that ask for an object while
// it is being read share that one read (each gets its own copy); a read
// asked after it ended reads again, so a check that waits for a change
// sees it.
func (k *kubeReader) Get(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	key := strings.Join([]string{apiVersion, kind, namespace, name}, "\x00")
	k.getsMu.Lock()
	if c, ok := k.gets[key]; ok {
		k.getsMu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		// A read its own check's deadline cut short answers nothing for
		// this one.
		if c.err != nil && (errors.Is(c.err, context.Canceled) || errors.Is(c.err, context.DeadlineExceeded)) && ctx.Err() == nil {
			return k.get(ctx, apiVersion, kind, namespace, name)
		}
		return c.answer()
	}
	if k.gets == nil {
		k.gets = map[string]*inflightGet{}
	}
	c := &inflightGet{done: make(chan struct{})}
	k.gets[key] = c
	k.getsMu.Unlock()
	c.obj, c.err = k.get(ctx, apiVersion, kind, namespace, name)
	k.getsMu.Lock()
	delete(k.gets, key)
	k.getsMu.Unlock()
	close(c.done)
	return c.answer()
}

// answer is the read's object, a copy for each who asked, or its error.
func (c *inflightGet) answer() (map[string]any, error) {
	if c.err != nil {
		return nil, c.err
	}
	return mutant.Copy(c.obj), nil
}

// get reads one object from the cluster.
func (k *kubeReader) get(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	ri, err := k.resource(ctx, apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", describeObject(apiVersion, kind, namespace, name), err)
	}
	return obj.Object, nil
}

// List lists the objects of kind in namespace (every namespace when it is
// empty, or for a cluster-scoped kind) whose labels match selector, page
// by page, and refuses more than maxSelected of them.
func (k *kubeReader) List(ctx context.Context, apiVersion, kind, namespace, selector string) ([]map[string]any, error) {
	ri, err := k.resource(ctx, apiVersion, kind, namespace)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	opts := metav1.ListOptions{LabelSelector: selector, Limit: 250}
	for {
		page, err := ri.List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing %s %s: %w", apiVersion, kind, err)
		}
		for _, item := range page.Items {
			out = append(out, item.Object)
		}
		if len(out) > maxSelected {
			return nil, fmt.Errorf("listing %s %s: more than %d objects match %q; select fewer with a narrower selector or a namespace", apiVersion, kind, maxSelected, selector)
		}
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// accessReviews is the resource of SubjectAccessReviews.
var accessReviews = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"}

// Review asks the API server whether the identity of a may do what a
// says (a SubjectAccessReview), and returns its answer.
func (k *kubeReader) Review(ctx context.Context, a *lab.AccessCheck) (bool, error) {
	review := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1",
		"kind":       "SubjectAccessReview",
		"spec":       accessReviewSpec(a),
	}}
	got, err := k.client.Resource(accessReviews).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("asking the API server about %s: %w", canI(a), err)
	}
	allowed, _, _ := unstructured.NestedBool(got.Object, "status", "allowed")
	return allowed, nil
}

// Ask asks the API server q (a SubjectAccessReview) and returns its answer.
func (k *kubeReader) Ask(ctx context.Context, q AccessQuestion) (AccessAnswer, error) {
	attrs := map[string]any{"verb": q.Verb, "group": q.Group, "resource": q.Resource}
	for key, v := range map[string]string{"subresource": q.Subresource, "namespace": q.Namespace, "name": q.Name} {
		if v != "" {
			attrs[key] = v
		}
	}
	groups := make([]any, len(q.Groups))
	for i, g := range q.Groups {
		groups[i] = g
	}
	spec := map[string]any{"groups": groups, "resourceAttributes": attrs}
	if q.User != "" {
		spec["user"] = q.User
	}
	review := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1",
		"kind":       "SubjectAccessReview",
		"spec":       spec,
	}}
	got, err := k.client.Resource(accessReviews).Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return AccessAnswer{}, fmt.Errorf("asking the API server whether %s may %s %s: %w", cmp.Or(q.User, strings.Join(q.Groups, ",")), q.Verb, q.Resource, err)
	}
	allowed, _, _ := unstructured.NestedBool(got.Object, "status", "allowed")
	reason, _, _ := unstructured.NestedString(got.Object, "status", "reason")
	return AccessAnswer{Allowed: allowed, Reason: reason}, nil
}

// describeObject names an object for messages: "apps/v1 Deployment
// gitops-lab/web", or "v1 Namespace gitops-lab" when cluster-scoped.
func describeObject(apiVersion, kind, namespace, name string) string {
	if namespace == "" {
		return fmt.Sprintf("%s %s %s", apiVersion, kind, name)
	}
	return fmt.Sprintf("%s %s %s/%s", apiVersion, kind, namespace, name)
}

// groupVersionLister is the part of discovery a groupVersionMapper uses.
type groupVersionLister interface {
	ServerResourcesForGroupVersionWithContext(ctx context.Context, groupVersion string) (*metav1.APIResourceList, error)
}

// groupVersionMapper maps a kind to its resource by asking the cluster for
// the resources of that one group version (GET /apis/apps/v1), once per
// group version. A checker process serves one round, so a kind installed
// after a round (a CRD the learner applied) is found by the next one. Full
// discovery of every group would cost more than the round's checks.
type groupVersionMapper struct {
	lister groupVersionLister
	mu     sync.Mutex
	lists  map[schema.GroupVersion]*groupVersionResources
}

// groupVersionResources is one group version's answer, fetched once.
type groupVersionResources struct {
	mu   sync.Mutex
	done bool
	list *metav1.APIResourceList
	err  error
}

func newGroupVersionMapper(l groupVersionLister) *groupVersionMapper {
	return &groupVersionMapper{lister: l, lists: map[schema.GroupVersion]*groupVersionResources{}}
}

// RESTMappingWithContext maps gk in the first of versions, which must be
// given: a lab's kube checks always name their apiVersion.
func (m *groupVersionMapper) RESTMappingWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) == 0 || versions[0] == "" {
		return nil, fmt.Errorf("no version given for kind %s", gk)
	}
	gv := schema.GroupVersion{Group: gk.Group, Version: versions[0]}
	list, err := m.resources(ctx, gv)
	if apierrors.IsNotFound(err) {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions[:1]}
	}
	if err != nil {
		return nil, fmt.Errorf("discovering the resources of %s: %w", gv, err)
	}
	for _, r := range list.APIResources {
		if r.Kind != gk.Kind || strings.Contains(r.Name, "/") {
			continue
		}
		scope := meta.RESTScopeRoot
		if r.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		return &meta.RESTMapping{Resource: gv.WithResource(r.Name), GroupVersionKind: gv.WithKind(gk.Kind), Scope: scope}, nil
	}
	return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions[:1]}
}

// resources returns gv's resource list, asking the cluster the first time.
// Checks running at once share one request. An answer cut short by the
// asking check's own deadline is not kept for the others.
func (m *groupVersionMapper) resources(ctx context.Context, gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	m.mu.Lock()
	e, ok := m.lists[gv]
	if !ok {
		e = &groupVersionResources{}
		m.lists[gv] = e
	}
	m.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.done {
		return e.list, e.err
	}
	list, err := m.lister.ServerResourcesForGroupVersionWithContext(ctx, gv.String())
	if err == nil && len(list.APIResources) == 0 && gv.Group == "" {
		// The client answers an empty list for a missing core group version.
		err = apierrors.NewNotFound(schema.GroupResource{}, gv.String())
	}
	if ctx.Err() != nil {
		return nil, err
	}
	e.list, e.err, e.done = list, err, true
	return list, err
}
