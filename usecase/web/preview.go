package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kubeClient reaches the API server as the learner, made when first
// needed.
type kubeClient struct {
	config func(ctx context.Context) (*rest.Config, error)

	mu   sync.Mutex
	cs   kubernetes.Interface
	rt   http.RoundTripper // carries the learner's identity
	host *url.URL          // the API server's address
}

// connect makes the clientset and the transport once.
func (k *kubeClient) connect(ctx context.Context) (kubernetes.Interface, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.cs != nil {
		return k.cs, nil
	}
	cfg, err := k.config(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	host, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("the cluster's address %q: %w", cfg.Host, err)
	}
	k.cs, k.rt, k.host = cs, rt, host
	return k.cs, nil
}

// The request headers that never go to the cluster: the page's cookie and
// address (which hold or lead to the token), and any identity but the
// learner's.
var droppedRequestHeaders = []string{"Cookie", "Authorization", "Origin", "Referer"}

// The app's answer headers that never reach the browser: they would act on
// the page's origin (its cookies, its storage, who may read it) or loosen
// the preview's own headers.
var droppedAnswerHeaders = []string{"Set-Cookie", "Clear-Site-Data", "Content-Security-Policy", "Content-Security-Policy-Report-Only", "X-Content-Type-Options", "Referrer-Policy"}

// proxy is the reverse proxy of one preview request: to the API server's
// proxy path of the Service's port, as the learner; root is the previews'
// path (/preview/PTOKEN), base the preview's (ROOT/NS/SVC:PORT) and
// pageHost the Host the browser named.
func (k *kubeClient) proxy(root, base, pageHost string) *httputil.ReverseProxy {
	k.mu.Lock()
	rt, host := k.rt, k.host
	k.mu.Unlock()
	return &httputil.ReverseProxy{
		Transport: rt,
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = host.Scheme, host.Host
			r.Out.Host = host.Host
			for _, h := range droppedRequestHeaders {
				r.Out.Header.Del(h)
			}
			for h := range r.Out.Header {
				if strings.HasPrefix(h, "Impersonate-") {
					r.Out.Header.Del(h)
				}
			}
		},
		ModifyResponse: func(resp *http.Response) error {
			// The preview's own headers are set already (preview).
			h := resp.Header
			for _, k := range droppedAnswerHeaders {
				h.Del(k)
			}
			for k := range h {
				if strings.HasPrefix(k, "Access-Control-") {
					h.Del(k)
				}
			}
			if loc := h.Get("Location"); loc != "" {
				h.Set("Location", previewLocation(loc, resp.Request.URL, root, base, host.Host, pageHost))
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, "the preview cannot reach the Service: "+err.Error(), http.StatusBadGateway)
		},
	}
}

// previewLocation keeps an app's redirect inside its preview: a Location
// that leads to the API server or to the page's own address (the API
// server's proxy rewrites the app's redirects onto its proxy path) becomes
// the matching preview path; any other address on it is the app's own and
// goes under base. A Location to another site stays as it is.
func previewLocation(loc string, from *url.URL, root, base, apiHost, pageHost string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return base + "/"
	}
	u = from.ResolveReference(u)
	if u.Host != apiHost && !strings.EqualFold(u.Host, pageHost) {
		return u.String()
	}
	p, ok := previewPathOf(u.Path, root)
	if !ok {
		p = base + u.Path
	}
	return (&url.URL{Path: p, RawQuery: u.RawQuery, Fragment: u.Fragment}).String()
}

// previewDoc is one Service the page can show.
type previewDoc struct {
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
	Port      int32  `json:"port"`
	URL       string `json:"url"`
}

// previewPath is the page's path of the preview of port of Service svc in
// namespace ns, with the previews' token.
func (s *Server) previewPath(ns, svc string, port int32) string {
	return fmt.Sprintf("/preview/%s/%s/%s:%d/", s.ptoken, ns, svc, port)
}

// Previews lists the Services of the lab's namespaces as the learner sees
// them, one entry per TCP port.
func (s *Server) Previews(ctx context.Context) ([]previewDoc, error) {
	out := []previewDoc{}
	if s.kube == nil {
		return out, nil
	}
	cs, err := s.kube.connect(ctx)
	if err != nil {
		return nil, err
	}
	for _, ns := range s.cfg.Lab.Cluster.Namespaces {
		list, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing the Services of %s: %w", ns, err)
		}
		for _, svc := range list.Items {
			for _, p := range svc.Spec.Ports {
				if p.Protocol != "" && p.Protocol != "TCP" {
					continue
				}
				u := s.previewPath(ns, svc.Name, p.Port)
				if !previewTarget().MatchString(u) {
					continue // no Service of the API server's has such a name
				}
				out = append(out, previewDoc{Namespace: ns, Service: svc.Name, Port: p.Port, URL: u})
			}
		}
	}
	return out, nil
}

func (s *Server) apiPreviews(w http.ResponseWriter, r *http.Request) {
	ps, err := s.Previews(r.Context())
	if err != nil {
		s.apiError(w, http.StatusBadGateway, err)
		return
	}
	writeJSON(w, http.StatusOK, ps)
}

