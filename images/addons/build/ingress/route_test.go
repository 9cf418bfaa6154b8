package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// backendServer answers every request with its name, the Host it was
// sent and the path, and returns its port.
func backendServer(t *testing.T, name string) int {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s %s", name, r.Host, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	n, _ := strconv.Atoi(port)
	return n
}

func service(ns, name string, port int) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{ClusterIP: "127.0.0.1", Ports: []corev1.ServicePort{{Name: "http", Port: int32(port)}}},
	}
}

func ingressPath(path string, exact bool, svc string, port int) networkingv1.HTTPIngressPath {
	pt := networkingv1.PathTypePrefix
	if exact {
		pt = networkingv1.PathTypeExact
	}
	return networkingv1.HTTPIngressPath{Path: path, PathType: &pt, Backend: networkingv1.IngressBackend{
		Service: &networkingv1.IngressServiceBackend{Name: svc, Port: networkingv1.ServiceBackendPort{Number: int32(port)}},
	}}
}

func get(t *testing.T, h http.Handler, host, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "http://"+host+path, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func newWorld(svcs ...*corev1.Service) *world {
	w := &world{ingressClass: "labctl", defaultClass: true, controllerName: "labctl.dev/ingress", nodeIP: "172.18.0.2",
		services: map[string]*corev1.Service{}, namespaces: map[string]*corev1.Namespace{}, unbound: map[int]string{}}
	for _, s := range svcs {
		w.services[key(s.Namespace, s.Name)] = s
	}
	return w
}

func TestIngressRouting(t *testing.T) {
	web, api, shop, def := backendServer(t, "web"), backendServer(t, "api"), backendServer(t, "shop"), backendServer(t, "default")
	w := newWorld(service("a", "web", web), service("a", "api", api), service("a", "shop", shop), service("a", "def", def))
	other := "nginx"
	w.ingresses = []*networkingv1.Ingress{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "main"},
		Spec: networkingv1.IngressSpec{
			DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "def", Port: networkingv1.ServiceBackendPort{Name: "http"}}},
			Rules: []networkingv1.IngressRule{
				{Host: "shop.lab.test", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					ingressPath("/", false, "shop", shop), ingressPath("/api/", false, "api", api), ingressPath("/exact", true, "web", web),
				}}}},
				{Host: "*.lab.test", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					ingressPath("/", false, "web", web),
				}}}},
				{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
					ingressPath("/missing", false, "nope", 80),
				}}}},
			},
		},
	}, {
		ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "not-ours"},
		Spec: networkingv1.IngressSpec{IngressClassName: &other, Rules: []networkingv1.IngressRule{{Host: "other.test",
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{ingressPath("/", false, "web", web)}}}}}},
	}}
	res := w.build()
	if !res.ingresses["a/main"] || res.ingresses["a/not-ours"] {
		t.Fatalf("served ingresses = %v, want only a/main", res.ingresses)
	}
	h := newTable(res.ports[ingressPort], http.DefaultTransport)
	for _, c := range []struct {
		host, path string
		code       int
		want       string
	}{
		{"shop.lab.test", "/", 200, "shop shop.lab.test /"},
		{"SHOP.lab.test:80", "/cart", 200, "shop SHOP.lab.test:80 /cart"},
		{"shop.lab.test", "/api", 200, "api shop.lab.test /api"},
		{"shop.lab.test", "/api/v1", 200, "api shop.lab.test /api/v1"},
		{"shop.lab.test", "/apis", 200, "shop shop.lab.test /apis"}, // whole elements only
		{"shop.lab.test", "/exact", 200, "web shop.lab.test /exact"},
		{"shop.lab.test", "/exact/x", 200, "shop shop.lab.test /exact/x"},
		{"blog.lab.test", "/x", 200, "web blog.lab.test /x"}, // the wildcard
		{"a.b.lab.test", "/x", 200, "web a.b.lab.test /x"},   // the wildcard covers more labels
		{"lab.test", "/x", 200, "default lab.test /x"},       // not the wildcard: the default backend
		{"other.test", "/", 200, "default other.test /"},     // another class's rule is not served
		{"anything", "/missing/x", 503, "Service a/nope does not exist"},
	} {
		code, body := get(t, h, c.host, c.path)
		if code != c.code || !contains(body, c.want) {
			t.Errorf("GET %s%s = %d %q, want %d %q", c.host, c.path, code, body, c.code, c.want)
		}
	}
	// Without the default backend, nothing matching is a 404.
	w.ingresses[0].Spec.DefaultBackend = nil
	h = newTable(w.build().ports[ingressPort], http.DefaultTransport)
	if code, _ := get(t, h, "lab.test", "/x"); code != 404 {
		t.Errorf("GET with no match = %d, want 404", code)
	}
	// Not the default class: an Ingress without a class is not served.
	w.defaultClass = false
	if res := w.build(); res.ingresses["a/main"] {
		t.Error("an Ingress without a class is served though labctl is not the default class")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func gatewayWorld(t *testing.T) (*world, int, int) {
	t.Helper()
	v1, v2 := backendServer(t, "v1"), backendServer(t, "v2")
	w := newWorld(service("app", "v1", v1), service("app", "v2", v2), service("other", "v2", v2))
	w.namespaces = map[string]*corev1.Namespace{
		"app":   {ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{"gw": "yes"}}},
		"other": {ObjectMeta: metav1.ObjectMeta{Name: "other"}},
	}
	w.gatewayClasses = []*gatewayv1.GatewayClass{{ObjectMeta: metav1.ObjectMeta{Name: "labctl"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: "labctl.dev/ingress"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "theirs"}, Spec: gatewayv1.GatewayClassSpec{ControllerName: "example.com/gw"}}}
	host := gatewayv1.Hostname("*.lab.test")
	w.gateways = []*gatewayv1.Gateway{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "gw"},
		Spec: gatewayv1.GatewaySpec{GatewayClassName: "labctl", Listeners: []gatewayv1.Listener{
			{Name: "web", Port: 8080, Protocol: gatewayv1.HTTPProtocolType, Hostname: &host,
				AllowedRoutes: &gatewayv1.AllowedRoutes{Namespaces: &gatewayv1.RouteNamespaces{From: ptr(gatewayv1.NamespacesFromSelector),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"gw": "yes"}}}}},
			{Name: "tls", Port: 8443, Protocol: gatewayv1.HTTPSProtocolType},
		}},
	}, {
		ObjectMeta: metav1.ObjectMeta{Namespace: "infra", Name: "theirs"},
		Spec:       gatewayv1.GatewaySpec{GatewayClassName: "theirs", Listeners: []gatewayv1.Listener{{Name: "web", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
	}}
	return w, v1, v2
}

func httpRoute(ns, name string, hosts []string, backends ...gatewayv1.HTTPBackendRef) *gatewayv1.HTTPRoute {
	hr := &gatewayv1.HTTPRoute{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(time.Unix(100, 0))}}
	hr.Spec.ParentRefs = []gatewayv1.ParentReference{{Name: "gw", Namespace: ptr(gatewayv1.Namespace("infra"))}}
	for _, h := range hosts {
		hr.Spec.Hostnames = append(hr.Spec.Hostnames, gatewayv1.Hostname(h))
	}
	hr.Spec.Rules = []gatewayv1.HTTPRouteRule{{BackendRefs: backends}}
	return hr
}

