package web

// The attacks of docs/ui.md's security section: each test fails if its
// attack works. The attackers are another local user (no token), a web
// page of another origin in the learner's browser, a DNS name pointed at
// 127.0.0.1, and the learner's own lab: the texts, check messages and
// Service names it shows and the app behind a preview.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/lab"
)

// rawRequest sends text as one HTTP request on a new connection and
// returns the status line: for requests no http.Client would send.
func rawRequest(t *testing.T, ts *testServer, text string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", ts.host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, text); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to %q: %v", text, err)
	}
	return strings.TrimSpace(line)
}

func TestAttackToken(t *testing.T) {
	// A file takes the server's lines from any goroutine.
	log, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	ts := startServer(t, func(c *Config) { c.Log = log })
	tok := ts.Token()
	refused := func(what string, adjust ...func(*http.Request)) {
		t.Helper()
		resp, body := ts.request(t, http.MethodGet, "/api/lab", "", adjust...)
		if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "web-test") {
			t.Errorf("%s: %d %q, want 403", what, resp.StatusCode, body)
		}
	}
	refused("no token", noCookie)
	refused("a wrong token", header("Cookie", cookieName+"="+strings.Repeat("a", len(tok))))
	refused("a prefix of the token", header("Cookie", cookieName+"="+tok[:32]))
	refused("the token and more", header("Cookie", cookieName+"="+tok+"0"))
	refused("an empty cookie", header("Cookie", cookieName+"="))
	refused("the token in the Referer", noCookie, header("Referer", ts.URL()))
	refused("the token in another cookie", header("Cookie", "token="+tok))
	refused("the token in the Authorization header", noCookie, header("Authorization", "Bearer "+tok))
	// A cookie of the same name set by a page of another port of this host
	// (cookies do not keep ports apart) does not lock the page out.
	for _, cookie := range []string{cookieName + "=tossed; " + cookieName + "=" + tok, cookieName + "=" + tok + "; " + cookieName + "=tossed"} {
		if resp, body := ts.request(t, http.MethodGet, "/api/lab", "", header("Cookie", cookie)); resp.StatusCode != http.StatusOK {
			t.Errorf("Cookie: %s: %d %q, want 200", cookie, resp.StatusCode, body)
		}
	}
	for _, p := range []string{"/api/lab?token=" + tok[:63], "/api/lab?Token=" + tok, "/api/lab?token=" + strings.ToUpper(tok)} {
		if resp, _ := ts.request(t, http.MethodGet, p, "", noCookie); resp.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s: %d, want 403", p, resp.StatusCode)
		}
	}

	// Led here by another site (the file labctl ui gives the browser is
	// one), a redirect would not carry the SameSite=Strict cookie: the
	// cookie is set with a page that refreshes to the address without the
	// token.
	resp, body := ts.request(t, http.MethodGet, "/?token="+tok+"&x=1", "", noCookie, header("Origin", ""), header("Sec-Fetch-Site", "cross-site"))
	var set bool
	for _, c := range resp.Cookies() {
		set = set || (c.Name == cookieName && c.Value == tok && c.HttpOnly && c.SameSite == http.SameSiteStrictMode)
	}
	if resp.StatusCode != http.StatusOK || !set || strings.Contains(body, tok) || !strings.Contains(body, `<meta http-equiv="refresh" content="0;url=/?x=1">`) {
		t.Errorf("GET /?token= from another site: %d, cookie set %v, body %q; want 200, the cookie and a refresh to /?x=1", resp.StatusCode, set, body)
	}
	// The token leaves the address bar and never comes back in a Location.
	for _, p := range []string{"/?token=" + tok, "/?token=" + tok + "&token=" + tok + "&x=1"} {
		resp, _ := ts.request(t, http.MethodGet, p, "", noCookie, header("Origin", ""))
		loc := resp.Header.Get("Location")
		if resp.StatusCode/100 != 3 || strings.Contains(loc, tok) {
			t.Errorf("GET %s: %d to %q, want a redirect without the token", p, resp.StatusCode, loc)
		}
	}
	// Nor in the log.
	c := dialTerminal(t, ts, "leak")
	watch(c).waitFor(t, "Step one")
	c.CloseNow()
	ts.request(t, http.MethodPost, "/api/check?token="+tok, `{"step":"nope"}`)
	ts.request(t, http.MethodGet, "/api/report?token="+tok, "")
	ts.Close() // the terminal's last lines are written
	logged, err := os.ReadFile(log.Name())
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) == 0 || strings.Contains(string(logged), tok) {
		t.Errorf("the log is empty or holds the token:\n%s", logged)
	}
}

// TestTokenComparedInConstantTime reads the package's source: the token
// is compared only through subtle.ConstantTimeCompare (isToken), never
// with == or strings functions, whose time tells how much of a guess was
// right.
func TestTokenComparedInConstantTime(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		isTokenExpr := func(e ast.Expr) bool {
			sel, ok := e.(*ast.SelectorExpr)
			return ok && sel.Sel.Name == "token"
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isTokenExpr(n.X) || isTokenExpr(n.Y)) {
					t.Errorf("%s: the token compared with %s", fset.Position(n.Pos()), n.Op)
				}
			case *ast.CallExpr:
				fun, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := fun.X.(*ast.Ident)
				if !ok || (pkg.Name != "strings" && pkg.Name != "bytes") {
					return true
				}
				for _, a := range n.Args {
					if isTokenExpr(a) {
						t.Errorf("%s: the token compared with %s.%s", fset.Position(n.Pos()), pkg.Name, fun.Sel.Name)
					}
				}
			}
			return true
		})
	}
	src, err := os.ReadFile("server.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte("subtle.ConstantTimeCompare([]byte(v), []byte(s.token))")) {
		t.Error("isToken no longer compares with subtle.ConstantTimeCompare")
	}
}

