//go:build e2e

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
)

// uiE2ELab is the name of this test's copy of the built-in lab, so its
// cluster, sandbox and volume stay apart from every other lab's.
const uiE2ELab = "ui-e2e"

// TestE2EUI drives the real `labctl ui` in Debian's headless Chromium on a
// copy of the built-in lab that it brings up (and takes down at the end):
// the page opens from the printed URL, step 1's solution typed into the
// page's terminal passes step 1 in the page and in `labctl status`, Check
// on step 2 shows a failing check's message, and the page is saved as a
// screenshot (into $LABCTL_TEST_ARTIFACTS when set). The same server
// refuses a WebSocket without the token, with a foreign Origin or Host, and
// `labctl ui` binds to loopback unless --addr says otherwise.
//
//	go test -tags e2e ./cmd/labctl/ -run TestE2EUI -timeout 30m -v
func TestE2EUI(t *testing.T) {
	browser := e2etest.Chromium(t)
	bin := e2etest.BuildLabctl(t)
	dir := t.TempDir()
	labFile, l := e2etest.CopyLab(t, dir, uiE2ELab)
	if len(l.Steps) < 2 {
		t.Fatalf("this test expects the built-in lab with two steps or more; lab.yaml has %d", len(l.Steps))
	}
	first, second := l.Steps[0], l.Steps[1]
	r := e2etest.NewLabctl(t, bin, labFile, filepath.Join(dir, "state"), "LANG=C.UTF-8", "LC_ALL=", "LC_MESSAGES=", "NO_COLOR=1")
	upCtx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	r.UpFresh(upCtx)

	srv := startUI(t, bin, labFile, r.Env, "--no-browser", "--watch")
	if srv.Base.Hostname() != "127.0.0.1" {
		t.Errorf("labctl ui printed %s: want a URL on 127.0.0.1", srv.URL)
	}
	t.Run("refusals", func(t *testing.T) { testUIRefusals(t, srv) })
	t.Run("bind", func(t *testing.T) { testUIBind(t, r.With(t), srv) })

	ctx := browser
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1100)); err != nil {
		t.Fatal(err)
	}
	saveShotOnFailure(t, ctx, "ui-failed.png")
	loaded := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatalf("opening %s: %v", srv.URL, err)
	}
	waitPage(t, ctx, "the lab's title", fmt.Sprintf(`document.querySelector("#lab-title")?.textContent.includes(%q)`, l.Metadata.Title), 30*time.Second)
	waitPage(t, ctx, "a shell prompt in the terminal", promptJS, 2*time.Minute)
	t.Logf("from opening the page to a prompt: %v", time.Since(loaded))
	if u, err := chromedp.Run(ctx, chromedp.Location()); err != nil || strings.Contains(u, srv.Token) {
		t.Errorf("after the redirect the address bar still holds the token (or cannot be read: %v): %s", err, u)
	}

	// Type step 1's solve script line by line, as a learner would, without
	// its `set -e` (which would end an interactive shell at the first error).
	typed := time.Now()
	for _, line := range strings.Split(strings.TrimSpace(first.Solve), "\n") {
		if !strings.HasPrefix(line, "set -") {
			typeLine(t, ctx, line)
		}
	}
	typeLine(t, ctx, "cd")
	waitPage(t, ctx, "step 1 marked passed", stepStateJS(first.ID, "passed"), 90*time.Second)
	t.Logf("from typing step 1's commands to step 1 passed in the page: %v", time.Since(typed))
	waitPage(t, ctx, "the step-passed banner", fmt.Sprintf(`document.querySelector("#banner")?.textContent.includes(%q)`, first.Title), 10*time.Second)
	waitPage(t, ctx, "step 2 marked current", stepStateJS(second.ID, "current"), 10*time.Second)

	statusCtx, cancelStatus := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancelStatus()
	_, out, _ := r.Run(statusCtx, "status", "-o", "json")
	var status struct {
		Progress *struct {
			Passed  int    `json:"passed"`
			Current string `json:"current"`
		} `json:"progress"`
	}
	if err := json.Unmarshal([]byte(out), &status); err != nil || status.Progress == nil {
		t.Fatalf("labctl status -o json: %v\n%s", err, out)
	}
	if status.Progress.Passed != 1 || status.Progress.Current != second.ID {
		t.Errorf("labctl status after step 1 in the page: %d passed, current %q; want 1 passed, current %q", status.Progress.Passed, status.Progress.Current, second.ID)
	}

	// Select step 2 and check it: its files do not exist yet, so checks fail
	// and say why.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(stepSelector(second.ID)))); err != nil {
		t.Fatalf("selecting step 2: %v", err)
	}
	waitPage(t, ctx, "step 2's title in the step's body", fmt.Sprintf(`document.querySelector("#step-body")?.textContent.includes(%q)`, second.Title), 10*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("check"))); err != nil {
		t.Fatalf("clicking Check: %v", err)
	}
	waitPage(t, ctx, "a failing check with a message",
		`[...document.querySelectorAll("#check-results li[data-status=fail] .message")].some(m => m.textContent.trim() !== "")`, 90*time.Second)
	results, err := chromedp.Run(ctx, chromedp.Evaluate[[]checkResult](`[...document.querySelectorAll("#check-results li[data-check]")].map(li => ({
		name: li.dataset.check, status: li.dataset.status, message: li.querySelector(".message")?.textContent ?? ""}))`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range second.Checks {
		names = append(names, c.Name)
	}
	var failed *checkResult
	for i, c := range results {
		if !slices.Contains(names, c.Name) {
			t.Errorf("the page shows check %q, which step 2 (%v) does not have", c.Name, names)
		}
		if c.Status == "fail" && failed == nil {
			failed = &results[i]
		}
	}
	if len(results) != len(names) || failed == nil {
		t.Fatalf("Check on step 2 shows %+v; want each of %v, some failing", results, names)
	}
	t.Logf("the page says check %s failed: %s", failed.Name, failed.Message)
	// The page's message is the one `labctl check` prints for that check.
	_, cliOut, cliErr := r.Run(statusCtx, "check", second.ID)
	if msg := strings.TrimSpace(failed.Message); !strings.Contains(cliOut+cliErr, msg) {
		t.Errorf("the page's message for %s, %q, is not what labctl check %s says:\n%s%s", failed.Name, msg, second.ID, cliOut, cliErr)
	}

	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`)); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots of the page: %s (what the window shows), %s (the whole page)",
		saveShot(t, ctx, "ui.png", chromedp.CaptureScreenshot()), saveShot(t, ctx, "ui-full.png", chromedp.FullScreenshot(100)))

	t.Run("preview", func(t *testing.T) { testUIPreview(t, r.With(t), srv, ctx, l.Cluster.Namespaces[0]) })
	t.Run("watch", func(t *testing.T) { testUIWatch(t, ctx, labFile, second.Title) })
}

// testUIWatch edits the lab's file under the running `labctl ui --watch`,
// as an author does: a new title for step 2 shows in the page and the
// terminal says the lab was reloaded; a broken edit and one that changes
// the cluster keep the edited lab on the page, which says what is wrong.
// The file is as it was afterwards.
func testUIWatch(t *testing.T, ctx context.Context, labFile, title string) {
	orig, err := os.ReadFile(labFile)
	if err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(labFile, orig, 0o644)
	write := func(b []byte) {
		t.Helper()
		tmp := labFile + ".swp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, labFile); err != nil {
			t.Fatal(err)
		}
	}
	edited := title + " (edited)"
	quoted, _ := json.Marshal(edited)
	if !strings.Contains(string(orig), "title: "+title+"\n") {
		t.Fatalf("step 2's title %q is not written as a plain scalar in %s", title, labFile)
	}
	// The preview's tab is on show: the terminal's first.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#terminal-tabs [role=tab]`))); err != nil {
		t.Fatalf("selecting the terminal's tab: %v", err)
	}
	saved := time.Now()
	write([]byte(strings.Replace(string(orig), "title: "+title+"\n", "title: "+string(quoted)+"\n", 1)))
	waitPage(t, ctx, "step 2's edited title", fmt.Sprintf(`[...document.querySelectorAll("#steps .step-name")].some(e => e.textContent.endsWith(%q))`, edited), 30*time.Second)
	t.Logf("from saving the edit to the page showing it: %v", time.Since(saved))
	typeLine(t, ctx, "true")
	// The lab is Japanese and the locale C: labctl's words in the terminal are Japanese.
	waitPage(t, ctx, "the terminal saying the lab was reloaded", `(`+terminalTextJS+`).includes("lab.yaml が編集されたので読み込み直しました")`, 30*time.Second)

	write(append(append([]byte(nil), orig...), []byte("\nsteps: [oops\n")...))
	waitPage(t, ctx, "the banner naming the broken edit", `document.querySelector("#banner").textContent.includes("lab.yaml")`, 30*time.Second)
	typeLine(t, ctx, "true")
	waitPage(t, ctx, "the terminal saying the lab stays", `(`+terminalTextJS+`).includes("ラボは前のままです")`, 30*time.Second)
	if still := evalText(ctx, `[...document.querySelectorAll("#steps .step-name")].map(e => e.textContent).join("|")`); !strings.Contains(still, edited) {
		t.Errorf("after a broken edit the page shows the steps %q; want the last good lab's, with %q", still, edited)
	}

	if !strings.Contains(string(orig), "namespaces: [") {
		t.Fatalf("%s writes no `namespaces: [` list", labFile)
	}
	write([]byte(strings.Replace(string(orig), "namespaces: [", "namespaces: [watch-extra, ", 1)))
	waitPage(t, ctx, "the banner asking for labctl up", `document.querySelector("#banner").textContent.includes("labctl up")`, 30*time.Second)
}

