package app

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/provision/kind"
)

// serving is a labctl ui (or open) running on a fake environment.
type serving struct {
	url         string
	out, errOut *e2etest.Screen
	stop        func() int // interrupts it and returns its exit code
	exitedEarly bool
	code        int
}

// serve runs labctl with args until its first line of output, a URL, or
// its end.
func serve(t *testing.T, env environment, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{out: &e2etest.Screen{}, errOut: &e2etest.Screen{}}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, Streams{In: strings.NewReader(""), Out: s.out, Err: s.errOut}, args, env)
	}()
	stopped := false
	s.stop = func() int {
		if stopped {
			return s.code
		}
		stopped = true
		cancel()
		select {
		case s.code = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("labctl did not end within 20 s of an interrupt")
		}
		return s.code
	}
	t.Cleanup(func() { s.stop() })
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if line, _, ok := strings.Cut(s.out.String(), "\n"); ok {
			s.url = line
			return s
		}
		select {
		case s.code = <-done:
			stopped, s.exitedEarly = true, true
			return s
		default:
		}
	}
	t.Fatalf("labctl %s printed no URL within 20 s; stderr: %s", strings.Join(args, " "), s.errOut.String())
	return nil
}

// serveAt runs labctl with args and holds it to printing and opening a
// URL on loopback with path and the token.
func serveAt(t *testing.T, env environment, opened func() []string, path string, args ...string) *serving {
	t.Helper()
	s := serve(t, env, args...)
	if s.exitedEarly {
		t.Fatalf("labctl %s exited %d: %s", strings.Join(args, " "), s.code, s.errOut.String())
	}
	if !strings.HasPrefix(s.url, "http://127.0.0.1:") || !strings.Contains(s.url, path+"?token=") {
		t.Fatalf("first line %q, want http://127.0.0.1:PORT%s?token=TOKEN", s.url, path)
	}
	if o := opened(); len(o) != 1 || !leadsTo(o[0], s.url) {
		t.Errorf("opened %v in the browser, want a file that leads to the URL", o)
	}
	return s
}

// browse gets url as a browser does, cookies kept in jar.
func browse(t *testing.T, jar http.CookieJar, url string) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Jar: jar, Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// noBrowser makes the test see what labctl would open: for each address
// the browser is given, the address and the text of the file it names,
// after a short wait for the first.
func noBrowser(t *testing.T) func() []string {
	t.Helper()
	var opened []string
	var mu sync.Mutex
	old := startBrowser
	startBrowser = func(url string) error {
		mu.Lock()
		defer mu.Unlock()
		text := "(no file)"
		if path, ok := strings.CutPrefix(url, "file://"); ok {
			if b, err := os.ReadFile(path); err == nil {
				text = string(b)
			}
		}
		opened = append(opened, url+"\n"+text)
		return nil
	}
	t.Cleanup(func() { startBrowser = old })
	return func() []string {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			mu.Lock()
			n := len(opened)
			mu.Unlock()
			if n > 0 {
				break
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), opened...)
	}
}

// leadsTo reports whether opened, as noBrowser records it, is a file://
// URL whose file sends the browser to url, and does not hold url itself.
func leadsTo(opened, url string) bool {
	addr, text, _ := strings.Cut(opened, "\n")
	return strings.HasPrefix(addr, "file:///") && !strings.Contains(addr, url) &&
		strings.Contains(text, `<meta http-equiv="refresh" content="0;url=`+url+`">`)
}

func TestUIServesThePage(t *testing.T) {
	isolate(t)
	opened := noBrowser(t)
	env := &fakeEnv{lab: solved(t, twoSteps, "hello")}
	s := serveAt(t, env, opened, "/", "--lab", twoSteps, "ui")
	if strings.Contains(s.errOut.String(), "warning") {
		t.Errorf("a loopback server warns: %s", s.errOut.String())
	}
	// The printed URL opens the page and its API.
	jar, _ := cookiejar.New(nil)
	if code, page := browse(t, jar, s.url); code != http.StatusOK || !strings.Contains(page, "/assets/app.js") {
		t.Errorf("the printed URL gives %d:\n%.300s", code, page)
	}
	if _, state := browse(t, jar, s.url[:strings.Index(s.url, "/?")]+"/api/state"); !strings.Contains(state, `"current":"hello"`) {
		t.Errorf("/api/state: %s", state)
	}
	if code := s.stop(); code != 0 {
		t.Errorf("labctl ui exited %d after Ctrl-C, want 0; stderr: %s", code, s.errOut.String())
	}
	if !env.lab.closed {
		t.Error("labctl ui left the lab's connection open")
	}
}

