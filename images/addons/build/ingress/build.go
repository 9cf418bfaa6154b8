package main

import (
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	gatewayv1beta1 "sigs.k8s.io/gateway-api/apis/v1beta1"
)

// world is what the routes are built from: the cluster's objects as the
// informers last saw them.
type world struct {
	ingressClass   string // the IngressClass this controller serves
	defaultClass   bool   // whether that class is the cluster's default
	controllerName string // the GatewayClass controllerName it serves
	nodeIP         string

	ingresses      []*networkingv1.Ingress
	services       map[string]*corev1.Service // by namespace/name
	namespaces     map[string]*corev1.Namespace
	gatewayClasses []*gatewayv1.GatewayClass
	gateways       []*gatewayv1.Gateway
	routes         []*gatewayv1.HTTPRoute
	grants         []*gatewayv1beta1.ReferenceGrant
	// unbound are listener ports that could not be opened.
	unbound map[int]string
}

// result is what one build gives: routes by port, and the status each
// object of this controller's should show.
type result struct {
	ports          map[int][]*route
	ingresses      map[string]bool // namespace/name of the Ingresses served
	gatewayClasses map[string][]metav1.Condition
	gateways       map[string]gatewayv1.GatewayStatus
	routeParents   map[string][]gatewayv1.RouteParentStatus
}

const ingressPort = 80

func key(ns, name string) string { return ns + "/" + name }

func (w *world) build() *result {
	res := &result{
		ports:          map[int][]*route{},
		ingresses:      map[string]bool{},
		gatewayClasses: map[string][]metav1.Condition{},
		gateways:       map[string]gatewayv1.GatewayStatus{},
		routeParents:   map[string][]gatewayv1.RouteParentStatus{},
	}
	for _, ing := range w.ingresses {
		if !w.servesIngress(ing) {
			continue
		}
		res.ingresses[key(ing.Namespace, ing.Name)] = true
		res.ports[ingressPort] = append(res.ports[ingressPort], w.ingressRoutes(ing)...)
	}
	w.buildGateways(res)
	return res
}

// servesIngress: an Ingress of this class, or of none when it is the default.
func (w *world) servesIngress(ing *networkingv1.Ingress) bool {
	if ing.Spec.IngressClassName != nil {
		return *ing.Spec.IngressClassName == w.ingressClass
	}
	if c, ok := ing.Annotations["kubernetes.io/ingress.class"]; ok {
		return c == w.ingressClass
	}
	return w.defaultClass
}

func (w *world) ingressRoutes(ing *networkingv1.Ingress) []*route {
	var out []*route
	src := "ingress " + key(ing.Namespace, ing.Name)
	if b := ing.Spec.DefaultBackend; b != nil {
		r := &route{kind: pathPrefix, fallback: true, created: ing.CreationTimestamp.Time, source: src}
		w.ingressBackend(r, ing.Namespace, b)
		out = append(out, r)
	}
	for _, rule := range ing.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for _, p := range rule.HTTP.Paths {
			r := &route{host: strings.ToLower(rule.Host), created: ing.CreationTimestamp.Time, source: src}
			path := p.Path
			if path == "" {
				path = "/"
			}
			if p.PathType != nil && *p.PathType == networkingv1.PathTypeExact {
				r.kind, r.path = pathExact, path
			} else {
				r.kind, r.path = pathPrefix, strings.TrimRight(path, "/")
			}
			w.ingressBackend(r, ing.Namespace, &p.Backend)
			out = append(out, r)
		}
	}
	return out
}

func (w *world) ingressBackend(r *route, ns string, b *networkingv1.IngressBackend) {
	if b.Service == nil {
		r.status, r.why = http.StatusServiceUnavailable, "only Service backends are served"
		return
	}
	port := intOrName{number: int(b.Service.Port.Number), name: b.Service.Port.Name}
	addr, why := w.serviceAddr(ns, b.Service.Name, port)
	if why != "" {
		r.status, r.why = http.StatusServiceUnavailable, why
		return
	}
	r.backends = []backend{{addr: addr, weight: 1}}
}

type intOrName struct {
	number int
	name   string
}