func TestAttackDNSRebinding(t *testing.T) {
	ts := startServer(t)
	port := ts.host[strings.LastIndex(ts.host, ":")+1:]
	for _, host := range []string{
		"evil.example:" + port, "127.0.0.1.nip.io:" + port, "localhost.:" + port, "127.1:" + port,
		"[::ffff:127.0.0.1]:" + port, "[0:0:0:0:0:0:0:1]:" + port, "127.0.0.1:" + port + ".evil.example",
	} {
		resp, body := ts.request(t, http.MethodGet, "/api/lab", "", func(r *http.Request) { r.Host = host }, header("Origin", "http://"+host))
		if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "web-test") {
			t.Errorf("Host %q: %d %q, want 403", host, resp.StatusCode, body)
		}
	}
	// No Host at all (HTTP/1.0), and an absolute URL naming another host.
	cookie := "Cookie: " + cookieName + "=" + ts.Token() + "\r\n"
	for _, req := range []string{
		"GET /api/lab HTTP/1.0\r\n" + cookie + "\r\n",
		"GET http://evil.example:" + port + "/api/lab HTTP/1.1\r\nHost: " + ts.host + "\r\n" + cookie + "Connection: close\r\n\r\n",
	} {
		if got := rawRequest(t, ts, req); !strings.Contains(got, " 403 ") && !strings.Contains(got, " 400 ") {
			t.Errorf("%q: %s, want 403 or 400", req, got)
		}
	}
	if got := rawRequest(t, ts, "GET /api/lab HTTP/1.1\r\nHost: "+ts.host+"\r\n"+cookie+"Connection: close\r\n\r\n"); !strings.Contains(got, " 200 ") {
		t.Errorf("the same raw request with the right Host: %s, want 200", got)
	}
}

func TestAttackCrossSiteRequests(t *testing.T) {
	ts := startServer(t)
	for _, path := range []string{"/api/check", "/api/grade", "/api/solution"} {
		for _, c := range []struct {
			name   string
			adjust []func(*http.Request)
		}{
			{"a foreign Origin", []func(*http.Request){header("Origin", "http://evil.example")}},
			{"Origin: null (a sandboxed frame or a file)", []func(*http.Request){header("Origin", "null")}},
			{"no Origin", []func(*http.Request){header("Origin", "")}},
			{"a form's text/plain", []func(*http.Request){header("Origin", "http://evil.example"), header("Content-Type", "text/plain")}},
			{"the page's address as Referer only", []func(*http.Request){header("Origin", ""), header("Referer", ts.base+"/")}},
			{"another loopback name as Origin", []func(*http.Request){header("Origin", "http://localhost"+ts.host[strings.LastIndex(ts.host, ":"):])}},
		} {
			resp, body := ts.request(t, http.MethodPost, path, `{"step":"one"}`, c.adjust...)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s with %s: %d %q, want 403", path, c.name, resp.StatusCode, body)
			}
		}
	}
	for _, m := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch} {
		if resp, _ := ts.request(t, m, "/api/check", `{}`, header("Origin", "http://evil.example")); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s /api/check from another site: %d, want 403", m, resp.StatusCode)
		}
	}
	if n := len(ts.sandbox.opened()); n != 0 {
		t.Errorf("%d shells opened", n)
	}
	st, err := ts.progress().State()
	if err != nil || len(st.Passed) != 0 {
		t.Errorf("the refused requests changed the progress: %+v %v", st, err)
	}
	if p, err := ts.store.Load(ts.lab.Metadata.Name); err != nil || len(p.SolutionShown) != 0 {
		t.Errorf("a refused request recorded a solution as shown: %v %v", p.SolutionShown, err)
	}
	// The page's own request is served: the refusals are the Origin's doing.
	if resp, body := ts.request(t, http.MethodPost, "/api/check", `{"step":"one"}`); resp.StatusCode != http.StatusOK {
		t.Errorf("POST /api/check from the page: %d %s", resp.StatusCode, body)
	}

	for _, origin := range []string{"http://evil.example", "null", "", "http://" + ts.host + ".evil.example"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		h := http.Header{"Cookie": {cookieName + "=" + ts.Token()}}
		if origin != "" {
			h.Set("Origin", origin)
		}
		c, resp, err := websocket.Dial(ctx, "ws://"+ts.host+"/ws/terminal?id=x", &websocket.DialOptions{HTTPHeader: h})
		cancel()
		if err == nil {
			c.CloseNow()
			t.Errorf("a WebSocket with Origin %q was accepted", origin)
		} else if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("a WebSocket with Origin %q: %v, want 403", origin, err)
		}
	}
}

func TestAttackAssetPaths(t *testing.T) {
	ts := startServer(t)
	for _, p := range []string{
		"/assets/../server.go", "/assets/%2e%2e/server.go", "/assets/..%2fserver.go", "/assets/%2e%2e%2fserver.go",
		"/assets/..%5cserver.go", "/assets/.", "/assets/%00", "/assets/app.js%00.png", "/assets//etc/passwd",
	} {
		resp, body := ts.request(t, http.MethodGet, "/", "", asWritten(p))
		if resp.StatusCode == http.StatusOK {
			t.Errorf("GET %s: 200 %q", p, body)
		}
	}
}