// previewService is the Service testUIPreview makes: etcd, whose image is
// in the kind node already (there is no registry here), answering HTTP on
// 2379.
const previewService = "preview-etcd"

// testUIPreview shows a Service of the lab through the page's preview, as
// a learner would make and open it: a Deployment of the node's own etcd
// image made with `labctl exec -- kubectl` in namespace ns, and its
// Service. Its /version JSON comes through the URL /api/previews gives,
// without the page's cookie or token, and in the page's preview tab (a
// sandboxed iframe); a navigation the framed document starts itself, which
// the browser sends without the page's SameSite=Strict cookie, reaches the
// app too.
func testUIPreview(t *testing.T, r *e2etest.Labctl, srv *uiServer, ctx context.Context, ns string) {
	image := nodeEtcdImage(t)
	r.Must(2*time.Minute, "exec", "--", "kubectl", "-n", ns, "create", "deployment", previewService, "--image="+image, "--",
		"etcd", "--data-dir=/tmp/e", "--listen-client-urls=http://0.0.0.0:2379", "--advertise-client-urls=http://127.0.0.1:2379")
	r.Must(2*time.Minute, "exec", "--", "kubectl", "-n", ns, "expose", "deployment", previewService, "--port=2379")
	r.Must(4*time.Minute, "exec", "--", "kubectl", "-n", ns, "rollout", "status", "deployment/"+previewService, "--timeout=3m")

	// (a) The preview's URL from /api/previews, fetched over HTTP.
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string, cookie bool) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.Base.String()+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cookie {
			req.Header.Set("Cookie", "labctl_ui="+srv.Token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var preview string
	waitFor(t, "the Service in /api/previews", func() bool {
		code, body := get("/api/previews", true)
		var ps []struct {
			Namespace, Service, URL string
			Port                    int
		}
		if code != http.StatusOK || json.Unmarshal([]byte(body), &ps) != nil {
			return false
		}
		for _, p := range ps {
			if p.Namespace == ns && p.Service == previewService && p.Port == 2379 {
				preview = p.URL
			}
		}
		return preview != ""
	})
	if !strings.HasPrefix(preview, "/preview/") || !strings.HasSuffix(preview, "/"+ns+"/"+previewService+":2379/") || strings.Contains(preview, srv.Token) {
		t.Fatalf("the preview's URL is %q: want /preview/TOKEN/%s/%s:2379/, without the page's token", preview, ns, previewService)
	}
	var version struct {
		Server string `json:"etcdserver"`
	}
	// The Deployment is available once etcd's container runs, a moment
	// before etcd listens: until then the API server's proxy answers 503.
	code, body := get(preview+"version", false)
	for deadline := time.Now().Add(30 * time.Second); code == http.StatusServiceUnavailable && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		code, body = get(preview+"version", false)
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &version) != nil || version.Server == "" {
		t.Fatalf("GET %sversion without the cookie: %d %q; want etcd's version JSON", preview, code, body)
	}
	t.Logf("etcd through the preview: %s", body)
	if code, body := get(strings.Replace(preview, "/preview/", "/preview/0", 1)+"version", true); code != http.StatusForbidden {
		t.Errorf("a preview with a wrong token: %d %q, want 403", code, body)
	}

	// (b) The page's preview tab: an iframe sandboxed without
	// allow-same-origin. It runs in a process (a target) of its own, which
	// the test attaches to, to read what it shows.
	tab := fmt.Sprintf(`#preview-tabs [role=tab][data-preview=%q]`, preview)
	waitPage(t, ctx, "the Service's preview tab", fmt.Sprintf(`document.querySelector(%q) !== null`, tab), 30*time.Second)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(tab))); err != nil {
		t.Fatalf("opening the preview tab: %v", err)
	}
	frame := fmt.Sprintf(`.preview[data-preview=%q] iframe`, preview)
	waitPage(t, ctx, "the preview's iframe", fmt.Sprintf(`document.querySelector(%q)?.getAttribute("src") === %q`, frame, preview), 10*time.Second)
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).src = %q`, frame, preview+"version"))); err != nil {
		t.Fatal(err)
	}
	framed := frameText(t, ctx, srv.Base.String()+preview+"version", `"etcdserver"`)
	t.Logf("the preview tab shows: %s", framed)
	saveShot(t, ctx, "ui-preview.png", chromedp.CaptureScreenshot())

	// The framed document moves itself on: the browser sends that request
	// as one from another site (the document's origin is opaque), without
	// the page's cookie.
	fctx, cancel := frameContext(t, ctx, srv.Base.String()+preview+"version")
	defer cancel()
	if err := chromedp.Do(fctx, chromedp.Evaluate[chromedp.Void](`setTimeout(() => { location.href = "health" }, 0)`)); err != nil {
		t.Fatal(err)
	}
	framed = frameText(t, ctx, srv.Base.String()+preview+"health", `"health":"true"`)
	t.Logf("after the framed document's own navigation: %s", framed)
}

// nodeEtcdImage is the etcd image kubeadm runs in this test's kind node,
// as containerd there names it.
func nodeEtcdImage(t *testing.T) string {
	t.Helper()
	node := "labctl-" + uiE2ELab + "-control-plane"
	out, err := exec.Command("docker", "exec", node, "ctr", "--namespace=k8s.io", "images", "list", "-q").Output()
	if err != nil {
		t.Fatalf("docker exec %s ctr images list: %v", node, err)
	}
	for _, ref := range strings.Fields(string(out)) {
		if strings.Contains(ref, "/etcd:") {
			return ref
		}
	}
	t.Fatalf("no etcd image in the node %s:\n%s", node, out)
	return ""
}

// frameContext attaches to the frame showing url (an iframe of another
// origin is a target of its own); cancel detaches and leaves it open.
func frameContext(t *testing.T, ctx context.Context, url string) (context.Context, context.CancelFunc) {
	t.Helper()
	// A frame's process may take long to start on a loaded machine: wait
	// as long as the page's own slowest wait, and name the frames there
	// were when it never comes.
	var id target.ID
	var seen []string
	for deadline := time.Now().Add(90 * time.Second); id == ""; time.Sleep(50 * time.Millisecond) {
		infos, err := chromedp.Targets(ctx)
		seen = seen[:0]
		for _, ti := range infos {
			seen = append(seen, ti.Type+" "+ti.URL)
			if ti.Type == "iframe" && ti.URL == url {
				id = ti.TargetID
			}
		}
		if id == "" && time.Now().After(deadline) {
			t.Fatalf("waited 90 s for a frame showing %s; the browser's targets: %q (%v)", url, seen, err)
		}
	}
	return chromedp.NewContext(ctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
}

// frameText waits until the frame showing url has text holding want, and
// returns the text.
func frameText(t *testing.T, ctx context.Context, url, want string) string {
	t.Helper()
	fctx, cancel := frameContext(t, ctx, url)
	defer cancel()
	pctx, cancelPoll := context.WithTimeout(fctx, 30*time.Second)
	defer cancelPoll()
	text, err := chromedp.Run(pctx, chromedp.Poll[string](fmt.Sprintf(`(document.body?.innerText ?? "").includes(%q) && document.body.innerText`, want)))
	if err != nil {
		t.Fatalf("the frame at %s never showed %s (%v); it shows %q", url, want, err, evalText(fctx, `document.body?.innerText ?? ""`))
	}
	return text
}

// checkResult is one check as the page shows it.
type checkResult struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// stepSelector selects the control that shows step id in the page.
func stepSelector(id string) string {
	return fmt.Sprintf(`li[data-step=%q] button`, id)
}

// stepStateJS is true when the step list shows step id in state.
func stepStateJS(id, state string) string {
	return fmt.Sprintf(`document.querySelector('li[data-step=%q][data-state=%q]') !== null`, id, state)
}

// terminalTextJS is the text of the rows of the page's visible terminal.
const terminalTextJS = `[...document.querySelectorAll("div.terminal:not([hidden]) .xterm-rows > div")].map(r => r.textContent).join("\n")`

// promptJS is true when a row of the terminal ends with a shell prompt.
const promptJS = `(` + terminalTextJS + `).split("\n").some(r => /[#$]\s*$/.test(r))`

// lastRowPromptJS is true when the terminal's last row that is not blank
// is a shell prompt.
const lastRowPromptJS = `(` + terminalTextJS + `).trimEnd().split("\n").at(-1).match(/[#$]\s*$/) !== null`

// waitPage waits until the JavaScript expression cond is true in the page,
// and fails the test with the page's text when it never is.
func waitPage(t testing.TB, ctx context.Context, what, cond string, timeout time.Duration) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		t.Fatalf("the page never showed %s (%v); it shows:\n%s\nterminal:\n%s", what, err, evalText(ctx, `document.body?.innerText ?? ""`), evalText(ctx, terminalTextJS))
	}
}