// serviceAddr is where a Service's port answers: its cluster address, or
// an ExternalName's host. why says why there is none.
func (w *world) serviceAddr(ns, name string, port intOrName) (addr, why string) {
	svc := w.services[key(ns, name)]
	if svc == nil {
		return "", fmt.Sprintf("Service %s/%s does not exist", ns, name)
	}
	number := port.number
	if port.name != "" {
		number = 0
		for _, p := range svc.Spec.Ports {
			if p.Name == port.name {
				number = int(p.Port)
			}
		}
		if number == 0 {
			return "", fmt.Sprintf("Service %s/%s has no port named %q", ns, name, port.name)
		}
	} else if svc.Spec.Type != corev1.ServiceTypeExternalName && !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return int(p.Port) == number }) {
		return "", fmt.Sprintf("Service %s/%s has no port %d", ns, name, number)
	}
	host := svc.Spec.ClusterIP
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		host = svc.Spec.ExternalName
	case host == "" || host == corev1.ClusterIPNone:
		return "", fmt.Sprintf("Service %s/%s is headless: it has no cluster address to send to", ns, name)
	}
	return net.JoinHostPort(host, strconv.Itoa(number)), ""
}

// Gateway API.

var (
	kindHTTPRoute = gatewayv1.RouteGroupKind{Group: ptr(gatewayv1.Group(gatewayv1.GroupName)), Kind: "HTTPRoute"}
)

func ptr[T any](v T) *T { return &v }

// listener is one of a Gateway's listeners this controller serves.
type listener struct {
	gw       *gatewayv1.Gateway
	spec     gatewayv1.Listener
	ok       bool
	attached int32
}

func (w *world) ownClass(name string) *gatewayv1.GatewayClass {
	for _, gc := range w.gatewayClasses {
		if gc.Name == name && string(gc.Spec.ControllerName) == w.controllerName {
			return gc
		}
	}
	return nil
}

func (w *world) buildGateways(res *result) {
	for _, gc := range w.gatewayClasses {
		if string(gc.Spec.ControllerName) != w.controllerName {
			continue
		}
		var conds []metav1.Condition
		setCond(&conds, gc.Generation, string(gatewayv1.GatewayClassConditionStatusAccepted), true, string(gatewayv1.GatewayClassReasonAccepted), "served by labctl-ingress")
		res.gatewayClasses[gc.Name] = conds
	}
	byGateway := map[string][]*listener{}
	for _, gw := range w.gateways {
		if w.ownClass(string(gw.Spec.GatewayClassName)) == nil {
			continue
		}
		for _, l := range gw.Spec.Listeners {
			ln := &listener{gw: gw, spec: l}
			ln.ok = l.Protocol == gatewayv1.HTTPProtocolType && w.unbound[int(l.Port)] == ""
			byGateway[key(gw.Namespace, gw.Name)] = append(byGateway[key(gw.Namespace, gw.Name)], ln)
		}
	}
	for _, hr := range w.routes {
		var parents []gatewayv1.RouteParentStatus
		for _, ref := range hr.Spec.ParentRefs {
			if ref.Group != nil && *ref.Group != gatewayv1.GroupName || ref.Kind != nil && *ref.Kind != "Gateway" {
				continue
			}
			ns := hr.Namespace
			if ref.Namespace != nil {
				ns = string(*ref.Namespace)
			}
			lns, ours := byGateway[key(ns, string(ref.Name))]
			if !ours {
				continue // another controller's Gateway, or none: not ours to speak for
			}
			parents = append(parents, w.attach(res, hr, ref, lns))
		}
		if len(parents) > 0 {
			res.routeParents[key(hr.Namespace, hr.Name)] = parents
		}
	}
	for _, gw := range w.gateways {
		lns, ok := byGateway[key(gw.Namespace, gw.Name)]
		if !ok {
			continue
		}
		res.gateways[key(gw.Namespace, gw.Name)] = w.gatewayStatus(gw, lns)
	}
}