func backendRef(ns, name string, port, weight int32) gatewayv1.HTTPBackendRef {
	b := gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{Weight: &weight,
		BackendObjectReference: gatewayv1.BackendObjectReference{Name: gatewayv1.ObjectName(name), Port: ptr(gatewayv1.PortNumber(port))}}}
	if ns != "" {
		b.Namespace = ptr(gatewayv1.Namespace(ns))
	}
	return b
}

func cond(conds []metav1.Condition, typ string) string {
	c := meta.FindStatusCondition(conds, typ)
	if c == nil {
		return "missing"
	}
	return string(c.Status) + "/" + c.Reason
}

func TestHTTPRouteRouting(t *testing.T) {
	w, v1, v2 := gatewayWorld(t)
	canary := httpRoute("app", "canary", []string{"shop.lab.test"}, backendRef("", "v1", int32(v1), 1), backendRef("", "v2", int32(v2), 0))
	canary.Spec.Rules = append(canary.Spec.Rules, gatewayv1.HTTPRouteRule{
		Matches:     []gatewayv1.HTTPRouteMatch{{Headers: []gatewayv1.HTTPHeaderMatch{{Name: "X-Version", Value: "2"}}}},
		BackendRefs: []gatewayv1.HTTPBackendRef{backendRef("", "v2", int32(v2), 1)},
	})
	outside := httpRoute("other", "outside", nil, backendRef("", "v2", int32(v2), 1))
	crossNS := httpRoute("app", "cross", []string{"cross.lab.test"}, backendRef("other", "v2", int32(v2), 1))
	wrongHost := httpRoute("app", "wrong-host", []string{"shop.example.com"}, backendRef("", "v1", int32(v1), 1))
	w.routes = []*gatewayv1.HTTPRoute{canary, outside, crossNS, wrongHost}

	res := w.build()
	h := newTable(res.ports[8080], http.DefaultTransport)
	for i := 0; i < 20; i++ {
		if code, body := get(t, h, "shop.lab.test", "/"); code != 200 || !contains(body, "v1 ") {
			t.Fatalf("GET shop.lab.test/ = %d %q, want v1 (v2 has weight 0)", code, body)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "http://shop.lab.test/", nil)
	req.Header.Set("X-Version", "2")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 || !contains(rec.Body.String(), "v2 ") {
		t.Errorf("GET with X-Version: 2 = %d %q, want v2", rec.Code, rec.Body.String())
	}
	if code, _ := get(t, h, "cross.lab.test", "/"); code != 500 {
		t.Errorf("a cross-namespace backend without a ReferenceGrant answered %d, want 500", code)
	}
	if code, _ := get(t, h, "shop.example.com", "/"); code != 404 {
		t.Errorf("a host outside the listener's answered %d, want 404", code)
	}
	if len(res.ports[80]) != 0 {
		t.Errorf("another class's Gateway got routes: %v", res.ports[80])
	}
	parent := func(name string) []metav1.Condition {
		ps := res.routeParents[name]
		if len(ps) != 1 {
			t.Fatalf("%s has %d parent statuses, want 1", name, len(ps))
		}
		return ps[0].Conditions
	}
	for _, c := range []struct{ route, typ, want string }{
		{"app/canary", "Accepted", "True/Accepted"},
		{"app/canary", "ResolvedRefs", "True/ResolvedRefs"},
		{"other/outside", "Accepted", "False/NotAllowedByListeners"},
		{"app/cross", "ResolvedRefs", "False/RefNotPermitted"},
		{"app/wrong-host", "Accepted", "False/NoMatchingListenerHostname"},
	} {
		if got := cond(parent(c.route), c.typ); got != c.want {
			t.Errorf("%s %s = %s, want %s", c.route, c.typ, got, c.want)
		}
	}
	gs := res.gateways["infra/gw"]
	if cond(gs.Conditions, "Programmed") != "True/Programmed" || len(gs.Addresses) != 1 || gs.Addresses[0].Value != "172.18.0.2" {
		t.Errorf("gateway status = %+v", gs)
	}
	if len(gs.Listeners) != 2 || gs.Listeners[0].AttachedRoutes != 2 || cond(gs.Listeners[1].Conditions, "Accepted") != "False/UnsupportedProtocol" {
		t.Errorf("listener statuses = %+v", gs.Listeners)
	}
	if _, ok := res.gateways["infra/theirs"]; ok {
		t.Error("another class's Gateway got a status")
	}

	// A ReferenceGrant in the target namespace lets the route through.
	w.grants = []*gatewayv1beta1.ReferenceGrant{{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "let-app"},
		Spec: gatewayv1beta1.ReferenceGrantSpec{
			From: []gatewayv1beta1.ReferenceGrantFrom{{Group: gatewayv1.GroupName, Kind: "HTTPRoute", Namespace: "app"}},
			To:   []gatewayv1beta1.ReferenceGrantTo{{Group: "", Kind: "Service"}},
		}}}
	res = w.build()
	h = newTable(res.ports[8080], http.DefaultTransport)
	if code, body := get(t, h, "cross.lab.test", "/"); code != 200 || !contains(body, "v2 ") {
		t.Errorf("with the grant, GET cross.lab.test = %d %q", code, body)
	}
	// A port that cannot be opened shows on its listener.
	w.unbound = map[int]string{8080: "in use"}
	res = w.build()
	if got := cond(res.gateways["infra/gw"].Listeners[0].Conditions, "Accepted"); got != "False/PortUnavailable" {
		t.Errorf("unbound listener Accepted = %s", got)
	}
}