// evalText is the string expr gives in the page, or why there is none.
func evalText(ctx context.Context, expr string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		return fmt.Sprintf("(cannot read: %v)", err)
	}
	return s
}

// typeLine types line and Enter into the page's visible terminal, one
// character at a time, and waits for the next prompt. Each character is
// inserted as a keyboard's input method commits text (chromedp's key
// events would reach xterm.js both as a key and as input, so twice); Enter
// is a key press.
func typeLine(t testing.TB, ctx context.Context, line string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, tgt *chromedp.Target) error {
			_, err := chromedp.Evaluate[chromedp.Void](`window.__labctlBefore = `+terminalTextJS+`; undefined`)(ctx, tgt)
			return err
		}),
		chromedp.Focus(chromedp.CSS("div.terminal:not([hidden]) textarea.xterm-helper-textarea")),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			for _, r := range line {
				if _, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: string(r)}); err != nil {
					return err
				}
			}
			for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
				enter := input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
				if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, enter); err != nil {
					return err
				}
			}
			return nil
		}))
	if err != nil {
		t.Fatalf("typing %q into the terminal: %v", line, err)
	}
	waitPage(t, ctx, "a prompt after "+line, `(`+terminalTextJS+`) !== window.__labctlBefore && `+lastRowPromptJS, time.Minute)
}