// previewTarget is /preview/PTOKEN/NS/SVC:PORT/REST (Handler has checked
// PTOKEN), compiled at its first use: its counted repetitions make a
// large program that no other command needs.
var previewTarget = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/preview/[^/]+/([a-z0-9][a-z0-9-]{0,62})/([a-z0-9][a-z0-9-]{0,62}):([0-9]{1,5}|[a-z0-9-]{1,15})(/.*)?$`)
})

// preview proxies a request to a Service of the lab's namespaces through
// the API server's service proxy, as the learner.
func (s *Server) preview(w http.ResponseWriter, r *http.Request) {
	m := previewTarget().FindStringSubmatch(r.URL.Path)
	if m == nil {
		http.Error(w, "404 not found: a preview's address is /preview/TOKEN/NAMESPACE/SERVICE:PORT/\n", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Security-Policy", previewPolicy)
	ns, svc, port, rest := m[1], m[2], m[3], m[4]
	if !s.labNamespace(ns) {
		http.Error(w, fmt.Sprintf("403 forbidden: %s is not a namespace of the lab\n", ns), http.StatusForbidden)
		return
	}
	if rest == "" {
		http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
		return
	}
	if n, err := strconv.Atoi(port); err == nil && (n < 1 || n > 65535) {
		http.Error(w, "404 not found: a port is 1 to 65535 or a port's name\n", http.StatusNotFound)
		return
	}
	// An encoded . or .. would climb out of the Service's proxy path on
	// the API server.
	for _, seg := range strings.Split(rest, "/") {
		if seg == "." || seg == ".." {
			http.Error(w, "400 bad request: a preview's path has no . or .. segments\n", http.StatusBadRequest)
			return
		}
	}
	if s.kube == nil {
		http.Error(w, "404 not found: this server shows no previews\n", http.StatusNotFound)
		return
	}
	if _, err := s.kube.connect(r.Context()); err != nil {
		http.Error(w, "the preview cannot reach the cluster: "+err.Error(), http.StatusBadGateway)
		return
	}
	proxy := s.kube.proxy("/preview/"+s.ptoken, strings.TrimSuffix(r.URL.Path, rest), r.Host)
	out := r.Clone(r.Context())
	out.URL.Path = apiProxyPath(ns, svc, port) + rest
	out.URL.RawPath = ""
	q := out.URL.Query()
	q.Del("token")
	out.URL.RawQuery = q.Encode()
	proxy.ServeHTTP(w, out)
}

// labNamespace reports whether ns is one of the lab's namespaces.
func (s *Server) labNamespace(ns string) bool {
	for _, n := range s.cfg.Lab.Cluster.Namespaces {
		if n == ns {
			return true
		}
	}
	return false
}

// apiProxyPath is the API server's proxy path of a Service's port.
func apiProxyPath(ns, svc, port string) string {
	return fmt.Sprintf("/api/v1/namespaces/%s/services/%s:%s/proxy", ns, svc, port)
}

// apiProxyPrefix matches the API server's proxy path.
var apiProxyPrefix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/api/v1/namespaces/([^/]+)/services/([^/:]+):([^/]+)/proxy(/.*)?$`)
})

// previewPathOf maps an API server proxy path back to the page's, under
// root (/preview/PTOKEN); ok is false when p is no proxy path.
func previewPathOf(p, root string) (string, bool) {
	m := apiProxyPrefix().FindStringSubmatch(p)
	if m == nil {
		return p, false
	}
	rest := m[4]
	if rest == "" {
		rest = "/"
	}
	return root + "/" + m[1] + "/" + m[2] + ":" + m[3] + rest, true
}

// errNoService says a Service has no port to preview.
var errNoService = errors.New("the Service has no TCP port")

// ServicePreview is the preview path of Service svc in namespace ns (the
// learner's kubectl's, sandbox.namespace, when ""), on its first TCP port.
func (s *Server) ServicePreview(ctx context.Context, ns, svc string) (string, error) {
	if ns == "" {
		if len(s.cfg.Lab.Cluster.Namespaces) == 0 {
			return "", errors.New("the lab has no namespace: name one with -n")
		}
		ns = s.cfg.Lab.Cluster.Namespaces[0]
		if s.cfg.Lab.Sandbox.Namespace != "" {
			ns = s.cfg.Lab.Sandbox.Namespace
		}
	}
	if !s.labNamespace(ns) {
		return "", fmt.Errorf("%s is not a namespace of the lab (%s)", ns, strings.Join(s.cfg.Lab.Cluster.Namespaces, ", "))
	}
	if s.kube == nil {
		return "", errors.New("this server shows no previews")
	}
	cs, err := s.kube.connect(ctx)
	if err != nil {
		return "", err
	}
	got, err := cs.CoreV1().Services(ns).Get(ctx, svc, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading Service %s in %s: %w", svc, ns, err)
	}
	for _, p := range got.Spec.Ports {
		if p.Protocol == "" || p.Protocol == "TCP" {
			return s.previewPath(ns, svc, p.Port), nil
		}
	}
	return "", fmt.Errorf("%s/%s: %w", ns, svc, errNoService)
}
