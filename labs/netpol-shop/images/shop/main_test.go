package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log that the servers' goroutines write while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// startDB serves db on a free port until the test ends.
func startDB(t *testing.T, log *syncBuffer) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveDB(ctx, ln, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveDB: %v", err)
		}
	})
	return ln.Addr().String()
}

// closedAddr is an address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func ask(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("GET %s: Content-Type %q", path, ct)
	}
	return rec.Code, rec.Body.String()
}

func TestDBAnswersOrdersAndLogsWhoAsked(t *testing.T) {
	var log syncBuffer
	addr := startDB(t, &log)
	out, err := dial(context.Background(), addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "connected to "+addr) || !strings.HasSuffix(out, "\n"+Orders+"\n") {
		t.Errorf("dial = %q", out)
	}
	if !strings.Contains(log.String(), "read the orders") {
		t.Errorf("db log %q does not say who read the orders", log.String())
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "DROP TABLE orders\n")
	buf := make([]byte, 100)
	n, _ := conn.Read(buf)
	if !strings.Contains(string(buf[:n]), "unknown query") {
		t.Errorf("db answered %q to another query", buf[:n])
	}
}

// The chain web -> api -> db answers the orders; each broken link shows in
// web's answer and in the log of the tier that saw it.
func TestChain(t *testing.T) {
	var log syncBuffer
	db := startDB(t, &log)
	api := httptest.NewServer(withHealth(newAPI(db, "api-1", &log)))
	defer api.Close()
	code, body := ask(t, newWeb(api.URL+"/", "web-1", &log), "/")
	want := "shop (web pod web-1)\napi pod api-1: " + Orders + "\n"
	if code != http.StatusOK || body != want {
		t.Errorf("web = %d %q, want 200 %q", code, body, want)
	}

	noDB := httptest.NewServer(withHealth(newAPI(closedAddr(t), "api-2", &log)))
	defer noDB.Close()
	code, body = ask(t, newWeb(noDB.URL+"/", "web-1", &log), "/")
	if code != http.StatusBadGateway || !strings.HasPrefix(body, "api answered 502 Bad Gateway: db unreachable: dial tcp") {
		t.Errorf("web with db unreachable = %d %q", code, body)
	}
	if !strings.Contains(log.String(), "api: answered 502: db unreachable") {
		t.Errorf("api's log %q does not say db is unreachable", log.String())
	}

	code, body = ask(t, newWeb("http://"+closedAddr(t)+"/", "web-1", &log), "/")
	if code != http.StatusBadGateway || !strings.HasPrefix(body, "api unreachable: ") {
		t.Errorf("web with api unreachable = %d %q", code, body)
	}
	if !strings.Contains(log.String(), "web: answered 502: api unreachable") {
		t.Errorf("web's log %q does not say api is unreachable", log.String())
	}
	if code, body := ask(t, withHealth(newWeb("http://"+closedAddr(t)+"/", "web-1", &log)), "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz = %d %q, want ok whatever api does", code, body)
	}
}

// A path a policy drops makes the tier answer within seconds, not hang.
func TestAPIGivesUpOnASilentDB(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // accepts nothing and answers nothing
	began := time.Now()
	code, body := ask(t, newAPI(ln.Addr().String(), "api-1", &syncBuffer{}), "/")
	if code != http.StatusBadGateway || !strings.HasPrefix(body, "db answered no orders") {
		t.Errorf("api = %d %q", code, body)
	}
	if d := time.Since(began); d > 3*dialTimeout {
		t.Errorf("api took %s", d)
	}
}

func TestClient(t *testing.T) {
	var log syncBuffer
	db := startDB(t, &log)
	admin := httptest.NewServer(withHealth(page("back office\n")))
	defer admin.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"get", admin.URL + "/"}, 0, "HTTP 200\nback office\n"},
		{[]string{"get", admin.URL + "/healthz"}, 0, "HTTP 200\nok\n"},
		{[]string{"dial", "-timeout", "1s", db}, 0, Orders},
		{[]string{"dial", closedAddr(t)}, 1, ""},
		{[]string{"get", "http://" + closedAddr(t) + "/"}, 1, ""},
		{[]string{"get"}, 2, ""},
		{[]string{"post", admin.URL}, 2, ""},
	} {
		var stdout, stderr bytes.Buffer
		code := run(ctx, tc.args, env(nil), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.out) {
			t.Errorf("%v = %d %q (stderr %q), want %d and %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.out)
		}
		if code != 0 && stderr.Len() == 0 {
			t.Errorf("%v fails without saying why", tc.args)
		}
	}
}

func TestServeRoles(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // every role stops at once
	for _, role := range []string{"web", "api", "db", "admin", "idle"} {
		var stderr syncBuffer
		if code := run(ctx, nil, env(map[string]string{"ROLE": role, "PORT": "0", "POD_NAME": "p-1"}), &bytes.Buffer{}, &stderr); code != 0 {
			t.Errorf("ROLE=%s: exit %d: %s", role, code, stderr.String())
		}
		if !strings.HasPrefix(stderr.String(), role+": pod p-1 ") {
			t.Errorf("ROLE=%s: log %q", role, stderr.String())
		}
	}
	var stderr syncBuffer
	if code := run(ctx, nil, env(map[string]string{"ROLE": "cache"}), &bytes.Buffer{}, &stderr); code != 1 || !strings.Contains(stderr.String(), `ROLE is "cache"`) {
		t.Errorf("ROLE=cache: exit %d, %q", code, stderr.String())
	}
}

// dial shows a peer's first line only when it is text.
func TestDialShowsText(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Write([]byte{0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28, '\n'})
			conn.Close()
		}
	}()
	out, err := dial(context.Background(), ln.Addr().String(), time.Second)
	if err != nil || !strings.HasSuffix(out, "(an answer of 7 bytes that is not text)\n") {
		t.Errorf("dial = %q, %v", out, err)
	}
}