func TestPrecedence(t *testing.T) {
	mk := func(host string, kind pathKind, path string) *route {
		return &route{host: host, kind: kind, path: path, source: host + path}
	}
	rs := []*route{mk("", pathPrefix, ""), mk("*.a.test", pathPrefix, ""), mk("x.a.test", pathPrefix, "/p"), mk("x.a.test", pathPrefix, "/p/q"), mk("x.a.test", pathExact, "/p")}
	tb := newTable(rs, nil)
	var order []string
	for _, r := range tb.routes {
		order = append(order, r.source)
	}
	want := []string{"x.a.test/p", "x.a.test/p/q", "x.a.test/p", "*.a.test", ""}
	if fmt.Sprint(order) != fmt.Sprint(want) || tb.routes[0].kind != pathExact {
		t.Errorf("order = %q, want %q (exact first)", order, want)
	}
	if wildcardCovers("*.a.test", "a.test") || !wildcardCovers("*.a.test", "b.a.test") || !wildcardCovers("*.a.test", "*.b.a.test") {
		t.Error("wildcardCovers")
	}
}

// A backend on the node's loopback (an ExternalName Service naming
// localhost) is refused: the controller runs on the node's network.
func TestNodeLocalBackendsRefused(t *testing.T) {
	port := backendServer(t, "local")
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "local"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost", Ports: []corev1.ServicePort{{Port: int32(port)}}}}
	w := newWorld(svc)
	w.ingresses = []*networkingv1.Ingress{{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "x"}, Spec: networkingv1.IngressSpec{
		Rules: []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
			Paths: []networkingv1.HTTPIngressPath{ingressPath("/", false, "local", port)}}}}}}}}
	tr := &http.Transport{DialContext: (&net.Dialer{Control: refuseNodeLocal}).DialContext}
	code, body := get(t, newTable(w.build().ports[ingressPort], tr), "x", "/")
	if code != http.StatusBadGateway || strings.Contains(body, "local x /") {
		t.Errorf("GET through an ExternalName to localhost = %d %q, want 502", code, body)
	}
}