func TestUIListensBeyondLoopbackOnlyWithAddr(t *testing.T) {
	isolate(t)
	noBrowser(t)
	for _, c := range []struct {
		name string
		set  func(t *testing.T)
	}{
		{"LABCTL_ADDR", func(t *testing.T) { t.Setenv("LABCTL_ADDR", "0.0.0.0:0") }},
		{"the config file", func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(file, []byte("addr: 0.0.0.0:0\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Setenv("LABCTL_CONFIG", file)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.set(t)
			env := &fakeEnv{lab: solved(t, twoSteps, "hello")}
			code, out, errOut := runFake(t, env, "--lab", twoSteps, "ui", "--no-browser")
			want{code: 2, noOut: true, noCalls: true, errOut: []string{"0.0.0.0:0", "not loopback", "only the --addr flag"}}.check(t, env, []string{"ui"}, code, out, errOut)
		})
	}
	t.Run("loopback from the environment", func(t *testing.T) {
		t.Setenv("LABCTL_ADDR", "127.0.0.1:0")
		s := serve(t, &fakeEnv{lab: solved(t, twoSteps, "hello")}, "--lab", twoSteps, "ui", "--no-browser")
		if s.exitedEarly || !strings.HasPrefix(s.url, "http://127.0.0.1:") {
			t.Errorf("LABCTL_ADDR=127.0.0.1:0: exit %d, URL %q, stderr %s", s.code, s.url, s.errOut.String())
		}
	})
	t.Run("the --addr flag", func(t *testing.T) {
		s := serve(t, &fakeEnv{lab: solved(t, twoSteps, "hello")}, "--lab", twoSteps, "ui", "--no-browser", "--addr", "0.0.0.0:0")
		if s.exitedEarly {
			t.Fatalf("--addr 0.0.0.0:0 exited %d: %s", s.code, s.errOut.String())
		}
		if !strings.Contains(s.errOut.String(), "warning: labctl ui listens on 0.0.0.0:0") {
			t.Errorf("no warning for a server beyond loopback; stderr: %s", s.errOut.String())
		}
		if code := s.stop(); code != 0 {
			t.Errorf("exit %d after Ctrl-C", code)
		}
	})
}

func TestUIExitCodes(t *testing.T) {
	isolate(t)
	noBrowser(t)
	for _, tc := range []struct {
		args []string
		env  *fakeEnv
		want want
	}{
		{[]string{"ui"}, &fakeEnv{}, want{code: 2, noOut: true, errOut: []string{"labctl up"}}},
		{[]string{"ui", "--addr", "nonsense"}, &fakeEnv{}, want{code: 2, noOut: true, noCalls: true, errOut: []string{`--addr "nonsense" is not HOST:PORT`}}},
		{[]string{"ui", "extra"}, &fakeEnv{}, usage(`unknown command "extra" for "labctl ui"`, "labctl ui")},
		{[]string{"open"}, &fakeEnv{}, usage("accepts 1 arg(s), received 0", "labctl open")},
		{[]string{"open", "web"}, &fakeEnv{}, usage(`"web" is not svc/NAME`, "labctl open")},
		{[]string{"open", "svc/"}, &fakeEnv{}, usage(`"svc/" is not svc/NAME`, "labctl open")},
		{[]string{"open", "svc/web"}, &fakeEnv{}, want{code: 2, noOut: true, errOut: []string{"labctl up"}}},
	} {
		args := append([]string{"--lab", twoSteps}, tc.args...)
		code, out, errOut := runFake(t, tc.env, args...)
		tc.want.check(t, tc.env, args, code, out, errOut)
	}
	root, _ := newRoot(Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, &fakeEnv{})
	for _, name := range []string{"ui", "open"} {
		if c, _, err := root.Find([]string{name}); err != nil || c.Name() != name || c.Example == "" {
			t.Errorf("labctl %s is missing or has no Example (%v)", name, err)
		}
	}
}

// kubeLab is a fake live lab whose learner reaches a fake API server.
type kubeLab struct {
	*fakeLab
	host string
}

func (k kubeLab) LearnerConfig(context.Context) (*rest.Config, error) {
	return &rest.Config{Host: k.host, BearerToken: "learner"}, nil
}

// kubeEnv connects to a kubeLab.
type kubeEnv struct {
	*fakeEnv
	live kubeLab
}

func (k *kubeEnv) Connect(ctx context.Context, up kind.Options) (liveLab, error) {
	if _, err := k.fakeEnv.Connect(ctx, up); err != nil {
		return nil, err
	}
	return k.live, nil
}

func TestOpenPrintsThePreview(t *testing.T) {
	isolate(t)
	opened := noBrowser(t)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/namespaces/shop/services/web":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"kind":"Service","apiVersion":"v1","metadata":{"name":"web","namespace":"shop"},"spec":{"ports":[{"port":8080,"protocol":"TCP"}]}}`)
		case "/api/v1/namespaces/shop/services/web:8080/proxy/":
			io.WriteString(w, "the learner's app")
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	dir := t.TempDir()
	raw, err := os.ReadFile(twoSteps)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "lab.yaml")
	withNS := strings.Replace(string(raw), "steps:\n", "cluster:\n  namespaces: [shop]\nsteps:\n", 1)
	if err := os.WriteFile(file, []byte(withNS), 0o600); err != nil {
		t.Fatal(err)
	}
	fl := solved(t, file, "hello")
	env := &kubeEnv{fakeEnv: &fakeEnv{lab: fl}, live: kubeLab{fl, api.URL}}

	// The preview's own address, with the previews' token in its path and
	// not the page's: it works without the page's cookie.
	s := serve(t, env, "--lab", file, "open", "svc/web")
	if s.exitedEarly {
		t.Fatalf("labctl open exited %d: %s", s.code, s.errOut.String())
	}
	if u, err := url.Parse(s.url); err != nil || !strings.HasPrefix(s.url, "http://127.0.0.1:") || !regexp.MustCompile(`^/preview/[0-9a-f]{64}/shop/web:8080/$`).MatchString(u.Path) || u.RawQuery != "" {
		t.Fatalf("first line %q, want http://127.0.0.1:PORT/preview/PTOKEN/shop/web:8080/", s.url)
	}
	if o := opened(); len(o) != 1 || !leadsTo(o[0], s.url) {
		t.Errorf("opened %v in the browser, want a file that leads to the URL", o)
	}
	if code, body := browse(t, nil, s.url); code != http.StatusOK || body != "the learner's app" {
		t.Errorf("the printed URL gives %d %q", code, body)
	}
	s.stop()

	code, out, errOut := runFake(t, env, "--lab", file, "open", "svc/web", "-n", "kube-system", "--no-browser")
	want{code: 2, noOut: true, errOut: []string{"kube-system is not a namespace of the lab"}}.check(t, nil, nil, code, out, errOut)
}

