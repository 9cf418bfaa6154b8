package checks

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
)

// countingAPIServer is an API server over TLS and HTTP/2 that serves discovery
// of v1 and apps/v1, a Service and a Deployment web in namespace ns and a
// Widget of a group only discovery knows, counts its connections (each a
// TLS handshake, made slow so that concurrent requests would each make
// one) and the requests of each path.
type countingAPIServer struct {
	*httptest.Server
	conns atomic.Int32
	// slow delays the answer of each object.
	slow  time.Duration
	mu    sync.Mutex
	paths map[string]int
}

func newCountingAPIServer(t *testing.T) *countingAPIServer {
	t.Helper()
	f := &countingAPIServer{paths: map[string]int{}}
	lists := map[string]string{
		"/api/v1":              `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"services","kind":"Service","namespaced":true,"verbs":["get"]}]}`,
		"/apis/apps/v1":        `{"kind":"APIResourceList","groupVersion":"apps/v1","resources":[{"name":"deployments","kind":"Deployment","namespaced":true,"verbs":["get"]}]}`,
		"/apis/example.com/v1": `{"kind":"APIResourceList","groupVersion":"example.com/v1","resources":[{"name":"widgets","kind":"Widget","namespaced":true,"verbs":["get"]}]}`,
	}
	objects := map[string]map[string]any{
		"/api/v1/namespaces/ns/services/web":             {"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web", "namespace": "ns"}},
		"/apis/apps/v1/namespaces/ns/deployments/web":    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "ns"}},
		"/apis/example.com/v1/namespaces/ns/widgets/web": {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "web", "namespace": "ns"}},
	}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.paths[r.URL.Path]++
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if l, ok := lists[r.URL.Path]; ok {
			w.Write([]byte(l))
			return
		}
		if o, ok := objects[r.URL.Path]; ok {
			time.Sleep(f.slow)
			json.NewEncoder(w).Encode(o)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	}))
	f.EnableHTTP2 = true
	f.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			f.conns.Add(1)
		}
	}
	f.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		time.Sleep(50 * time.Millisecond)
		return nil, nil
	}}
	f.StartTLS()
	t.Cleanup(f.Close)
	return f
}

// credentials are the checker's credentials for the server.
func (f *countingAPIServer) credentials() *KubeCredentials {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.Certificate().Raw})
	return &KubeCredentials{Server: f.URL, Token: "grader", CAData: ca}
}

func (f *countingAPIServer) requests(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paths[path]
}

// TestKubeReaderMakesOneConnection: a round's concurrent reads of several
// kinds, their discovery included, cost the API server one connection and
// so one TLS handshake, not one per client or per request.
func TestKubeReaderMakesOneConnection(t *testing.T) {
	f := newCountingAPIServer(t)
	r, err := NewKubeReader(f.credentials().restConfig())
	if err != nil {
		t.Fatal(err)
	}
	reads := []struct{ apiVersion, kind string }{{"v1", "Service"}, {"apps/v1", "Deployment"}, {"example.com/v1", "Widget"}}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(reads))
	for range 4 {
		for _, rd := range reads {
			wg.Go(func() {
				_, err := r.Get(context.Background(), rd.apiVersion, rd.kind, "ns", "web")
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := f.conns.Load(); n != 1 {
		t.Errorf("the reads made %d connections to the API server, want 1", n)
	}
}

// TestKubeReaderMapsBuiltinKindsWithoutDiscovery: the built-in kinds of a
// round cost no discovery request; a kind of another group is still asked
// of the cluster, and one it does not serve is still no match.
func TestKubeReaderMapsBuiltinKindsWithoutDiscovery(t *testing.T) {
	f := newCountingAPIServer(t)
	r, err := NewKubeReader(f.credentials().restConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, rd := range []struct{ apiVersion, kind string }{{"v1", "Service"}, {"apps/v1", "Deployment"}, {"example.com/v1", "Widget"}} {
		if _, err := r.Get(ctx, rd.apiVersion, rd.kind, "ns", "web"); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.requests("/api/v1") + f.requests("/apis/apps/v1"); n != 0 {
		t.Errorf("reading a Service and a Deployment asked discovery %d times, want none", n)
	}
	if n := f.requests("/apis/example.com/v1"); n != 1 {
		t.Errorf("reading a Widget asked discovery of example.com/v1 %d times, want once", n)
	}
	if _, err := r.Get(ctx, "example.com/v1", "Gadget", "ns", "web"); !meta.IsNoMatchError(err) {
		t.Errorf("a kind the cluster does not serve: err = %v, want a no-match error", err)
	}
}

// TestBuiltinKindsAreKubernetesKinds: every kind mapped without discovery
// is one of Kubernetes' own, once.
func TestBuiltinKindsAreKubernetesKinds(t *testing.T) {
	seen := map[schema.GroupVersionKind]bool{}
	for _, k := range BuiltinKinds() {
		gvk := schema.FromAPIVersionAndKind(k.APIVersion, k.Kind)
		if !scheme.Scheme.Recognizes(gvk) {
			t.Errorf("%s is not a kind of Kubernetes' own", gvk)
		}
		if seen[gvk] {
			t.Errorf("%s is listed twice", gvk)
		}
		seen[gvk] = true
		if k.Resource != strings.ToLower(k.Resource) || !strings.HasSuffix(k.Resource, "s") {
			t.Errorf("%s: resource %q is not a lower-case plural", gvk, k.Resource)
		}
	}
}

// TestKubeReaderSharesAReadUnderWay: checks that read the same object at
// once cost the API server one read, and each gets a copy of its own; a
// read asked after it ended reads again.
func TestKubeReaderSharesAReadUnderWay(t *testing.T) {
	f := newCountingAPIServer(t)
	f.slow = 100 * time.Millisecond
	r, err := NewKubeReader(f.credentials().restConfig())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const readers = 6
	got := make([]map[string]any, readers)
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			obj, err := r.Get(ctx, "v1", "Service", "ns", "web")
			if err != nil {
				t.Error(err)
			}
			got[i] = obj
		})
	}
	wg.Wait()
	const path = "/api/v1/namespaces/ns/services/web"
	if n := f.requests(path); n != 1 {
		t.Errorf("%d checks reading one Service at once read it %d times, want once", readers, n)
	}
	got[0]["metadata"].(map[string]any)["name"] = "changed"
	for i := 1; i < readers; i++ {
		if name := got[i]["metadata"].(map[string]any)["name"]; name != "web" {
			t.Errorf("reader %d saw another's change: name %v", i, name)
		}
	}
	if _, err := r.Get(ctx, "v1", "Service", "ns", "web"); err != nil {
		t.Fatal(err)
	}
	if n := f.requests(path); n != 2 {
		t.Errorf("a read after the shared one: %d reads in all, want 2", n)
	}
}
