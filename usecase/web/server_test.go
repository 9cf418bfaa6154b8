package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/coder/websocket"

	"github.com/labctl/labctl/grading/progress"
)

func TestRefusesRequestsWithoutTheToken(t *testing.T) {
	ts := startServer(t)
	wrong := strings.Repeat("0", len(ts.Token()))
	for _, c := range []struct {
		name   string
		adjust []func(*http.Request)
	}{
		{"no token", []func(*http.Request){noCookie}},
		{"a wrong cookie", []func(*http.Request){header("Cookie", cookieName+"="+wrong)}},
		{"a token one character short", []func(*http.Request){header("Cookie", cookieName+"="+ts.Token()[1:])}},
	} {
		resp, body := ts.request(t, http.MethodGet, "/api/state", "", c.adjust...)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "open the URL that labctl ui printed") {
			t.Errorf("GET /api/state with %s: %d %q, want 403 saying what to open", c.name, resp.StatusCode, body)
		}
	}
	resp, _ := ts.request(t, http.MethodGet, "/api/state?token="+wrong, "", noCookie)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /api/state?token=WRONG: %d, want 403", resp.StatusCode)
	}
	resp, _ = ts.request(t, http.MethodGet, "/?token="+wrong, "", noCookie)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("GET /?token=WRONG: %d, Set-Cookie %q; want 403 and no cookie", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
	// The same request with the token is served: the refusals above are
	// the token's doing.
	if resp, body := ts.request(t, http.MethodGet, "/api/state", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/state with the cookie: %d %s", resp.StatusCode, body)
	}
	if resp, body := ts.request(t, http.MethodGet, "/api/state?token="+ts.Token(), "", noCookie); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /api/state?token=TOKEN: %d %s", resp.StatusCode, body)
	}
}

func TestTheTokenBecomesACookie(t *testing.T) {
	ts := startServer(t)
	if !strings.HasPrefix(ts.URL(), ts.base+"/?token=") || len(ts.Token()) != 64 {
		t.Fatalf("URL %q, token %q: want %s/?token= and 32 bytes in hex", ts.URL(), ts.Token(), ts.base)
	}
	resp, _ := ts.request(t, http.MethodGet, "/?token="+ts.Token(), "", noCookie, header("Origin", ""))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Errorf("GET /?token=TOKEN: %d to %q, want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	var got *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			got = c
		}
	}
	if got == nil || got.Value != ts.Token() || !got.HttpOnly || got.SameSite != http.SameSiteStrictMode || got.Path != "/" {
		t.Errorf("cookie %+v, want %s=TOKEN; HttpOnly; SameSite=Strict; Path=/", got, cookieName)
	}
	resp, body := ts.request(t, http.MethodGet, "/", "", header("Origin", ""))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<title>labctl</title>") {
		t.Errorf("GET / with the cookie: %d %q, want the page", resp.StatusCode, body)
	}
	resp, body = ts.request(t, http.MethodGet, "/assets/app.js", "", header("Origin", ""))
	if resp.StatusCode != http.StatusOK || body != "console.log('page')" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("GET /assets/app.js: %d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	for _, p := range []string{"/assets/missing.js", "/assets/..%2fserver.go", "/assets/"} {
		if resp, _ := ts.request(t, http.MethodGet, p, ""); resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, resp.StatusCode)
		}
	}
}

func TestRefusesAForeignHost(t *testing.T) {
	ts := startServer(t)
	port := ts.host[strings.LastIndex(ts.host, ":")+1:]
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1:1", "localhost.evil.example:" + port} {
		resp, body := ts.request(t, http.MethodGet, "/api/state", "", func(r *http.Request) { r.Host = host }, header("Origin", "http://"+host))
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("Host %s: %d %q, want 403", host, resp.StatusCode, body)
		}
	}
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port} {
		resp, body := ts.request(t, http.MethodGet, "/api/state", "", func(r *http.Request) { r.Host = host })
		if resp.StatusCode != http.StatusOK {
			t.Errorf("Host %s: %d %q, want 200 (a loopback name of the listen address)", host, resp.StatusCode, body)
		}
	}
}