// artifactDir is where a test keeps what it leaves for a look:
// $LABCTL_TEST_ARTIFACTS when set, else a directory of the test.
func artifactDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("LABCTL_TEST_ARTIFACTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

// saveShot saves the PNG that shot takes as name in the artifact directory
// and returns its path.
func saveShot(t testing.TB, ctx context.Context, name string, shot chromedp.Action[[]byte]) string {
	t.Helper()
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(artifactDir(t), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// saveShotOnFailure saves the page as name when the test fails: into
// $LABCTL_TEST_ARTIFACTS when set, else into a directory that stays.
func saveShotOnFailure(t *testing.T, ctx context.Context, name string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
		dir := os.Getenv("LABCTL_TEST_ARTIFACTS")
		if err == nil && dir == "" {
			dir, err = os.MkdirTemp("", "labctl-ui-e2e-")
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), png, 0o644)
		}
		if err != nil {
			t.Logf("no screenshot of the failed page: %v", err)
			return
		}
		t.Logf("screenshot of the failed page: %s", filepath.Join(dir, name))
	})
}

// uiServer is a running `labctl ui`.
type uiServer struct {
	Cmd *exec.Cmd
	// URL is the first line it printed; Base its scheme and host; Token
	// the token in it.
	URL    string
	Base   *url.URL
	Token  string
	stderr e2etest.Screen
}

