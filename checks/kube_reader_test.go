package checks

import (
	"context"
	"errors"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// listerStub answers discovery of single group versions from a table and
// counts the requests.
type listerStub struct {
	mu    sync.Mutex
	calls map[string]int
	lists map[string][]metav1.APIResource
	err   error
}

func (l *listerStub) ServerResourcesForGroupVersionWithContext(ctx context.Context, gv string) (*metav1.APIResourceList, error) {
	l.mu.Lock()
	l.calls[gv]++
	l.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if l.err != nil {
		return nil, l.err
	}
	rs, ok := l.lists[gv]
	if !ok && gv != "v1" {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv)
	}
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: rs}, nil
}

func newListerStub() *listerStub {
	return &listerStub{calls: map[string]int{}, lists: map[string][]metav1.APIResource{
		"apps/v1": {
			{Name: "deployments", Kind: "Deployment", Namespaced: true},
			{Name: "deployments/scale", Kind: "Scale", Namespaced: true},
			{Name: "deployments/status", Kind: "Deployment", Namespaced: true},
		},
		"rbac.authorization.k8s.io/v1": {{Name: "clusterroles", Kind: "ClusterRole"}},
	}}
}

func TestGroupVersionMapperMapsFromOneGroupVersion(t *testing.T) {
	ctx := context.Background()
	l := newListerStub()
	m := newGroupVersionMapper(l)
	tests := []struct {
		gk       schema.GroupKind
		version  string
		resource string
		scope    meta.RESTScopeName
		noMatch  bool
	}{
		{gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, version: "v1", resource: "deployments", scope: meta.RESTScopeNameNamespace},
		{gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, version: "v1", resource: "deployments", scope: meta.RESTScopeNameNamespace},
		{gk: schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}, version: "v1", resource: "clusterroles", scope: meta.RESTScopeNameRoot},
		// A subresource's kind is not a kind the group serves.
		{gk: schema.GroupKind{Group: "apps", Kind: "Scale"}, version: "v1", noMatch: true},
		{gk: schema.GroupKind{Group: "apps", Kind: "StatefulThing"}, version: "v1", noMatch: true},
		{gk: schema.GroupKind{Group: "apps", Kind: "Deployment"}, version: "v9", noMatch: true},
		// An empty core group version is a missing one.
		{gk: schema.GroupKind{Kind: "Pod"}, version: "v1", noMatch: true},
	}
	for _, tt := range tests {
		got, err := m.RESTMappingWithContext(ctx, tt.gk, tt.version)
		if tt.noMatch {
			if !meta.IsNoMatchError(err) {
				t.Errorf("%s %s: err = %v, want a no-match error", tt.gk, tt.version, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %s: %v", tt.gk, tt.version, err)
		}
		want := schema.GroupVersionResource{Group: tt.gk.Group, Version: tt.version, Resource: tt.resource}
		if got.Resource != want || got.Scope.Name() != tt.scope || got.GroupVersionKind.Kind != tt.gk.Kind {
			t.Errorf("%s %s: mapping %+v scope %s, want %s in %s", tt.gk, tt.version, got.Resource, got.Scope.Name(), want, tt.scope)
		}
	}
	for gv, n := range l.calls {
		if n != 1 {
			t.Errorf("%s was discovered %d times, want once", gv, n)
		}
	}
	if _, err := m.RESTMappingWithContext(ctx, schema.GroupKind{Group: "apps", Kind: "Deployment"}); err == nil {
		t.Errorf("a kind without a version was mapped")
	}
}

func TestGroupVersionMapperErrors(t *testing.T) {
	l := newListerStub()
	m := newGroupVersionMapper(l)
	gk := schema.GroupKind{Group: "apps", Kind: "Deployment"}

	// A request cut short by its caller's deadline is asked again.
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.RESTMappingWithContext(cancelled, gk, "v1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the caller's cancellation", err)
	}
	if _, err := m.RESTMappingWithContext(context.Background(), gk, "v1"); err != nil {
		t.Fatalf("after a cancelled request: %v", err)
	}
	if l.calls["apps/v1"] != 2 {
		t.Errorf("apps/v1 asked %d times, want 2", l.calls["apps/v1"])
	}

	// A server error is an error, not a missing kind, and is kept.
	failing := newListerStub()
	failing.err = apierrors.NewInternalError(errors.New("etcd is down"))
	m = newGroupVersionMapper(failing)
	for range 2 {
		_, err := m.RESTMappingWithContext(context.Background(), gk, "v1")
		if err == nil || meta.IsNoMatchError(err) {
			t.Fatalf("err = %v, want the server's error", err)
		}
	}
	if failing.calls["apps/v1"] != 1 {
		t.Errorf("a failing group version was asked %d times, want once per round", failing.calls["apps/v1"])
	}
}