// asWritten sends the request's path as written, not cleaned or
// re-encoded by the client.
func asWritten(path string) func(*http.Request) {
	return func(r *http.Request) { r.URL.Opaque = path }
}

// recordingAPI is an API server that records what reaches it and answers
// the service proxy of shop/web:80 as the test says.
type recordingAPI struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	answer   func(w http.ResponseWriter, r *http.Request, rest string)
}

const webProxy = "/api/v1/namespaces/shop/services/web:80/proxy"

func newRecordingAPI(t *testing.T, services string) *recordingAPI {
	t.Helper()
	a := &recordingAPI{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.requests = append(a.requests, r.Clone(context.Background()))
		answer := a.answer
		a.mu.Unlock()
		switch {
		case r.URL.Path == "/api/v1/namespaces/shop/services":
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, services)
		case strings.HasPrefix(r.URL.Path, webProxy+"/") && answer != nil:
			answer(w, r, strings.TrimPrefix(r.URL.Path, webProxy))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *recordingAPI) reached() []*http.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.requests
	a.requests = nil
	return out
}

func (a *recordingAPI) kube(c *Config) {
	c.Kube = func(context.Context) (*rest.Config, error) {
		return &rest.Config{Host: a.URL, BearerToken: "learner-token"}, nil
	}
}

func TestAttackPreviewPaths(t *testing.T) {
	api := newRecordingAPI(t, `{"kind":"ServiceList","apiVersion":"v1","items":[]}`)
	api.answer = func(w http.ResponseWriter, _ *http.Request, rest string) { _, _ = io.WriteString(w, "app at "+rest) }
	ts := startServer(t, api.kube)
	for _, p := range []string{
		"/preview/shop/web:80/../../../api/v1/secrets",
		"/preview/shop/web:80/%2e%2e/%2e%2e/%2e%2e/api/v1/secrets",
		"/preview/shop/web:80/..%2f..%2f..%2fapi/v1/secrets",
		"/preview/shop/web:80/%2e%2e%2f%2e%2e%2f%2e%2e%2fapi%2fv1%2fsecrets",
		"/preview/shop/web:80/x/..%2f..%2f..%2f..%2fapi/v1/secrets",
		"/preview/shop/web:80/.%2e/.%2e/.%2e/api/v1/secrets",
		"/preview/shop/web:80/./../../../api/v1/secrets",
		"/preview/shop/web:http%2f..%2f..%2f..%2f/api/v1/secrets",
		"/preview/shop/web:80%2f..%2f..%2f..%2f/api/v1/secrets",
		"/preview/kube-system/kube-dns:53/",
		"/preview/kube-system/kube-dns:dns-tcp/x",
		"/preview/shop%2f..%2fkube-system/kube-dns:53/",
		"/preview/shop/web:80@evil.example/",
		"/preview/shop/web@evil.example:80/",
		"/preview/shop/web:80:81/",
		"/preview/shop/web:evil.example:80/",
		"/preview/shop/web%3a80%40evil.example%2f/",
		"/preview/shop/web:80/%2e%2e",
		"/preview/shop/web:80/%2e",
		"/preview/Shop/web:80/",
		"/preview/shop/web:99999/",
	} {
		resp, body := ts.request(t, http.MethodGet, "/", "", asWritten(ts.pv(p)))
		if resp.StatusCode == http.StatusOK {
			t.Errorf("GET %s: 200 %q, want it refused", p, body)
		}
		for _, r := range api.reached() {
			if !strings.HasPrefix(r.URL.Path, webProxy+"/") || strings.Contains("/"+r.URL.Path+"/", "/../") || strings.Contains(r.URL.Path, "/./") {
				t.Errorf("GET %s reached the API server at %s (raw %q)", p, r.URL.Path, r.URL.RawPath)
			}
		}
	}
	// Everything that reaches the API server is shop/web:80's proxy.
	for _, p := range []string{"/preview/shop/web:80/a/b", "/preview/shop/web:80/@evil.example/x", "/preview/shop/web:80//evil.example/", "/preview/shop/web:80/a%2fb", "/preview/shop/web:80/a%3fb%23c"} {
		// The app, or ServeMux's redirect to the cleaned path in the preview.
		resp, body := ts.request(t, http.MethodGet, "/", "", asWritten(ts.pv(p)))
		if resp.StatusCode != http.StatusOK && !strings.HasPrefix(resp.Header.Get("Location"), ts.pv("/preview/shop/web:80/")) {
			t.Errorf("GET %s: %d %q, want the app", p, resp.StatusCode, body)
		}
		for _, r := range api.reached() {
			if !strings.HasPrefix(r.URL.Path, webProxy+"/") || r.Host != strings.TrimPrefix(api.URL, "http://") {
				t.Errorf("GET %s reached %s%s", p, r.Host, r.URL.Path)
			}
		}
	}
}

