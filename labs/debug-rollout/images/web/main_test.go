package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestLoadConfig(t *testing.T) {
	c, err := loadConfig(env(map[string]string{"GREETING": " Hello from web v2 ", "POD_NAME": "web-abc"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.greeting != "Hello from web v2" || c.port != 8080 || c.pod != "web-abc" {
		t.Fatalf("config = %+v", c)
	}
	c, err = loadConfig(env(map[string]string{"GREETING": "hi", "PORT": "9090"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.port != 9090 || c.pod == "" {
		t.Fatalf("config = %+v, want port 9090 and the host name as the pod", c)
	}
}

// A missing greeting is the lab's crash loop: the message must say what is
// missing and where it usually comes from.
func TestLoadConfigRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		want []string
	}{
		{"no greeting", map[string]string{"greeting": "Hello"}, []string{"GREETING is not set", "ConfigMap key named GREETING", "exiting"}},
		{"blank greeting", map[string]string{"GREETING": "  "}, []string{"GREETING is not set"}},
		{"two lines", map[string]string{"GREETING": "a\nb"}, []string{"line break"}},
		{"bad port", map[string]string{"GREETING": "hi", "PORT": "http"}, []string{`PORT is "http"`}},
		{"port out of range", map[string]string{"GREETING": "hi", "PORT": "70000"}, []string{`PORT is "70000"`}},
		{"status not a number", map[string]string{"GREETING": "hi", "STATUS": "broken"}, []string{`STATUS is "broken"`}},
		{"status out of range", map[string]string{"GREETING": "hi", "STATUS": "99"}, []string{`STATUS is "99"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(env(tc.vars))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func get(t *testing.T, h http.Handler, method, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return rec.Code, rec.Body.String()
}

func TestHandler(t *testing.T) {
	h := newHandler(config{greeting: "Hello from web v2", pod: "web-7d9c-x2x9k"}, "i-0123456789abcdef")
	code, body := get(t, h, "GET", "/")
	want := "greeting: Hello from web v2\npod: web-7d9c-x2x9k\ninstance: i-0123456789abcdef\n"
	if code != http.StatusOK || body != want {
		t.Errorf("GET / = %d %q, want 200 %q", code, body, want)
	}
	if code, body := get(t, h, "GET", "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /healthz = %d %q", code, body)
	}
	if code, _ := get(t, h, "HEAD", "/healthz"); code != http.StatusOK {
		t.Errorf("HEAD /healthz = %d", code)
	}
	for _, p := range []string{"/ready", "/health", "/index.html"} {
		code, body := get(t, h, "GET", p)
		if code != http.StatusNotFound || !strings.Contains(body, p) || !strings.Contains(body, "/healthz") {
			t.Errorf("GET %s = %d %q, want 404 naming the path and what is served", p, code, body)
		}
	}
}

// A broken release: / answers its status with the status's name, while
// /healthz still says ok (the Pod is ready and its Service sends it traffic).
func TestHandlerBrokenRelease(t *testing.T) {
	c, err := loadConfig(env(map[string]string{"GREETING": "Hello from web v2", "STATUS": "500"}))
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(c, "i-0123456789abcdef")
	if code, body := get(t, h, "GET", "/"); code != http.StatusInternalServerError || body != "500 Internal Server Error\n" {
		t.Errorf("GET / = %d %q, want 500 and its name", code, body)
	}
	if code, body := get(t, h, "GET", "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("GET /healthz = %d %q", code, body)
	}
	if c, _ := loadConfig(env(map[string]string{"GREETING": "hi"})); c.status != http.StatusOK {
		t.Errorf("default status %d, want 200", c.status)
	}
}

// Every start of the process has its own id, which YAML reads as a string.
func TestNewInstance(t *testing.T) {
	a, b := newInstance(), newInstance()
	if a == b {
		t.Fatalf("two instances share the id %s", a)
	}
	if !regexp.MustCompile(`^i-[0-9a-f]{16}$`).MatchString(a) {
		t.Fatalf("instance %q is not i- and 16 hexadecimal digits", a)
	}
}

// serve answers over a real connection and stops promptly when its
// context ends, as SIGTERM does in main.
func TestServeStopsPromptly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, ln, newHandler(config{greeting: "hi", pod: "p"}, "i-1"))
	}()
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), "greeting: hi\n") {
		t.Fatalf("answer %q", body)
	}
	began := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("serve did not stop within 3 s of its context ending")
	}
	if d := time.Since(began); d > shutdownGrace+500*time.Millisecond {
		t.Fatalf("serve took %s to stop", d)
	}
}

func TestRunWithoutGreetingFailsAtOnce(t *testing.T) {
	var log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := run(ctx, env(map[string]string{"PORT": "0"}), &log)
	if err == nil || !strings.Contains(err.Error(), "GREETING is not set") {
		t.Fatalf("run = %v, want the missing GREETING", err)
	}
	if ctx.Err() != nil {
		t.Fatal("run waited instead of failing at once")
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	var log bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := run(ctx, env(map[string]string{"GREETING": "hi", "PORT": "0", "POD_NAME": "web-1"}), &log); err != nil {
		t.Fatalf("run: %v", err)
	}
	if !strings.Contains(log.String(), "pod web-1 serving on") || !strings.Contains(log.String(), "stopped") {
		t.Fatalf("log %q", log.String())
	}
}