// startUI starts `labctl ui args...` on labFile in the environment env,
// waits for the URL on its first line of
// output and stops it (with an interrupt) when the test ends.
func startUI(t testing.TB, bin, labFile string, env []string, args ...string) *uiServer {
	t.Helper()
	s := &uiServer{}
	cmd := exec.Command(bin, append([]string{"--lab", labFile, "ui"}, args...)...)
	cmd.Env = env
	cmd.Stderr = &s.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Cmd = cmd
	exited := make(chan error, 1)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("labctl ui did not end within 30 s of an interrupt")
		}
		if e := s.stderr.String(); strings.Contains(e, "goroutine ") || strings.Contains(e, "panic:") {
			t.Errorf("labctl ui wrote a Go stack trace:\n%s", e)
		}
		t.Logf("labctl ui's stderr:\n%s", s.stderr.String())
	})
	select {
	case s.URL = <-lines:
	case err := <-exited:
		t.Fatalf("labctl ui %s ended (%v) before printing a URL:\n%s", strings.Join(args, " "), err, s.stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("labctl ui printed no URL within a minute:\n%s", s.stderr.String())
	}
	u, err := url.Parse(s.URL)
	if err != nil || u.Scheme != "http" || u.Query().Get("token") == "" {
		t.Fatalf("labctl ui's first line is not a URL with a token: %q", s.URL)
	}
	s.Token = u.Query().Get("token")
	s.Base = &url.URL{Scheme: u.Scheme, Host: u.Host}
	return s
}