// TestAttackPreviewToken: a preview is opened by the previews' token in
// its path, and by nothing else; that token opens nothing else.
func TestAttackPreviewToken(t *testing.T) {
	api := newRecordingAPI(t, `{"kind":"ServiceList","apiVersion":"v1","items":[]}`)
	api.answer = func(w http.ResponseWriter, _ *http.Request, rest string) { _, _ = io.WriteString(w, "app at "+rest) }
	ts := startServer(t, api.kube)
	tok, ptok := ts.Token(), ts.ptoken
	if ptok == tok || len(ptok) != 64 {
		t.Fatalf("the previews' token %q: want 64 hex digits of its own", ptok)
	}
	if resp, body := ts.request(t, http.MethodGet, "/preview/"+ptok+"/shop/web:80/a", "", noCookie, header("Origin", "")); resp.StatusCode != http.StatusOK || body != "app at /a" {
		t.Fatalf("the preview with its token and no cookie: %d %q, want the app", resp.StatusCode, body)
	}
	api.reached()
	for _, c := range []struct {
		what, path string
	}{
		{"no previews' token", "/preview/shop/web:80/a"},
		{"an empty one", "/preview//shop/web:80/a"},
		{"a wrong one", "/preview/" + strings.Repeat("a", 64) + "/shop/web:80/a"},
		{"a prefix", "/preview/" + ptok[:32] + "/shop/web:80/a"},
		{"the token and more", "/preview/" + ptok + "0/shop/web:80/a"},
		{"in upper case", "/preview/" + strings.ToUpper(ptok) + "/shop/web:80/a"},
		{"the page's token in its place", "/preview/" + tok + "/shop/web:80/a"},
		{"the page's token in the query", "/preview/shop/web:80/a?token=" + tok},
		{"the page's token as a segment and the query", "/preview/" + tok + "/shop/web:80/a?token=" + tok},
		{"the previews' token in the query", "/preview/shop/web:80/a?token=" + ptok},
	} {
		// With the page's cookie too: it opens no preview.
		resp, body := ts.request(t, http.MethodGet, c.path, "")
		if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
			t.Errorf("%s (GET %s): %d %q, cookies %v; want 403", c.what, c.path, resp.StatusCode, body, resp.Cookies())
		}
		if n := len(api.reached()); n != 0 {
			t.Errorf("%s (GET %s) reached the API server %d times", c.what, c.path, n)
		}
	}
	// The page's API, assets, page and terminals refuse the previews' token.
	for _, c := range []struct {
		path   string
		adjust []func(*http.Request)
	}{
		{"/api/lab?token=" + ptok, []func(*http.Request){noCookie}},
		{"/api/lab", []func(*http.Request){header("Cookie", cookieName+"="+ptok)}},
		{"/api/state?token=" + ptok, []func(*http.Request){noCookie}},
		{"/assets/app.js?token=" + ptok, []func(*http.Request){noCookie}},
		{"/?token=" + ptok, []func(*http.Request){noCookie}},
		{"/ws/terminal?id=p&token=" + ptok, []func(*http.Request){noCookie, header("Connection", "Upgrade"), header("Upgrade", "websocket"), header("Sec-WebSocket-Version", "13"), header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")}},
		{"/ws/terminal?id=p", []func(*http.Request){header("Cookie", cookieName+"="+ptok), header("Connection", "Upgrade"), header("Upgrade", "websocket"), header("Sec-WebSocket-Version", "13"), header("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")}},
		{"/api/" + ptok + "/lab", []func(*http.Request){noCookie}},
	} {
		resp, body := ts.request(t, http.MethodGet, c.path, "", c.adjust...)
		if resp.StatusCode != http.StatusForbidden || len(resp.Cookies()) != 0 {
			t.Errorf("GET %s with the previews' token: %d %q, cookies %v; want 403", c.path, resp.StatusCode, body, resp.Cookies())
		}
	}
	if resp, body := ts.request(t, http.MethodPost, "/api/check?token="+ptok, `{"step":"one"}`, noCookie); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /api/check with the previews' token: %d %q, want 403", resp.StatusCode, body)
	}
	if got := ts.sandbox.opened(); len(got) != 0 {
		t.Errorf("%d shells opened with the previews' token", len(got))
	}
	// Origin null (a sandboxed document's) is a preview's own, and only
	// there; a foreign or missing Origin is refused there too.
	if resp, body := ts.request(t, http.MethodPost, "/api/check", `{"step":"one"}`, header("Origin", "null")); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /api/check with Origin null: %d %q, want 403", resp.StatusCode, body)
	}
	for _, origin := range []string{"http://evil.example", ""} {
		if resp, body := ts.request(t, http.MethodPost, ts.pv("/preview/shop/web:80/form"), "a=1", noCookie, header("Origin", origin)); resp.StatusCode != http.StatusForbidden {
			t.Errorf("a preview's POST with Origin %q: %d %q, want 403", origin, resp.StatusCode, body)
		}
	}
	if n := len(api.reached()); n != 0 {
		t.Errorf("refused requests reached the API server %d times", n)
	}
	if resp, body := ts.request(t, http.MethodPost, ts.pv("/preview/shop/web:80/form"), "a=1", noCookie, header("Origin", "null")); resp.StatusCode != http.StatusOK || body != "app at /form" {
		t.Errorf("a preview's own form POST (Origin null): %d %q, want the app", resp.StatusCode, body)
	}
}