func TestPostNeedsThePagesOrigin(t *testing.T) {
	ts := startServer(t)
	port := ts.host[strings.LastIndex(ts.host, ":")+1:]
	for _, origin := range []string{"", "http://evil.example", "http://evil.example:" + port, "https://" + ts.host, "null", ts.base + "/x"} {
		resp, body := ts.request(t, http.MethodPost, "/api/check", `{"step":"one"}`, header("Origin", origin))
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST /api/check with Origin %q: %d %q, want 403", origin, resp.StatusCode, body)
		}
	}
	if resp, body := ts.request(t, http.MethodPost, "/api/check", `{"step":"one"}`); resp.StatusCode != http.StatusOK {
		t.Errorf("POST /api/check from the page: %d %s", resp.StatusCode, body)
	}
}

func TestWebSocketRefusals(t *testing.T) {
	ts := startServer(t)
	port := ts.host[strings.LastIndex(ts.host, ":")+1:]
	cookie := cookieName + "=" + ts.Token()
	for _, c := range []struct {
		name   string
		path   string
		header http.Header
	}{
		{"no token", "/ws/terminal?id=a", http.Header{"Origin": {ts.base}}},
		{"a wrong token", "/ws/terminal?id=a&token=" + strings.Repeat("f", 64), http.Header{"Origin": {ts.base}}},
		{"a foreign Origin", "/ws/terminal?id=a", http.Header{"Cookie": {cookie}, "Origin": {"http://evil.example"}}},
		{"a foreign Origin on the same port", "/ws/terminal?id=a", http.Header{"Cookie": {cookie}, "Origin": {"http://evil.example:" + port}}},
		{"no Origin", "/ws/terminal?id=a", http.Header{"Cookie": {cookie}}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c2, resp, err := websocket.Dial(ctx, "ws://"+ts.host+c.path, &websocket.DialOptions{HTTPHeader: c.header})
		cancel()
		if err == nil {
			c2.CloseNow()
			t.Errorf("a WebSocket with %s was accepted", c.name)
			continue
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("a WebSocket with %s: %v, want 403", c.name, err)
		}
	}
	if n := len(ts.sandbox.opened()); n != 0 {
		t.Errorf("refused WebSockets opened %d shells", n)
	}
	// The page's own socket is accepted: the refusals are the checks' doing.
	c := dialTerminal(t, ts, "a")
	c.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c2, _, err := websocket.Dial(ctx, "ws://"+ts.host+"/ws/terminal?id=b&token="+ts.Token(), &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {ts.base}}})
	if err != nil {
		t.Fatalf("a WebSocket with the token in its URL: %v", err)
	}
	c2.CloseNow()
}

func TestEveryAnswerCarriesThePolicy(t *testing.T) {
	ts := startServer(t)
	for _, c := range []struct {
		method, path string
		adjust       []func(*http.Request)
	}{
		{"GET", "/", nil},
		{"GET", "/?token=" + ts.Token(), []func(*http.Request){noCookie}},
		{"GET", "/assets/app.css", nil},
		{"GET", "/assets/nothing", nil},
		{"GET", "/api/lab", nil},
		{"GET", "/api/state", []func(*http.Request){noCookie}},
		{"GET", "/api/report", nil},
		{"POST", "/api/check", []func(*http.Request){header("Origin", "http://evil.example")}},
		{"GET", "/api/state", []func(*http.Request){func(r *http.Request) { r.Host = "evil.example" }}},
		{"GET", "/nothing", nil},
		{"GET", "/ws/terminal?id=BAD!", nil},
	} {
		resp, _ := ts.request(t, c.method, c.path, "", c.adjust...)
		h := resp.Header
		if got := h.Get("Content-Security-Policy"); got != pagePolicy {
			t.Errorf("%s %s (%d): Content-Security-Policy %q, want %q", c.method, c.path, resp.StatusCode, got, pagePolicy)
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s %s: X-Content-Type-Options %q, Referrer-Policy %q", c.method, c.path, h.Get("X-Content-Type-Options"), h.Get("Referrer-Policy"))
		}
		if strings.HasPrefix(c.path, "/api/") && h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: Cache-Control %q, want no-store", c.method, c.path, h.Get("Cache-Control"))
		}
	}
}

func TestNewNeedsWhatItServes(t *testing.T) {
	if _, err := New(Config{Lab: testLab(), Sandbox: &fakeSandbox{}, Assets: placeholderAssets}); err == nil {
		t.Error("New without a progress store succeeded")
	}
	noPage := fstest.MapFS{"app.js": placeholderAssets["app.js"]}
	if _, err := New(Config{Lab: testLab(), Store: progress.NewStore(t.TempDir()), Sandbox: &fakeSandbox{}, Assets: noPage}); err == nil || !strings.Contains(err.Error(), "index.html") {
		t.Errorf("New with assets lacking index.html: %v", err)
	}
}