// attach attaches hr to the listeners of one parent reference, adds its
// routes, and returns its status for that parent.
func (w *world) attach(res *result, hr *gatewayv1.HTTPRoute, ref gatewayv1.ParentReference, lns []*listener) gatewayv1.RouteParentStatus {
	st := gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: gatewayv1.GatewayController(w.controllerName)}
	accepted, reason, msg := false, string(gatewayv1.RouteReasonNoMatchingParent), "no listener of the Gateway matches the reference's sectionName and port"
	resolved, rReason, rMsg := w.routeRefs(hr)
	for _, ln := range lns {
		if ref.SectionName != nil && *ref.SectionName != ln.spec.Name || ref.Port != nil && *ref.Port != ln.spec.Port {
			continue
		}
		if !ln.ok {
			continue
		}
		if !w.allows(ln, hr.Namespace) {
			reason, msg = string(gatewayv1.RouteReasonNotAllowedByListeners), "the listener's allowedRoutes do not admit HTTPRoutes from namespace "+hr.Namespace
			continue
		}
		hosts, match := intersect(ln.spec.Hostname, hr.Spec.Hostnames)
		if !match {
			reason, msg = string(gatewayv1.RouteReasonNoMatchingListenerHostname), "none of the route's hostnames matches the listener's hostname"
			continue
		}
		accepted = true
		ln.attached++
		port := int(ln.spec.Port)
		res.ports[port] = append(res.ports[port], w.httpRoutes(hr, hosts)...)
	}
	if accepted {
		reason, msg = string(gatewayv1.RouteReasonAccepted), "attached"
	}
	setCond(&st.Conditions, hr.Generation, string(gatewayv1.RouteConditionAccepted), accepted, reason, msg)
	setCond(&st.Conditions, hr.Generation, string(gatewayv1.RouteConditionResolvedRefs), resolved, rReason, rMsg)
	return st
}

func (w *world) allows(ln *listener, ns string) bool {
	from := gatewayv1.NamespacesFromSame
	var sel *metav1.LabelSelector
	if ar := ln.spec.AllowedRoutes; ar != nil {
		if len(ar.Kinds) > 0 && !slices.ContainsFunc(ar.Kinds, func(k gatewayv1.RouteGroupKind) bool {
			return k.Kind == "HTTPRoute" && (k.Group == nil || *k.Group == gatewayv1.GroupName)
		}) {
			return false
		}
		if ar.Namespaces != nil && ar.Namespaces.From != nil {
			from, sel = *ar.Namespaces.From, ar.Namespaces.Selector
		}
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return true
	case gatewayv1.NamespacesFromSelector:
		s, err := metav1.LabelSelectorAsSelector(sel)
		n := w.namespaces[ns]
		return err == nil && n != nil && s.Matches(labels.Set(n.Labels))
	default:
		return ns == ln.gw.Namespace
	}
}

// intersect returns the hosts a route serves on a listener: the route's
// hostnames the listener's admits (narrowed to the more specific of the
// two), or the listener's own when the route names none.
func intersect(listenerHost *gatewayv1.Hostname, routeHosts []gatewayv1.Hostname) ([]string, bool) {
	lh := ""
	if listenerHost != nil {
		lh = strings.ToLower(string(*listenerHost))
	}
	if len(routeHosts) == 0 {
		return []string{lh}, true
	}
	var out []string
	for _, h := range routeHosts {
		rh := strings.ToLower(string(h))
		switch {
		case lh == "" || lh == rh:
			out = append(out, rh)
		case wildcardCovers(lh, rh):
			out = append(out, rh)
		case wildcardCovers(rh, lh):
			out = append(out, lh)
		}
	}
	return out, len(out) > 0
}

// wildcardCovers: w is "*.suffix" and h is a longer name ending in it (or
// a longer wildcard).
func wildcardCovers(w, h string) bool {
	if !strings.HasPrefix(w, "*.") {
		return false
	}
	return strings.HasSuffix(h, w[1:]) && len(strings.TrimPrefix(h, "*.")) > len(w)-2
}

// routeRefs checks an HTTPRoute's backends and filters for its
// ResolvedRefs condition.
func (w *world) routeRefs(hr *gatewayv1.HTTPRoute) (bool, string, string) {
	for _, rule := range hr.Spec.Rules {
		for _, b := range rule.BackendRefs {
			if _, why, reason := w.backendRef(hr, b.BackendRef); why != "" {
				return false, reason, why
			}
		}
	}
	return true, string(gatewayv1.RouteReasonResolvedRefs), "every backend resolves"
}