func TestAttackThePreviewSeesNothingOfThePage(t *testing.T) {
	api := newRecordingAPI(t, `{"kind":"ServiceList","apiVersion":"v1","items":[]}`)
	api.answer = func(w http.ResponseWriter, _ *http.Request, _ string) { _, _ = io.WriteString(w, "ok") }
	ts := startServer(t, api.kube)
	tok := ts.Token()
	for _, c := range []struct {
		method, path string
		adjust       []func(*http.Request)
	}{
		{"GET", "/preview/shop/web:80/a", []func(*http.Request){header("Referer", ts.URL())}},
		{"GET", "/preview/shop/web:80/a?x=1", []func(*http.Request){header("Authorization", "Bearer "+tok), header("Cookie", cookieName+"="+tok+"; app=1")}},
		{"HEAD", "/preview/shop/web:80/a?token=" + tok, nil},
		{"POST", "/preview/shop/web:80/a?token=" + tok + "&token=" + tok, nil},
		{"POST", "/preview/shop/web:80/a", []func(*http.Request){noCookie, header("Origin", "null")}},
		{"GET", "/preview/shop/web:80/a", []func(*http.Request){header("Impersonate-User", "system:admin"), header("Impersonate-Group", "system:masters"), header("X-Forwarded-For", "1.2.3.4")}},
	} {
		resp, body := ts.request(t, c.method, ts.pv(c.path), "", c.adjust...)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s: %d %q", c.method, c.path, resp.StatusCode, body)
		}
		reached := api.reached()
		if len(reached) != 1 {
			t.Fatalf("%s %s reached the API server %d times", c.method, c.path, len(reached))
		}
		r := reached[0]
		var dump bytes.Buffer
		fmt.Fprintf(&dump, "%s %s\n", r.Method, r.URL.String())
		_ = r.Header.Write(&dump)
		if strings.Contains(dump.String(), tok) || strings.Contains(dump.String(), ts.ptoken) {
			t.Errorf("%s %s: a token reached the cluster:\n%s", c.method, c.path, dump.String())
		}
		for k := range r.Header {
			if k == "Cookie" || k == "Referer" || k == "Origin" || strings.HasPrefix(k, "Impersonate-") {
				t.Errorf("%s %s: %s reached the cluster:\n%s", c.method, c.path, k, dump.String())
			}
		}
		if r.Header.Get("Authorization") != "Bearer learner-token" {
			t.Errorf("%s %s: the cluster was reached as %q, want the learner", c.method, c.path, r.Header.Get("Authorization"))
		}
	}
}