// upgrade asks srv for a WebSocket on path with the given headers (Host
// and Origin unless given) and returns the answer's status code.
func upgrade(t *testing.T, srv *uiServer, path string, header map[string]string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", srv.Base.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	h := map[string]string{"Host": srv.Base.Host, "Origin": srv.Base.String()}
	for k, v := range header {
		h[k] = v
	}
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\n", path)
	for k, v := range h {
		if v != "" {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a WebSocket upgrade of %s: %v", path, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// testUIRefusals holds the running server to the contract's refusals: no
// token, a wrong token, a foreign Origin or Host, no Origin. A WebSocket
// with the cookie and the page's own Origin is accepted, so the refusals are
// the checks' doing and not a malformed request's.
func testUIRefusals(t *testing.T, srv *uiServer) {
	cookie := "labctl_ui=" + srv.Token
	const ws = "/ws/terminal?id=probe"
	for _, c := range []struct {
		name   string
		path   string
		header map[string]string
	}{
		{"no token", ws, nil},
		{"a wrong token", "/ws/terminal?id=probe&token=" + strings.Repeat("0", len(srv.Token)), nil},
		{"a wrong cookie", ws, map[string]string{"Cookie": "labctl_ui=" + strings.Repeat("0", len(srv.Token))}},
		{"a foreign Origin", ws, map[string]string{"Cookie": cookie, "Origin": "http://evil.example"}},
		{"a foreign Origin on the same port", ws, map[string]string{"Cookie": cookie, "Origin": "http://evil.example:" + srv.Base.Port()}},
		{"no Origin", ws, map[string]string{"Cookie": cookie, "Origin": ""}},
		{"a foreign Host", ws, map[string]string{"Cookie": cookie, "Host": "evil.example:" + srv.Base.Port(), "Origin": "http://evil.example:" + srv.Base.Port()}},
	} {
		if code := upgrade(t, srv, c.path, c.header); code != http.StatusForbidden {
			t.Errorf("a WebSocket with %s got %d, want 403", c.name, code)
		}
	}
	if code := upgrade(t, srv, ws, map[string]string{"Cookie": cookie}); code != http.StatusSwitchingProtocols {
		t.Errorf("a WebSocket with the cookie and the page's Origin got %d, want 101", code)
	}
	if code := upgrade(t, srv, ws+"&token="+srv.Token, nil); code != http.StatusSwitchingProtocols {
		t.Errorf("a WebSocket with the token got %d, want 101", code)
	}

	// The API without the token is refused with a word on what to do.
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(srv.Base.String() + "/api/state")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "labctl ui") {
		t.Errorf("GET /api/state without the token: %d %q; want 403 naming labctl ui", resp.StatusCode, body)
	}
	// A POST with the cookie from a foreign Origin is refused.
	req, _ := http.NewRequest(http.MethodPost, srv.Base.String()+"/api/check", strings.NewReader(`{"step":""}`))
	req.Header.Set("Cookie", cookie)
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Content-Type", "application/json")
	if resp, err := client.Do(req); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST /api/check from a foreign Origin: %d, want 403", resp.StatusCode)
	}
	// Every answer carries the strict policy.
	resp, err = client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("the token's answer has Content-Security-Policy %q", csp)
	}
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Set-Cookie"), "HttpOnly") {
		t.Errorf("the printed URL answers %d with Set-Cookie %q; want 303 and an HttpOnly cookie", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
}

// testUIBind holds `labctl ui` to loopback: the running server (on the
// default address) cannot be reached on an address of this machine that is
// not loopback; an address that is not loopback from LABCTL_ADDR or the
// config file is refused; the --addr flag may name one, with a warning.
func testUIBind(t *testing.T, r *e2etest.Labctl, srv *uiServer) {
	ip := nonLoopbackIPv4()
	if ip == "" {
		t.Fatal("this machine has no address but loopback to test binding with (Docker's bridge would be one)")
	}
	if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, srv.Base.Port()), 5*time.Second); err == nil {
		c.Close()
		t.Errorf("labctl ui without --addr answers on %s:%s, not only on loopback", ip, srv.Base.Port())
	}

	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("addr: "+ip+":0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range []string{"LABCTL_ADDR=" + ip + ":0", "LABCTL_CONFIG=" + config} {
		c := *r
		c.Env = append(slices.Clone(r.Env), env)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		code, out, errOut := c.Run(ctx, "ui", "--no-browser")
		cancel()
		if code == 0 || out != "" || !strings.Contains(errOut, "--addr") {
			t.Errorf("labctl ui with %s: exit %d, stdout %q, stderr %q; want it refused, naming --addr", env, code, out, errOut)
		}
	}

	wide := startUI(t, r.Bin, r.Lab, r.Env, "--no-browser", "--addr", "0.0.0.0:0")
	waitFor(t, "the warning of labctl ui --addr 0.0.0.0:0", func() bool { return strings.Contains(wide.stderr.String(), "warning") })
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get("http://" + net.JoinHostPort(ip, wide.Base.Port()) + "/?token=" + wide.Token)
	if err != nil {
		t.Fatalf("labctl ui --addr 0.0.0.0:0 cannot be reached on %s: %v", ip, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("labctl ui --addr 0.0.0.0:0 answers the URL on %s with %d, want 303", ip, resp.StatusCode)
	}
}

