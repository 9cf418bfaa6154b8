package checks

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// mapper finds the resource serving a kind; a DeferredDiscoveryRESTMapper
// in the checker, a static one in tests.
type mapper interface {
	RESTMappingWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error)
}

// resetter is a mapper whose discovery cache can be dropped, so a kind
// installed after the first lookup (a CRD the learner applied) is found.
type resetter interface {
	ResetWithContext(ctx context.Context)
}

// kubeReader reads objects through a RESTMapper and a dynamic client.
type kubeReader struct {
	mapper mapper
	client dynamic.Interface
}

// NewKubeReader returns an ObjectReader for the cluster cfg names. It does
// not contact the cluster until the first Get, and it discovers each API
// group at most once (again only when a kind is not found).
func NewKubeReader(cfg *rest.Config) (ObjectReader, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating dynamic client: %w", err)
	}
	m := restmapper.NewDeferredDiscoveryRESTMapperWithContext(memory.NewMemCacheClientWithContext(dc.WithLegacyWithContext(context.Background())))
	return newKubeReader(m, dyn), nil
}

func newKubeReader(m mapper, client dynamic.Interface) *kubeReader {
	return &kubeReader{mapper: m, client: client}
}

// Get reads one object. A kind the cluster does not serve gives an error
// satisfying meta.IsNoMatchError, a missing object one satisfying
// apierrors.IsNotFound.
func (k *kubeReader) Get(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	gk := schema.GroupKind{Group: gv.Group, Kind: kind}
	mapping, err := k.mapper.RESTMappingWithContext(ctx, gk, gv.Version)
	if meta.IsNoMatchError(err) {
		if r, ok := k.mapper.(resetter); ok {
			r.ResetWithContext(ctx)
			mapping, err = k.mapper.RESTMappingWithContext(ctx, gk, gv.Version)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("finding the resource for %s %s: %w", apiVersion, kind, err)
	}
	var ri dynamic.ResourceInterface = k.client.Resource(mapping.Resource)
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = k.client.Resource(mapping.Resource).Namespace(namespace)
	}
	obj, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", describeObject(apiVersion, kind, namespace, name), err)
	}
	return obj.Object, nil
}

// describeObject names an object for messages: "apps/v1 Deployment
// gitops-lab/web", or "v1 Namespace gitops-lab" when cluster-scoped.
func describeObject(apiVersion, kind, namespace, name string) string {
	if namespace == "" {
		return fmt.Sprintf("%s %s %s", apiVersion, kind, name)
	}
	return fmt.Sprintf("%s %s %s/%s", apiVersion, kind, namespace, name)
}