// TestUIKeepsTheTokenOutOfTheBrowsersArguments runs labctl ui with a
// browser ($BROWSER) that records its arguments, the file it was given and
// that file's mode: every local user can read a process's arguments
// (/proc/PID/cmdline), so they hold no token, only the file:// URL of a
// file of mode 0600, in a directory of mode 0700, that leads to the page.
// The file is gone when labctl ui stops.
func TestUIKeepsTheTokenOutOfTheBrowsersArguments(t *testing.T) {
	isolate(t)
	runtime := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	seen := t.TempDir()
	browser := filepath.Join(t.TempDir(), "browser")
	script := `#!/bin/sh
d=` + seen + `
printf '%s\n' "$0" "$@" > "$d/argv.tmp"
f="${1#file://}"
stat -c %a "$f" > "$d/mode"
stat -c %a "$(dirname "$f")" > "$d/dirmode"
cp "$f" "$d/file"
mv "$d/argv.tmp" "$d/argv"
`
	if err := os.WriteFile(browser, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", browser)
	s := serve(t, &fakeEnv{lab: solved(t, twoSteps, "hello")}, "--lab", twoSteps, "ui")
	if s.exitedEarly {
		t.Fatalf("labctl ui exited %d: %s", s.code, s.errOut.String())
	}
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	token := u.Query().Get("token")
	if len(token) != 64 {
		t.Fatalf("the printed URL %q has no token", s.url)
	}
	var argv []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if argv, err = os.ReadFile(filepath.Join(seen, "argv")); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the browser never ran: %v; stderr: %s", err, s.errOut.String())
	}
	args := strings.Split(strings.TrimSpace(string(argv)), "\n")
	if strings.Contains(string(argv), token) || len(args) != 2 || !strings.HasPrefix(args[1], "file://"+runtime+"/labctl/") {
		t.Fatalf("the browser's arguments are %q: want one file:// URL under %s/labctl, without the token", args, runtime)
	}
	for name, want := range map[string]string{"mode": "600", "dirmode": "700"} {
		if b, err := os.ReadFile(filepath.Join(seen, name)); err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("the browser's file's %s is %q (%v), want %s", name, b, err, want)
		}
	}
	file, err := os.ReadFile(filepath.Join(seen, "file"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`<meta http-equiv="refresh" content="0;url=([^"]+)">`).FindSubmatch(file)
	if m == nil || string(m[1]) != s.url {
		t.Fatalf("the browser's file does not lead to %s:\n%s", s.url, file)
	}
	jar, _ := cookiejar.New(nil)
	if code, page := browse(t, jar, string(m[1])); code != http.StatusOK || !strings.Contains(page, "/assets/app.js") {
		t.Errorf("following the browser's file gives %d:\n%.300s", code, page)
	}
	path := strings.TrimPrefix(args[1], "file://")
	if !strings.Contains(s.errOut.String(), path) || strings.Contains(s.errOut.String(), token) {
		t.Errorf("stderr does not name the file, or holds the token: %s", s.errOut.String())
	}
	if code := s.stop(); code != 0 {
		t.Errorf("labctl ui exited %d after Ctrl-C", code)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("the browser's file's directory is still there after labctl ui stopped (%v)", err)
	}
}