// waitFor waits up to 30 s until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}

// nonLoopbackIPv4 is an address of this machine that is not loopback, or "".
func nonLoopbackIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

// BenchmarkUI measures `labctl ui` on a lab that is up, for hack/bench.sh
// (`make bench`), which gives the labctl binary in LABCTL_BENCH_LABCTL, the
// lab file in LABCTL_BENCH_LAB and the state directory in LABCTL_STATE_DIR:
// the time from opening the printed URL in Chromium to a shell prompt in
// the page's terminal (load-s), the 95th percentile of a keystroke's round
// trip through the page's terminal WebSocket, from the page's send to the
// page's receipt of its echo (echo-p95-ms), and labctl's peak resident
// memory while it serves the page with that one terminal (peak-rss-MB).
//
//	go test -tags e2e -run '^$' -bench '^BenchmarkUI$' -benchtime 1x ./cmd/labctl/
func BenchmarkUI(b *testing.B) {
	bin, labFile := os.Getenv("LABCTL_BENCH_LABCTL"), os.Getenv("LABCTL_BENCH_LAB")
	if bin == "" || labFile == "" || os.Getenv("LABCTL_STATE_DIR") == "" {
		b.Fatal("BenchmarkUI measures a lab that is up: run it through `make bench` (hack/bench.sh), which sets LABCTL_BENCH_LABCTL, LABCTL_BENCH_LAB and LABCTL_STATE_DIR")
	}
	ctx := e2etest.Chromium(b)
	// Keep the page's WebSockets within reach of the measurement below.
	_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: recordSocketsJS})
	if err != nil {
		b.Fatal(err)
	}
	srv := startUI(b, bin, labFile, os.Environ(), "--no-browser")

	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		b.Fatalf("opening %s: %v", srv.URL, err)
	}
	loaded := time.Since(start)
	waitPage(b, ctx, "the lab's title", `document.querySelector("#lab-title")?.lang !== ""`, time.Minute)
	titled := time.Since(start)
	waitPage(b, ctx, "a shell prompt in the terminal", promptJS, 2*time.Minute)
	load := time.Since(start)
	b.Logf("page loaded after %v, the lab's title shown after %v, a prompt after %v", loaded, titled, load)

	const keys = 200
	ms, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](fmt.Sprintf(echoJS, keys), chromedp.EvalAwaitPromise))
	if err != nil {
		b.Fatalf("keystroke round trips: %v", err)
	}
	if len(ms) != keys {
		b.Fatalf("%d keystroke round trips measured, want %d", len(ms), keys)
	}
	slices.Sort(ms)
	p95 := ms[(len(ms)*95+99)/100-1]
	rss := peakRSS(b, srv.Cmd.Process.Pid)
	b.Logf("page load to a prompt %v; echo round trip median %.1f ms, p95 %.1f ms, max %.1f ms; labctl peak RSS %d KiB",
		load, ms[len(ms)/2], p95, ms[len(ms)-1], rss)
	b.ReportMetric(load.Seconds(), "load-s")
	b.ReportMetric(p95, "echo-p95-ms")
	b.ReportMetric(float64(rss)/1024, "peak-rss-MB")
}

