package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// fakeAPIServer answers as a cluster's API server does for the learner:
// the Services of namespace shop, and web's service proxy.
func fakeAPIServer(t *testing.T) *httptest.Server {
	t.Helper()
	services := `{"kind":"ServiceList","apiVersion":"v1","items":[
	  {"metadata":{"name":"web","namespace":"shop"},"spec":{"ports":[{"name":"http","port":80,"protocol":"TCP"}]}},
	  {"metadata":{"name":"dns","namespace":"shop"},"spec":{"ports":[{"port":53,"protocol":"UDP"}]}}]}`
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer learner-token" {
			http.Error(w, "not the learner", http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Cookie") != "" {
			http.Error(w, "the page's cookie reached the cluster", http.StatusTeapot)
			return
		}
		switch {
		case r.URL.Path == "/api/v1/namespaces/shop/services":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(services))
		case r.URL.Path == "/api/v1/namespaces/shop/services/web":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"kind":"Service","apiVersion":"v1","metadata":{"name":"web","namespace":"shop"},"spec":{"ports":[{"port":8080,"protocol":"TCP"}]}}`))
		case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/shop/services/web:80/proxy/"):
			if r.URL.Path == "/api/v1/namespaces/shop/services/web:80/proxy/old" {
				http.Redirect(w, r, "http://"+r.Host+"/api/v1/namespaces/shop/services/web:80/proxy/new", http.StatusFound)
				return
			}
			w.Header().Set("Content-Security-Policy", "default-src *")
			w.Header().Set("Set-Cookie", "app=1")
			_, _ = w.Write([]byte("hello from web at " + strings.TrimPrefix(r.URL.Path, "/api/v1/namespaces/shop/services/web:80/proxy") + "?" + r.URL.RawQuery))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(api.Close)
	return api
}

func withKube(api *httptest.Server) func(*Config) {
	return func(c *Config) {
		c.Kube = func(context.Context) (*rest.Config, error) {
			return &rest.Config{Host: api.URL, BearerToken: "learner-token"}, nil
		}
	}
}

func TestPreviews(t *testing.T) {
	ts := startServer(t, withKube(fakeAPIServer(t)))
	resp, body := ts.request(t, http.MethodGet, "/api/previews", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/previews: %d %s", resp.StatusCode, body)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{{"namespace": "shop", "service": "web", "port": float64(80), "url": ts.pv("/preview/shop/web:80/")}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("previews %v, want %v", got, want)
	}

	resp, body = ts.request(t, http.MethodGet, ts.pv("/preview/shop/web:80/a/b?x=1"), "")
	if resp.StatusCode != http.StatusOK || body != "hello from web at /a/b?x=1" {
		t.Errorf("the preview: %d %q", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); csp != previewPolicy {
		t.Errorf("the preview's policy is %q, want %q", csp, previewPolicy)
	}
	if resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("the app's cookie reached the page: %q", resp.Header.Get("Set-Cookie"))
	}
	resp, _ = ts.request(t, http.MethodGet, ts.pv("/preview/shop/web:80/old"), "")
	if want := ts.pv("/preview/shop/web:80/new"); resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		t.Errorf("a redirect of the app: %d to %q, want to %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	// A sandboxed document's requests come without the cookie: the path's
	// token is enough.
	resp, body = ts.request(t, http.MethodGet, ts.pv("/preview/shop/web:80/style.css"), "", noCookie, header("Origin", ""))
	if resp.StatusCode != http.StatusOK || body != "hello from web at /style.css?" {
		t.Errorf("a preview's sub-resource without the cookie: %d %q", resp.StatusCode, body)
	}
	// The URL labctl open prints is the preview's address, without the
	// page's token.
	if u := ts.PathURL(ts.pv("/preview/shop/web:80/")); u != ts.base+ts.pv("/preview/shop/web:80/") {
		t.Errorf("PathURL of a preview = %q, want %q", u, ts.base+ts.pv("/preview/shop/web:80/"))
	}
	if u := ts.PathURL("/"); u != ts.base+"/?token="+ts.Token() {
		t.Errorf("PathURL(/) = %q", u)
	}

	for _, p := range []string{"/preview/kube-system/web:80/", "/preview/shop/", "/preview/shop/web:80/../../kube-system/x:1/"} {
		p = ts.pv(p)
		resp, body := ts.request(t, http.MethodGet, p, "")
		switch resp.StatusCode {
		case http.StatusForbidden, http.StatusNotFound:
		case http.StatusMovedPermanently, http.StatusTemporaryRedirect:
			// To the clean path, which is refused in its turn.
			if loc := resp.Header.Get("Location"); strings.HasPrefix(loc, ts.pv("/preview/shop/web:80/")) {
				t.Errorf("GET %s leads to %s", p, loc)
			}
		default:
			t.Errorf("GET %s: %d %q, want it refused", p, resp.StatusCode, body)
		}
		if strings.Contains(body, "hello from web") {
			t.Errorf("GET %s reached the app", p)
		}
	}
	if resp, _ := ts.request(t, http.MethodGet, "/preview/shop/web:80/", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a preview without the previews' token: %d, want 403", resp.StatusCode)
	}

	path, err := ts.ServicePreview(context.Background(), "", "web")
	if want := ts.pv("/preview/shop/web:8080/"); err != nil || path != want {
		t.Errorf("ServicePreview(web) = %q, %v; want %s", path, err, want)
	}
	if _, err := ts.ServicePreview(context.Background(), "kube-system", "web"); err == nil || !strings.Contains(err.Error(), "not a namespace of the lab") {
		t.Errorf("ServicePreview in kube-system: %v", err)
	}
}

func TestNoPreviewsWithoutKube(t *testing.T) {
	ts := startServer(t)
	resp, body := ts.request(t, http.MethodGet, "/api/previews", "")
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(body) != "[]" {
		t.Errorf("GET /api/previews without the learner's identity: %d %q, want []", resp.StatusCode, body)
	}
}