// backendRef resolves one backendRef to an address, or says why not with
// the Gateway API's reason.
func (w *world) backendRef(hr *gatewayv1.HTTPRoute, b gatewayv1.BackendRef) (addr, why, reason string) {
	if b.Group != nil && *b.Group != "" || b.Kind != nil && *b.Kind != "Service" {
		return "", "only Services are served as backends", string(gatewayv1.RouteReasonInvalidKind)
	}
	ns := hr.Namespace
	if b.Namespace != nil && string(*b.Namespace) != hr.Namespace {
		ns = string(*b.Namespace)
		if !w.granted(hr.Namespace, ns, string(b.Name)) {
			return "", fmt.Sprintf("no ReferenceGrant in %s lets HTTPRoutes of %s refer to Service %s", ns, hr.Namespace, b.Name), string(gatewayv1.RouteReasonRefNotPermitted)
		}
	}
	if b.Port == nil {
		return "", "a Service backend needs a port", string(gatewayv1.RouteReasonUnsupportedValue)
	}
	addr, why = w.serviceAddr(ns, string(b.Name), intOrName{number: int(*b.Port)})
	return addr, why, string(gatewayv1.RouteReasonBackendNotFound)
}

func (w *world) granted(fromNS, toNS, name string) bool {
	for _, g := range w.grants {
		if g.Namespace != toNS {
			continue
		}
		from := slices.ContainsFunc(g.Spec.From, func(f gatewayv1beta1.ReferenceGrantFrom) bool {
			return f.Group == gatewayv1.GroupName && f.Kind == "HTTPRoute" && string(f.Namespace) == fromNS
		})
		to := slices.ContainsFunc(g.Spec.To, func(t gatewayv1beta1.ReferenceGrantTo) bool {
			return t.Group == "" && t.Kind == "Service" && (t.Name == nil || string(*t.Name) == name)
		})
		if from && to {
			return true
		}
	}
	return false
}

// httpRoutes are hr's rules as routes, one per match and host.
func (w *world) httpRoutes(hr *gatewayv1.HTTPRoute, hosts []string) []*route {
	var out []*route
	src := "httproute " + key(hr.Namespace, hr.Name)
	for _, rule := range hr.Spec.Rules {
		var backends []backend
		status, why := 0, ""
		for _, b := range rule.BackendRefs {
			weight := 1
			if b.Weight != nil {
				weight = int(*b.Weight)
			}
			addr, bad, _ := w.backendRef(hr, b.BackendRef)
			if bad != "" {
				// A request meant for an invalid backend gets a 500.
				backends = append(backends, backend{weight: weight, why: bad})
				continue
			}
			backends = append(backends, backend{addr: addr, weight: weight})
		}
		if len(rule.Filters) > 0 {
			backends, status, why = nil, http.StatusInternalServerError, "labctl-ingress serves no HTTPRoute filters"
		} else if len(rule.BackendRefs) == 0 {
			status, why = http.StatusInternalServerError, "the rule has no backendRefs"
		}
		matches := rule.Matches
		if len(matches) == 0 {
			matches = []gatewayv1.HTTPRouteMatch{{}}
		}
		for _, m := range matches {
			for _, h := range hosts {
				r := &route{host: h, backends: backends, status: status, why: why, created: hr.CreationTimestamp.Time, source: src}
				if !routeMatch(r, m) {
					continue
				}
				out = append(out, r)
			}
		}
	}
	return out
}

// routeMatch fills r from one HTTPRouteMatch; false for one it cannot serve.
func routeMatch(r *route, m gatewayv1.HTTPRouteMatch) bool {
	r.kind, r.path = pathPrefix, ""
	if m.Path != nil {
		value := "/"
		if m.Path.Value != nil {
			value = *m.Path.Value
		}
		t := gatewayv1.PathMatchPathPrefix
		if m.Path.Type != nil {
			t = *m.Path.Type
		}
		switch t {
		case gatewayv1.PathMatchExact:
			r.kind, r.path = pathExact, value
		case gatewayv1.PathMatchRegularExpression:
			re, err := regexp.Compile("^(?:" + value + ")$")
			if err != nil {
				return false
			}
			r.kind, r.re = pathRegex, re
		default:
			r.path = strings.TrimRight(value, "/")
		}
	}
	if m.Method != nil {
		r.method = string(*m.Method)
	}
	for _, h := range m.Headers {
		if h.Type != nil && *h.Type != gatewayv1.HeaderMatchExact {
			return false
		}
		r.headers = append(r.headers, pair{string(h.Name), h.Value})
	}
	for _, q := range m.QueryParams {
		if q.Type != nil && *q.Type != gatewayv1.QueryParamMatchExact {
			return false
		}
		r.query = append(r.query, pair{string(q.Name), q.Value})
	}
	return true
}