// recordSocketsJS runs before the page's own scripts and keeps every
// WebSocket the page opens in window.__labctlSockets.
const recordSocketsJS = `(() => {
	const Native = window.WebSocket;
	window.__labctlSockets = [];
	window.WebSocket = class extends Native {
		constructor(...args) { super(...args); window.__labctlSockets.push(this); }
	};
})()`

// echoJS types %d letters, one at a time, through the page's open terminal
// WebSocket and returns each one's milliseconds until its echo came back on
// it; it clears the line (Ctrl-U) now and then and at the end.
const echoJS = `(async (n) => {
	const ws = (window.__labctlSockets || []).find(s => s.url.includes("/ws/terminal") && s.readyState === WebSocket.OPEN);
	if (!ws) throw new Error("the page has no open terminal WebSocket");
	const dec = new TextDecoder(), enc = new TextEncoder();
	let seen = "", wake = () => {};
	ws.addEventListener("message", async (ev) => {
		if (typeof ev.data === "string") return;
		const data = ev.data instanceof Blob ? await ev.data.arrayBuffer() : ev.data;
		seen += dec.decode(data, {stream: true});
		wake();
	});
	const pause = (ms) => new Promise((r) => setTimeout(r, ms));
	const times = [];
	for (let i = 0; i < n; i++) {
		if (i %% 40 === 0) { ws.send(enc.encode("\x15")); await pause(200); }
		const ch = "abcdefghijklmnopqrstuvwxyz"[i %% 26];
		seen = "";
		const echoed = new Promise((resolve, reject) => {
			const timer = setTimeout(() => reject(new Error("no echo of " + ch + " within 5 s")), 5000);
			wake = () => { if (seen.includes(ch)) { clearTimeout(timer); resolve(); } };
		});
		const t0 = performance.now();
		ws.send(enc.encode(ch));
		await echoed;
		times.push(performance.now() - t0);
	}
	ws.send(enc.encode("\x15"));
	return times;
})(%[1]d)`

// peakRSS is the peak resident memory (VmHWM) of process pid, in KiB.
func peakRSS(t testing.TB, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kib); err == nil {
				return kib
			}
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