func TestAttackThePreviewsAnswers(t *testing.T) {
	api := newRecordingAPI(t, `{"kind":"ServiceList","apiVersion":"v1","items":[]}`)
	const big = 10 << 20
	var pageHost string // the page's address, which the app redirects to
	api.answer = func(w http.ResponseWriter, r *http.Request, rest string) {
		h := w.Header()
		switch rest {
		case "/cookie":
			h.Add("Set-Cookie", cookieName+"=stolen; Path=/")
			h.Add("Set-Cookie", "app=1; Path=/api")
			h.Set("Clear-Site-Data", `"cookies", "storage"`)
			h.Set("Access-Control-Allow-Origin", "http://evil.example")
			h.Set("Access-Control-Allow-Credentials", "true")
			_, _ = io.WriteString(w, "cookies")
		case "/script":
			h.Set("Content-Type", "text/html")
			h.Set("Content-Security-Policy", "sandbox allow-scripts allow-same-origin")
			h.Set("X-Content-Type-Options", "")
			_, _ = io.WriteString(w, `<script>fetch("/api/grade",{method:"POST"}); parent.document.cookie</script>`)
		case "/referrer":
			h.Set("Content-Type", "text/html")
			h.Set("Referrer-Policy", "unsafe-url")
			_, _ = io.WriteString(w, `<meta name="referrer" content="unsafe-url"><img src="http://127.0.0.1:9/x"><a href="http://127.0.0.1:9/" target="_blank">x</a>`)
		case "/big":
			h.Set("Content-Length", fmt.Sprint(big))
			chunk := bytes.Repeat([]byte("x"), 64<<10)
			for n := 0; n < big; n += len(chunk) {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/to-api":
			http.Redirect(w, r, "/api/grade", http.StatusFound)
		case "/to-page":
			w.Header().Set("Location", "http://"+pageHost+"/api/report")
			w.WriteHeader(http.StatusFound)
		case "/to-proxy":
			// The API server rewrites the app's redirects onto its
			// proxy path, without a host.
			http.Redirect(w, r, webProxy+"/next", http.StatusFound)
		case "/to-other":
			http.Redirect(w, r, "http://"+r.Host+"/api/v1/namespaces/kube-system/services/x:1/proxy/", http.StatusFound)
		case "/to-outside":
			http.Redirect(w, r, "https://example.org/x", http.StatusFound)
		}
	}
	ts := startServer(t, api.kube)
	pageHost = ts.host

	resp, _ := ts.request(t, http.MethodGet, ts.pv("/preview/shop/web:80/cookie"), "")
	for _, k := range []string{"Set-Cookie", "Clear-Site-Data", "Access-Control-Allow-Origin", "Access-Control-Allow-Credentials"} {
		if v := resp.Header.Values(k); len(v) > 0 {
			t.Errorf("the app's %s reached the browser: %q", k, v)
		}
	}

	resp, _ = ts.request(t, http.MethodGet, ts.pv("/preview/shop/web:80/script"), "")
	csp := resp.Header.Values("Content-Security-Policy")
	if len(csp) != 1 || csp[0] != previewPolicy || strings.Contains(csp[0], "allow-same-origin") || !strings.HasPrefix(csp[0], "sandbox ") {
		t.Errorf("an app's HTML page has the policy %q, want only %q (a sandbox without allow-same-origin)", csp, previewPolicy)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("an app's page: X-Content-Type-Options %q, Referrer-Policy %q", resp.Header.Get("X-Content-Type-Options"), resp.Header.Get("Referrer-Policy"))
	}

	// The app asks for its address (the previews' token in it) to go with
	// its requests to other sites. Its header is replaced; its <meta> and
	// referrerpolicy attributes the browser would obey, but a document of
	// an opaque origin (the sandbox) sends no Referer, and the preview's
	// document reaches no other site (TestBrowserPreviewKeepsItsTokenFromOthers
	// shows both in Chromium).
	resp, _ = ts.request(t, http.MethodGet, ts.pv("/preview/shop/web:80/referrer"), "")
	if rp := resp.Header.Values("Referrer-Policy"); len(rp) != 1 || rp[0] != "no-referrer" {
		t.Errorf("the app's Referrer-Policy unsafe-url comes out as %q, want only no-referrer", rp)
	}
	policy := resp.Header.Get("Content-Security-Policy")
	sandbox, rest, _ := strings.Cut(policy, ";")
	for _, flag := range []string{"allow-same-origin", "allow-popups", "allow-top-navigation", "allow-popups-to-escape-sandbox"} {
		if strings.Contains(sandbox, flag) {
			t.Errorf("the preview's sandbox allows %s: %q", flag, policy)
		}
	}
	for _, d := range []string{"default-src 'self' ", "form-action 'self'", "frame-ancestors 'self'"} {
		if !strings.Contains(rest, d) {
			t.Errorf("the preview's policy has no %s: %q", d, policy)
		}
	}
	if strings.Contains(rest, "*") || strings.Contains(rest, "http:") {
		t.Errorf("the preview's policy lets it reach other sites: %q", policy)
	}

	resp, body := ts.request(t, http.MethodGet, ts.pv("/preview/shop/web:80/big"), "")
	if resp.StatusCode != http.StatusOK || len(body) != big {
		t.Errorf("a 10 MB answer: %d, %d bytes", resp.StatusCode, len(body))
	}

	for _, c := range []struct{ path, want string }{
		{"/to-api", ts.pv("/preview/shop/web:80/api/grade")},
		{"/to-page", ts.pv("/preview/shop/web:80/api/report")},
		{"/to-proxy", ts.pv("/preview/shop/web:80/next")},
		{"/to-outside", "https://example.org/x"},
	} {
		resp, _ := ts.request(t, http.MethodGet, ts.pv("/preview/shop/web:80"+c.path), "")
		if loc := resp.Header.Get("Location"); loc != c.want {
			t.Errorf("the app redirects (%s) to %q, want %q", c.path, loc, c.want)
		}
	}
	resp, _ = ts.request(t, http.MethodGet, ts.pv("/preview/shop/web:80/to-other"), "")
	if loc := resp.Header.Get("Location"); !strings.HasPrefix(loc, ts.pv("/preview/shop/web:80/")) && !strings.HasPrefix(loc, ts.pv("/preview/kube-system/")) {
		t.Errorf("a redirect to another namespace's proxy leads to %q", loc)
	} else if strings.HasPrefix(loc, ts.pv("/preview/kube-system/")) {
		if r, _ := ts.request(t, http.MethodGet, loc, ""); r.StatusCode != http.StatusForbidden {
			t.Errorf("GET %s: %d, want 403", loc, r.StatusCode)
		}
	}
}

func TestAttackLearnerText(t *testing.T) {
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>"'` + "`"
	api := newRecordingAPI(t, `{"kind":"ServiceList","apiVersion":"v1","items":[
	  {"metadata":{"name":"web","namespace":"shop"},"spec":{"ports":[{"port":80,"protocol":"TCP"}]}},
	  {"metadata":{"name":"<script>alert(1)</script>","namespace":"shop"},"spec":{"ports":[{"port":80,"protocol":"TCP"}]}},
	  {"metadata":{"name":"x\" onload=\"alert(1)","namespace":"shop"},"spec":{"ports":[{"port":80,"protocol":"TCP"}]}},
	  {"metadata":{"name":"javascript:alert(1)//","namespace":"shop"},"spec":{"ports":[{"port":80,"protocol":"TCP"}]}}]}`)
	ts := startServer(t, api.kube, func(c *Config) {
		l := c.Lab
		l.Metadata.Title = evil
		l.Metadata.Goal = evil + "\n\n[x](javascript:alert(1)) <javascript:alert(1)> ![i](data:text/html,x)"
		l.Metadata.Why = evil + "\n\n[x](javascript:alert(1))"
		l.Steps[0].Title = evil
		l.Steps[0].Instructions = "<iframe src=/api/grade></iframe>\n\n" + evil
		l.Steps[0].Why = `<a href="javascript:alert(1)">x</a>`
		l.Steps[0].Hints = []string{evil, "[x](&#106;avascript:alert(1))"}
		l.Steps[0].Checks[0].Description = evil
		l.Steps[0].Mistakes[0].Explain = evil
		c.Sandbox.(*fakeSandbox).message = evil
	})

	// JSON answers carry no markup: encoding/json writes < > & as \u003c
	// \u003e \u0026, so even a page that inserted them as HTML would show
	// text.
	noRawMarkup := func(what, body string) {
		t.Helper()
		if strings.ContainsAny(body, "<>") {
			t.Errorf("%s carries < or > raw:\n%s", what, body)
		}
	}
	// The HTML the server renders from Markdown has no element or
	// attribute that runs script, and no address that does.
	inert := func(what, html string) {
		t.Helper()
		for _, bad := range []*regexp.Regexp{
			regexp.MustCompile(`(?i)<(script|iframe|object|embed|style|svg|math|form|base|meta|link)\b`),
			regexp.MustCompile(`(?i)<[^>]*\son[a-z]+\s*=`),
			regexp.MustCompile(`(?i)\s(href|src)\s*=\s*"\s*(javascript|vbscript|data|file):`),
			regexp.MustCompile(`(?i)<img\b[^>]*src="[^"]`),
		} {
			if m := bad.FindString(html); m != "" {
				t.Errorf("%s holds %q:\n%s", what, m, html)
			}
		}
	}
	_, body := ts.request(t, http.MethodGet, "/api/lab", "")
	noRawMarkup("GET /api/lab", body)
	var doc labDoc
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Title != evil || doc.Steps[0].Title != evil {
		t.Errorf("the titles are text, JSON-encoded and given back whole: %q", doc.Title)
	}
	for name, html := range map[string]string{"goal": doc.Goal, "lab why": doc.Why, "instructions": doc.Steps[0].Instructions, "why": doc.Steps[0].Why, "hint 1": doc.Steps[0].Hints[0], "hint 2": doc.Steps[0].Hints[1]} {
		inert(name, html)
	}

	ts.sandbox.pass("has-b") // so that the failure of has-a looks like the known mistake
	_, body = ts.request(t, http.MethodPost, "/api/check", `{"step":"one"}`)
	noRawMarkup("POST /api/check", body)
	var ch checkAnswer
	if err := json.Unmarshal([]byte(body), &ch); err != nil {
		t.Fatal(err)
	}
	if len(ch.Checks) == 0 || ch.Checks[0].Message != evil || ch.Checks[0].Description != evil || ch.Checks[0].Mistake == nil || ch.Checks[0].Mistake.Explain != evil {
		t.Errorf("the check's texts are not given back whole as JSON strings: %+v", ch.Checks)
	}
	_, body = ts.request(t, http.MethodPost, "/api/check", `{"step":"<script>alert(1)</script>"}`)
	noRawMarkup("POST /api/check of an unknown step", body)

	resp, body := ts.request(t, http.MethodGet, "/api/previews", "")
	noRawMarkup("GET /api/previews", body)
	var ps []previewDoc
	if err := json.Unmarshal([]byte(body), &ps); err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Service != "web" || !previewTarget().MatchString(p.URL) {
			t.Errorf("a Service no preview can reach is listed: %+v", p)
		}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET /api/previews: Content-Type %q", ct)
	}
}