// TestWatchNeedsALabFile: --watch reloads a lab file, so without one (the
// built-in lab, an invite's lab) shell and ui exit 2 before anything
// starts, saying how to name the file.
func TestWatchNeedsALabFile(t *testing.T) {
	isolate(t)
	noBrowser(t)
	t.Chdir(t.TempDir())
	for _, args := range [][]string{
		{"ui", "--watch"},
		{"shell", "--watch"},
		{"shell", "--watch", "--invite", "alice.kubeconfig"},
		{"ui", "--watch", "--invite", "alice.kubeconfig"},
	} {
		env := &fakeEnv{}
		code, out, errOut := runFake(t, env, args...)
		want{code: 2, noOut: true, noCalls: true, errOut: []string{"--watch reloads a lab you edit", "--lab ./my-lab"}}.check(t, env, args, code, out, errOut)
	}
}

// markingLab is a live lab that marks steps, as an invite's does.
type markingLab struct {
	liveLab
	marked []string
}

func (m *markingLab) MarkStep(_ context.Context, step string) error {
	m.marked = append(m.marked, step)
	return nil
}

// The page's progress marks a step's start through its sandbox where the
// live lab marks them (an invite), as `labctl shell` does, and nowhere
// else.
func TestUISandboxMarksStepsWhereTheLiveLabDoes(t *testing.T) {
	m := &markingLab{}
	var marker checks.StepMarker = uiSandbox{liveLab: m}
	if err := marker.MarkStep(context.Background(), "two"); err != nil || !slices.Equal(m.marked, []string{"two"}) {
		t.Errorf("marked %q, %v", m.marked, err)
	}
	if err := (uiSandbox{liveLab: struct{ liveLab }{}}).MarkStep(context.Background(), "two"); err != nil {
		t.Errorf("a live lab that marks nothing: %v", err)
	}
}
