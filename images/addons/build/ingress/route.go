package main

import (
	"cmp"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// pathKind is how a route matches the request's path.
type pathKind int

const (
	pathExact  pathKind = iota // the whole path
	pathPrefix                 // whole '/'-separated elements: /a matches /a and /a/b, not /ab
	pathRegex                  // a regular expression over the whole path
)

// route is one match and where it sends what it matches: an Ingress path
// or an HTTPRoute rule's match.
type route struct {
	host     string // "" any host; "*.example.com" one or more labels; else exact, lower case
	kind     pathKind
	path     string // for prefixes, without a trailing '/'
	re       *regexp.Regexp
	method   string
	headers  []pair // exact, names compared case-insensitively
	query    []pair // exact
	fallback bool   // an Ingress's default backend: only when nothing else matches

	backends []backend
	// status answers a match that has no backend to send to (an unknown
	// Service, a refused cross-namespace reference): 503 or 500.
	status int
	why    string

	// Older routes win ties, then names in order.
	created time.Time
	source  string
}

type pair struct{ name, value string }

// backend is a Service's cluster address and port, and its share of the
// route's requests.
type backend struct {
	addr   string // host:port; "" for an invalid reference, answered 500
	weight int
	why    string
}

// hostMatches reports whether the request host h (lower case, no port)
// is one r serves.
func (r *route) hostMatches(h string) bool {
	switch {
	case r.host == "":
		return true
	case strings.HasPrefix(r.host, "*."):
		suffix := r.host[1:]
		return strings.HasSuffix(h, suffix) && len(h) > len(suffix)
	default:
		return h == r.host
	}
}

func (r *route) matches(req *http.Request, host string) bool {
	if !r.hostMatches(host) {
		return false
	}
	p := req.URL.Path
	if p == "" {
		p = "/"
	}
	switch r.kind {
	case pathExact:
		if p != r.path {
			return false
		}
	case pathPrefix:
		if r.path != "" && p != r.path && !strings.HasPrefix(p, r.path+"/") {
			return false
		}
	case pathRegex:
		if !r.re.MatchString(p) {
			return false
		}
	}
	if r.method != "" && req.Method != r.method {
		return false
	}
	for _, h := range r.headers {
		if req.Header.Get(h.name) != h.value {
			return false
		}
	}
	if len(r.query) > 0 {
		q := req.URL.Query()
		for _, kv := range r.query {
			if q.Get(kv.name) != kv.value {
				return false
			}
		}
	}
	return true
}

// precedence orders routes so that the first that matches a request is
// the one the Ingress and Gateway API specifications choose: default
// backends last; an exact host before a wildcard (the longer first)
// before any host; an exact path before the longest prefix before a
// regular expression; a method, then more header and query matches; then
// the oldest, then by name.
func precedence(a, b *route) int {
	if a.fallback != b.fallback {
		if a.fallback {
			return 1
		}
		return -1
	}
	if c := cmp.Compare(hostRank(b.host), hostRank(a.host)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.kind, b.kind); c != 0 {
		return c
	}
	if a.kind == pathPrefix {
		if c := cmp.Compare(len(b.path), len(a.path)); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(b.method), len(a.method)); c != 0 && (a.method == "" || b.method == "") {
		return c
	}
	if c := cmp.Compare(len(b.headers), len(a.headers)); c != 0 {
		return c
	}
	if c := cmp.Compare(len(b.query), len(a.query)); c != 0 {
		return c
	}
	if c := a.created.Compare(b.created); c != 0 {
		return c
	}
	return strings.Compare(a.source, b.source)
}

// hostRank: exact hosts first, then wildcards by length, then any host.
func hostRank(h string) int {
	switch {
	case h == "":
		return 0
	case strings.HasPrefix(h, "*."):
		return 1 + len(h)
	default:
		return 1 << 20
	}
}

// table serves one listening port's routes.
type table struct {
	routes    []*route
	transport http.RoundTripper
}

func newTable(routes []*route, transport http.RoundTripper) *table {
	routes = slices.Clone(routes)
	slices.SortStableFunc(routes, precedence)
	return &table{routes: routes, transport: transport}
}

func (t *table) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	host := strings.ToLower(req.Host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(host, ".")
	for _, r := range t.routes {
		if !r.matches(req, host) {
			continue
		}
		b, ok := r.pick()
		if !ok {
			status := cmp.Or(r.status, http.StatusServiceUnavailable)
			http.Error(w, "labctl-ingress: "+cmp.Or(r.why, http.StatusText(status)), status)
			return
		}
		if b.addr == "" {
			http.Error(w, "labctl-ingress: "+b.why, http.StatusInternalServerError)
			return
		}
		t.proxy(w, req, b)
		return
	}
	http.Error(w, "labctl-ingress: no Ingress or HTTPRoute matches this host and path", http.StatusNotFound)
}

// pick chooses a backend by weight.
func (r *route) pick() (backend, bool) {
	total := 0
	for _, b := range r.backends {
		total += b.weight
	}
	if total == 0 {
		return backend{}, false
	}
	n := rand.IntN(total)
	for _, b := range r.backends {
		if n < b.weight {
			return b, true
		}
		n -= b.weight
	}
	return backend{}, false
}

func (t *table) proxy(w http.ResponseWriter, req *http.Request, b backend) {
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: "http", Host: b.addr})
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		Transport: t.transport,
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "labctl-ingress: the backend did not answer: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.ServeHTTP(w, req)
}