func TestAttackWebSocket(t *testing.T) {
	ts := startServer(t)
	dial := func(query string) (*websocket.Conn, *http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return websocket.Dial(ctx, "ws://"+ts.host+"/ws/terminal?"+query, &websocket.DialOptions{
			HTTPHeader: http.Header{"Cookie": {cookieName + "=" + ts.Token()}, "Origin": {ts.base}},
		})
	}
	for _, id := range []string{"", "A", "abcdefghijklmnopq", "..%2fx", "a%20b", "a-b", "%C3%A9"} {
		c, resp, err := dial("id=" + id)
		if err == nil {
			c.CloseNow()
			t.Errorf("id %q was accepted", id)
		} else if resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("id %q: %v, want 400", id, err)
		}
	}
	if n := len(ts.sandbox.opened()); n != 0 {
		t.Fatalf("bad ids opened %d shells", n)
	}

	// An absurd first size is not passed on to the PTY.
	c, _, err := dial("id=size&rows=65535&cols=0")
	if err != nil {
		t.Fatal(err)
	}
	watch(c).waitFor(t, "Step one")
	if got := ts.sandbox.opened()[0].lastSize(); got != [2]uint{24, 80} {
		t.Errorf("?rows=65535&cols=0 opened a PTY of %v, want the default 24×80", got)
	}
	c.CloseNow()

	// Two sockets on one id: the second takes over; the first is closed
	// and its keystrokes go nowhere.
	first := dialTerminal(t, ts, "two")
	watch(first).waitFor(t, "Step one")
	second := dialTerminal(t, ts, "two")
	scr := watch(second)
	scr.waitFor(t, "Step one")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if err := first.Write(ctx, websocket.MessageBinary, []byte("from-the-first")); err == nil {
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if n := len(ts.sandbox.opened()); n != 2 {
		t.Errorf("two sockets on one id opened %d shells in all, want 2 (one for id size, one for id two)", n)
	}
	sh := ts.sandbox.opened()[1]
	sh.mu.Lock()
	typed := sh.typed.String()
	sh.mu.Unlock()
	if strings.Contains(typed, "from-the-first") {
		t.Error("the replaced socket still types into the shell")
	}

	// 1000 resizes, then sizes of 0 and 65535: the shell ends at the last
	// sane size, and the terminal still answers.
	for i := 1; i <= 1000; i++ {
		send(t, second, websocket.MessageText, fmt.Sprintf(`{"type":"resize","rows":%d,"cols":%d}`, 10+i%50, 40+i%100))
	}
	send(t, second, websocket.MessageText, `{"type":"resize","rows":0,"cols":0}`)
	send(t, second, websocket.MessageText, `{"type":"resize","rows":65535,"cols":65535}`)
	send(t, second, websocket.MessageText, `{"type":"resize","rows":-1,"cols":1e9}`)
	send(t, second, websocket.MessageBinary, "still-here")
	scr.waitFor(t, "still-here")
	waitUntil(t, "the PTY at the last sane size 10×40", func() bool { return sh.lastSize() == [2]uint{10, 40} })
	sh.mu.Lock()
	for _, s := range sh.sizes {
		if s[0] == 0 || s[1] == 0 || s[0] > 999 || s[1] > 999 {
			t.Errorf("the PTY was resized to %v", s)
		}
	}
	sh.mu.Unlock()

	// A 10 MB frame closes that socket; the shell stays and takes the next.
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	_ = second.Write(ctx, websocket.MessageBinary, bytes.Repeat([]byte("y"), 10<<20))
	cancel()
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	for {
		if _, _, err := second.Read(ctx); err != nil {
			if websocket.CloseStatus(err) != websocket.StatusMessageTooBig && ctx.Err() != nil {
				t.Errorf("a 10 MB frame: %v, want the socket closed as too big", err)
			}
			break
		}
	}
	cancel()
	sh.mu.Lock()
	if strings.Contains(sh.typed.String(), "yyyy") {
		t.Error("the 10 MB frame reached the shell")
	}
	sh.mu.Unlock()
	third := dialTerminal(t, ts, "two")
	scr = watch(third)
	send(t, third, websocket.MessageBinary, "after-big")
	scr.waitFor(t, "after-big")
	if n := len(ts.sandbox.opened()); n != 2 {
		t.Errorf("after the big frame %d shells in all, want the same 2", n)
	}
	third.CloseNow()
}

