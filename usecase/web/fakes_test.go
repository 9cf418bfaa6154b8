package web

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// testLab has two steps; step one has a known mistake.
func testLab() *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "web-test", Title: "Web test", Language: "en", Goal: "Learn **this**.", Why: "It *matters*."},
		Cluster:  lab.Cluster{Namespaces: []string{"shop"}},
		Steps: []lab.Step{
			{
				ID: "one", Title: "Step one", Instructions: "Make `a`.", Why: "Because.", Hints: []string{"Try *a*.", "Really."},
				Solution: "Run `touch a`.",
				Checks:   []lab.Check{{Name: "has-a", Description: "a exists"}, {Name: "has-b", Description: "b exists"}},
				Mistakes: []lab.Mistake{{Name: "only-b", Fails: []string{"has-a"}, Explain: "You made b, not a."}},
			},
			{ID: "two", Title: "Step two", Instructions: "Make `c`.", Checks: []lab.Check{{Name: "has-c"}}},
		},
	}
}

// fakeSandbox is the live lab without Docker: checks pass when the test
// says so, and shells echo what is typed.
type fakeSandbox struct {
	mu      sync.Mutex
	passing map[string]bool // check name -> passes
	shells  []*fakeShell
	scripts []string
	message string     // when set, every failing check's message
	code    int        // every script's exit status
	langs   []msg.Lang // the language each round asked for
}

func (f *fakeSandbox) RunChecks(_ context.Context, round checks.Round) ([]checks.Result, error) {
	cs := round.Checks
	f.mu.Lock()
	defer f.mu.Unlock()
	f.langs = append(f.langs, round.Lang)
	var rs []checks.Result
	for _, c := range cs {
		r := checks.Result{Name: c.Name, Description: c.Description, Status: checks.Fail, Message: "expected " + c.Name + ", found <b>nothing</b>", Points: 1}
		if f.message != "" {
			r.Message = f.message
		}
		if f.passing[c.Name] {
			r.Status, r.Message = checks.Pass, ""
		}
		rs = append(rs, r)
	}
	return rs, nil
}

func (f *fakeSandbox) RunScript(_ context.Context, script string, _, _ io.Writer) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scripts = append(f.scripts, script)
	return f.code, nil
}

func (f *fakeSandbox) RunAdminScript(context.Context, string, io.Writer) (int, error) { return 0, nil }

func (f *fakeSandbox) OpenShell(_ context.Context, term string, lang msg.Lang, rows, cols uint) (Shell, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sh := newFakeShell(term, rows, cols)
	sh.lang = lang
	f.shells = append(f.shells, sh)
	return sh, nil
}

func (f *fakeSandbox) pass(names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.passing == nil {
		f.passing = map[string]bool{}
	}
	for _, n := range names {
		f.passing[n] = true
	}
}

func (f *fakeSandbox) opened() []*fakeShell {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*fakeShell(nil), f.shells...)
}

// fakeShell echoes what is typed; typing "exit" ends it with code 3.
type fakeShell struct {
	term string
	lang msg.Lang
	pr   *io.PipeReader
	pw   *io.PipeWriter

	mu    sync.Mutex
	sizes [][2]uint
	typed bytes.Buffer
}

func newFakeShell(term string, rows, cols uint) *fakeShell {
	pr, pw := io.Pipe()
	return &fakeShell{term: term, pr: pr, pw: pw, sizes: [][2]uint{{rows, cols}}}
}

func (s *fakeShell) Read(p []byte) (int, error) { return s.pr.Read(p) }

func (s *fakeShell) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.typed.Write(p)
	s.mu.Unlock()
	if bytes.Contains(p, []byte("exit")) {
		s.pw.Close()
		return len(p), nil
	}
	return s.pw.Write(p)
}

// say writes text as the shell's output.
func (s *fakeShell) say(text string) { _, _ = io.WriteString(s.pw, text) }

func (s *fakeShell) Resize(_ context.Context, rows, cols uint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sizes = append(s.sizes, [2]uint{rows, cols})
	return nil
}

func (s *fakeShell) lastSize() [2]uint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sizes[len(s.sizes)-1]
}

func (s *fakeShell) Close() error { return s.pw.Close() }

func (s *fakeShell) ExitCode(context.Context) (int, error) { return 3, nil }

// placeholderAssets stand in for the built page.
var placeholderAssets = fstest.MapFS{
	"index.html": {Data: []byte("<!doctype html><title>labctl</title><script src=\"/assets/app.js\"></script>")},
	"app.js":     {Data: []byte("console.log('page')")},
	"app.css":    {Data: []byte("body{}")},
}

// testServer is a started server on loopback and what it was made of.
type testServer struct {
	*Server
	sandbox *fakeSandbox
	store   *progress.Store
	lab     *lab.Lab
	base    string // http://127.0.0.1:PORT
	host    string // 127.0.0.1:PORT
}

func startServer(t *testing.T, adjust ...func(*Config)) *testServer {
	t.Helper()
	sb := &fakeSandbox{}
	l := testLab()
	store := progress.NewStore(t.TempDir())
	cfg := Config{Lab: l, Digest: "sha256:test", Store: store, Sandbox: sb, Assets: placeholderAssets}
	for _, a := range adjust {
		a(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ln); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
	host := ln.Addr().String()
	return &testServer{Server: srv, sandbox: sb, store: store, lab: l, base: "http://" + host, host: host}
}

// request sends a request as the page does (cookie and Origin) unless
// adjust says otherwise, and returns the status and body.
func (ts *testServer) request(t *testing.T, method, path, body string, adjust ...func(*http.Request)) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Cookie", cookieName+"="+ts.Token())
	req.Header.Set("Origin", ts.base)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, a := range adjust {
		a(req)
	}
	client := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// pv puts the previews' token into a preview's path: /preview/X becomes
// /preview/PTOKEN/X.
func (ts *testServer) pv(path string) string {
	return strings.Replace(path, "/preview/", "/preview/"+ts.ptoken+"/", 1)
}

func noCookie(r *http.Request) { r.Header.Del("Cookie") }
func header(k, v string) func(*http.Request) {
	return func(r *http.Request) {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
}

// typedText is everything typed into the shell so far.
func (s *fakeShell) typedText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.typed.String()
}