func (w *world) gatewayStatus(gw *gatewayv1.Gateway, lns []*listener) gatewayv1.GatewayStatus {
	st := gatewayv1.GatewayStatus{}
	prev := map[string][]metav1.Condition{}
	for _, l := range gw.Status.Listeners {
		prev[string(l.Name)] = l.Conditions
	}
	st.Conditions = slices.Clone(gw.Status.Conditions)
	programmed := 0
	for _, ln := range lns {
		ls := gatewayv1.ListenerStatus{Name: ln.spec.Name, AttachedRoutes: ln.attached, Conditions: slices.Clone(prev[string(ln.spec.Name)])}
		switch {
		case ln.spec.Protocol != gatewayv1.HTTPProtocolType:
			ls.SupportedKinds = []gatewayv1.RouteGroupKind{}
			setCond(&ls.Conditions, gw.Generation, string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonUnsupportedProtocol), "labctl-ingress serves HTTP listeners only")
			setCond(&ls.Conditions, gw.Generation, string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonInvalid), "not served")
		case !ln.ok:
			ls.SupportedKinds = []gatewayv1.RouteGroupKind{kindHTTPRoute}
			setCond(&ls.Conditions, gw.Generation, string(gatewayv1.ListenerConditionAccepted), false, string(gatewayv1.ListenerReasonPortUnavailable), w.unbound[int(ln.spec.Port)])
			setCond(&ls.Conditions, gw.Generation, string(gatewayv1.ListenerConditionProgrammed), false, string(gatewayv1.ListenerReasonPending), "the port could not be opened")
		default:
			programmed++
			ls.SupportedKinds = []gatewayv1.RouteGroupKind{kindHTTPRoute}
			setCond(&ls.Conditions, gw.Generation, string(gatewayv1.ListenerConditionAccepted), true, string(gatewayv1.ListenerReasonAccepted), "served")
			setCond(&ls.Conditions, gw.Generation, string(gatewayv1.ListenerConditionProgrammed), true, string(gatewayv1.ListenerReasonProgrammed), fmt.Sprintf("serving on %s:%d", w.nodeIP, ln.spec.Port))
		}
		setCond(&ls.Conditions, gw.Generation, string(gatewayv1.ListenerConditionResolvedRefs), true, string(gatewayv1.ListenerReasonResolvedRefs), "")
		setCond(&ls.Conditions, gw.Generation, string(gatewayv1.ListenerConditionConflicted), false, string(gatewayv1.ListenerReasonNoConflicts), "")
		st.Listeners = append(st.Listeners, ls)
	}
	setCond(&st.Conditions, gw.Generation, string(gatewayv1.GatewayConditionAccepted), true, string(gatewayv1.GatewayReasonAccepted), "served by labctl-ingress")
	if programmed > 0 {
		st.Addresses = []gatewayv1.GatewayStatusAddress{{Type: ptr(gatewayv1.IPAddressType), Value: w.nodeIP}}
		setCond(&st.Conditions, gw.Generation, string(gatewayv1.GatewayConditionProgrammed), true, string(gatewayv1.GatewayReasonProgrammed), "serving on "+w.nodeIP)
	} else {
		setCond(&st.Conditions, gw.Generation, string(gatewayv1.GatewayConditionProgrammed), false, string(gatewayv1.GatewayReasonInvalid), "no listener is served")
	}
	return st
}

// setCond sets one condition, keeping its transition time when its status
// does not change.
func setCond(conds *[]metav1.Condition, gen int64, typ string, ok bool, reason, msg string) {
	s := metav1.ConditionFalse
	if ok {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: s, Reason: reason, Message: msg, ObservedGeneration: gen})
}