func TestAttackManyTerminals(t *testing.T) {
	ts := startServer(t)
	for i := 0; i < maxTerminals; i++ {
		c := dialTerminal(t, ts, fmt.Sprintf("m%d", i))
		c.CloseNow() // the shell stays for a re-attach
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws://"+ts.host+"/ws/terminal?id=onemore", &websocket.DialOptions{
		HTTPHeader: http.Header{"Cookie": {cookieName + "=" + ts.Token()}, "Origin": {ts.base}},
	})
	if err == nil {
		c.CloseNow()
		t.Fatalf("terminal %d was opened", maxTerminals+1)
	}
	var body []byte
	if resp != nil && resp.Body != nil {
		body, _ = io.ReadAll(resp.Body)
	}
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "too many terminals") {
		t.Errorf("terminal %d: %v %q, want 429 saying too many terminals", maxTerminals+1, err, body)
	}
	if n := len(ts.sandbox.opened()); n != maxTerminals {
		t.Errorf("%d shells opened, want %d", n, maxTerminals)
	}
	// An existing one still re-attaches.
	c = dialTerminal(t, ts, "m0")
	c.CloseNow()
}

// TestAttackCodeBlockShownAsTyped: the lab's author writes code blocks
// that would show one text and have another typed (entities, raw HTML,
// blocks in lists and quotes, an info string with entities): every <pre>
// the server renders is one of the blocks the lab loader checks
// (lab.CodeBlocks), holds no markup, and its text as the browser reads it
// is the block's text, the language in its class the block's. So the
// loader's refusal of what the page does not show covers exactly what
// the Run and Copy buttons take.
func TestAttackCodeBlockShownAsTyped(t *testing.T) {
	preRE := regexp.MustCompile(`(?s)<pre><code(?: class="language-([^"]*)")?>(.*?)</code></pre>`)
	r := newMarkdownRenderer(true)
	for _, md := range []string{
		"```sh\necho &lt;b&gt; &#x202E; &amp;\n```",
		"<pre><code>raw html</code></pre>\n\n```sh\nls\n```",
		"text <span style=\"display:none\">rm -rf ~</span>\n\n```sh\necho <span hidden>x</span>shown\n```",
		"- item\n\n  ```sh\n  echo in-a-list\n  ```\n> quoted\n>\n>     indented in a quote\n",
		"```b&#97;sh  {.x}\n\tls  \n\n```\n\n```YAML\nk: v\n```",
		"\n\n    leading indented block\n\n``` sh\nls\n```",
	} {
		blocks := lab.CodeBlocks(md)
		out := r.Render(md)
		if len(blocks) == 0 {
			t.Errorf("the loader finds no block in %q: this case shows nothing", md)
		}
		if n := strings.Count(out, "<pre"); n != len(blocks) {
			t.Errorf("%q renders %d <pre> but the loader checks %d blocks:\n%s", md, n, len(blocks), out)
			continue
		}
		for i, m := range preRE.FindAllStringSubmatch(out, -1) {
			if strings.Contains(m[2], "<") {
				t.Errorf("%q: block %d holds markup: %s", md, i+1, m[2])
			}
			if got := html.UnescapeString(m[2]); got != blocks[i].Text {
				t.Errorf("%q: block %d shows %q, the loader checks %q", md, i+1, got, blocks[i].Text)
			}
			if lang := html.UnescapeString(m[1]); lang != blocks[i].Lang {
				t.Errorf("%q: block %d is in %q on the page, in %q for the loader", md, i+1, lang, blocks[i].Lang)
			}
		}
	}
}
