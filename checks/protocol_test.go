package checks

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labctl/labctl/lab"
)

// fakeAPIServer is a TLS server answering discovery for the core group and
// one Namespace, gitops-lab, to a client bearing token.
func fakeAPIServer(t *testing.T, token string, hits *atomic.Int64) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	reply := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+token {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401}`))
				return
			}
			hits.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}
	}
	mux.HandleFunc("/api", reply(`{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1:6443"}]}`))
	mux.HandleFunc("/apis", reply(`{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`))
	mux.HandleFunc("/api/v1", reply(`{"kind":"APIResourceList","groupVersion":"v1","resources":[
		{"name":"namespaces","singularName":"namespace","namespaced":false,"kind":"Namespace","verbs":["get","list"]},
		{"name":"configmaps","singularName":"configmap","namespaced":true,"kind":"ConfigMap","verbs":["get","list"]}]}`))
	mux.HandleFunc("/api/v1/namespaces/gitops-lab", reply(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"gitops-lab","labels":{"team":"lab"}}}`))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
	})
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func caPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func TestServeRoundTrip(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "/root/a.yaml", "replicas: 3\n", 0o644)
	var hits atomic.Int64
	srv := fakeAPIServer(t, "grader-token", &hits)
	req := Request{
		Root: root,
		Kube: &KubeCredentials{Server: srv.URL, Token: "grader-token", CAData: caPEM(srv)},
		Checks: []lab.Check{
			{Name: "replicas", Points: 2, File: &lab.FileCheck{Path: "/root/a.yaml", Field: &lab.FieldAssert{Path: "replicas", Assert: lab.Assert{Equals: lit(3)}}}},
			{Name: "missing", Optional: true, File: &lab.FileCheck{Path: "/root/b.yaml"}},
			{Name: "ns", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "gitops-lab", Labels: map[string]string{"team": "lab"}}},
			{Name: "ns-label", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "gitops-lab", Labels: map[string]string{"team": "ops"}}},
			{Name: "other-ns", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "prod"}},
		},
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Serve(context.Background(), bytes.NewReader(body), &out); err != nil {
		t.Fatal(err)
	}
	var resp Response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatalf("response %s: %v", out.String(), err)
	}
	if len(resp.Results) != 5 {
		t.Fatalf("got %d results: %s", len(resp.Results), out.String())
	}
	expect(t, resp.Results[0], Pass, "")
	expect(t, resp.Results[1], Fail, "expected /root/b.yaml to exist, found nothing there")
	expect(t, resp.Results[2], Pass, "")
	expect(t, resp.Results[3], Fail, "expected label team=ops on v1 Namespace gitops-lab, found team=lab")
	expect(t, resp.Results[4], Fail, "expected v1 Namespace prod to exist, found no such object in the cluster")
	if resp.Results[0].Points != 2 || !resp.Results[1].Optional || resp.Results[0].Name != "replicas" {
		t.Errorf("names, points or optional lost on the way: %+v", resp.Results)
	}
	if !strings.Contains(out.String(), `"durationMs":`) {
		t.Errorf("response has no durationMs: %s", out.String())
	}
}

// TestServeIgnoresKubeconfig points KUBECONFIG and ~/.kube/config at a
// server that does not answer: the checker must use the request's server.
func TestServeIgnoresKubeconfig(t *testing.T) {
	home := t.TempDir()
	kubeconfig := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: learner-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	writeFile(t, home, "/kubeconfig", kubeconfig, 0o600)
	writeFile(t, home, "/.kube/config", kubeconfig, 0o600)
	t.Setenv("KUBECONFIG", filepath.Join(home, "kubeconfig"))
	t.Setenv("HOME", home)

	var hits atomic.Int64
	srv := fakeAPIServer(t, "grader-token", &hits)
	run := func(token string) Result {
		req := Request{
			Root:   "/",
			Kube:   &KubeCredentials{Server: srv.URL, Token: token, CAData: caPEM(srv)},
			Checks: []lab.Check{{Name: "ns", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "gitops-lab"}}},
		}
		body, _ := json.Marshal(req)
		var out bytes.Buffer
		if err := Serve(context.Background(), bytes.NewReader(body), &out); err != nil {
			t.Fatal(err)
		}
		var resp Response
		if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		return resp.Results[0]
	}
	expect(t, run("grader-token"), Pass, "")
	if hits.Load() == 0 {
		t.Error("the request's API server was never asked")
	}
	// The learner's token from the kubeconfig is not used either: a wrong
	// token in the request is refused, so the check cannot pass.
	if r := run("learner-token"); r.Status != Error {
		t.Errorf("with a token the server refuses: got %s %q, want error", r.Status, r.Message)
	}
}

// TestServeUnreachableClusterIsAnError: a cluster that does not answer
// says nothing about the learner's work.
func TestServeUnreachableClusterIsAnError(t *testing.T) {
	req := `{"root":"/","kube":{"server":"https://127.0.0.1:1","token":"t"},"checks":[
		{"name":"d","kube":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"a","name":"b"}},
		{"name":"absent","kube":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"a","name":"b","exists":false}}]}`
	var out bytes.Buffer
	if err := Serve(context.Background(), strings.NewReader(req), &out); err != nil {
		t.Fatal(err)
	}
	var resp Response
	if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Results {
		if r.Status != Error || !strings.Contains(r.Message, "connection refused") {
			t.Errorf("%s: got %s %q, want an error saying the connection was refused", r.Name, r.Status, r.Message)
		}
	}
}

func TestServeRejectsMalformedRequests(t *testing.T) {
	tests := []struct{ name, body, msg string }{
		{"not json", `checks please`, "reading the check request: invalid character 'c' looking for beginning of value"},
		{"unknown field", `{"root":"/","checks":[],"kubeconfig":"x"}`, `reading the check request: json: unknown field "kubeconfig"`},
		{"two requests", `{"checks":[]} {"checks":[]}`, "reading the check request: expected one JSON object, found more data after it"},
		{"relative root", `{"root":"tmp","checks":[]}`, `check request: root "tmp" is not an absolute path`},
		{"kube without server", `{"kube":{"token":"t"},"checks":[]}`, "check request: kube.server is empty; give the API server's URL or omit kube"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := Serve(context.Background(), strings.NewReader(tt.body), &out)
			if err == nil || err.Error() != tt.msg {
				t.Errorf("got error %v, want %q", err, tt.msg)
			}
			if out.Len() != 0 {
				t.Errorf("wrote %q for a malformed request", out.String())
			}
		})
	}
	var out bytes.Buffer
	if err := Serve(context.Background(), strings.NewReader(`{"checks":[]}`), &out); err != nil || strings.TrimSpace(out.String()) != `{"results":[]}` {
		t.Errorf("an empty request: error %v, output %q", err, out.String())
	}
}
