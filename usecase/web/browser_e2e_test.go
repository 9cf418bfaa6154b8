//go:build e2e

package web

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/usecase/web/assets"
)

// These tests drive the server in Debian's headless Chromium, with the
// page's real files and a fake API server for the previews (no cluster):
// what they prove is what the browser does with the server's answers.
//
//	go test -tags e2e -run TestBrowser ./usecase/web/

// poll waits until the JavaScript expression cond is true in ctx's
// document, through its navigations.
func poll(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
		var ok bool
		ok, err = chromedp.Run(ectx, chromedp.Evaluate[bool](cond))
		cancel()
		if err == nil && ok {
			return
		}
	}
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body?.innerText ?? "")`))
	t.Fatalf("never %s (%v); the document is:\n%s", what, err, text)
}

func realPage(c *Config) { c.Assets = assets.FS }

// TestBrowserOpensTheOpener opens the file labctl ui gives the browser, as
// a browser started with its file:// URL does: it leads to the page, which
// works (its cookie is set and sent), and the address bar holds no token.
func TestBrowserOpensTheOpener(t *testing.T) {
	ts := startServer(t, realPage)
	o, err := NewOpener(t.TempDir(), ts.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx := e2etest.Chromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(o.URL)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "showed the lab's title", fmt.Sprintf(`document.querySelector("#lab-title")?.textContent.includes(%q)`, ts.lab.Metadata.Title))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || loc != ts.base+"/" {
		t.Errorf("the address bar shows %q (%v), want %s/", loc, err, ts.base)
	}
	got, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{ts.base + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, c := range got.Cookies {
		if c.Name == cookieName {
			found = true
			if !c.HTTPOnly || c.SameSite != network.CookieSameSiteStrict || c.Path != "/" || c.Value != ts.Token() {
				t.Errorf("the page's cookie is %+v: want HttpOnly, SameSite=Strict, Path=/", c)
			}
		}
	}
	if !found {
		t.Errorf("no %s cookie after opening the file: %+v", cookieName, got.Cookies)
	}
}

// referrerCatcher is a server on 127.0.0.1 of another port: a third party
// to the preview. It records every request's path and Referer.
type referrerCatcher struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func newReferrerCatcher(t *testing.T) *referrerCatcher {
	c := &referrerCatcher{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.got = append(c.got, r.Method+" "+r.URL.String()+" Referer: "+r.Referer())
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>caught</title>caught")
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *referrerCatcher) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = nil
}

func (c *referrerCatcher) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.got...)
}

// leakingApp is the HTML of an app that wants its address sent to the
// catcher at base: an unsafe-url referrer policy, as a meta element and on
// each element, and every kind of request a document makes on its own.
func leakingApp(base string) string {
	return strings.ReplaceAll(`<!doctype html>
<html><head><meta name="referrer" content="unsafe-url">
<link rel="stylesheet" href="CATCHER/style.css" referrerpolicy="unsafe-url">
<link rel="prefetch" href="CATCHER/prefetch">
<meta http-equiv="refresh" content="3;url=CATCHER/refresh">
<title>app</title></head>
<body><p id="ready">the app</p>
<img id="own" src="own.png">
<img src="CATCHER/img.png" referrerpolicy="unsafe-url">
<iframe src="CATCHER/frame"></iframe>
<iframe name="sink"></iframe>
<a id="nav" href="CATCHER/nav" referrerpolicy="unsafe-url">nav</a>
<a id="pop" href="CATCHER/popup" target="_blank" referrerpolicy="unsafe-url">popup</a>
<a id="top" href="CATCHER/top" target="_top">top</a>
<a id="ping" href="#here" ping="CATCHER/ping">ping</a>
<form id="form" action="CATCHER/form" method="post" target="sink"><button id="send">send</button></form>
<script>
fetch("CATCHER/fetch", {mode: "no-cors", referrerPolicy: "unsafe-url"}).catch(() => {});
setTimeout(() => {
  for (const id of ["ping", "pop", "top", "send"]) document.getElementById(id).click();
  setTimeout(() => document.getElementById("nav").click(), 1000);
}, 1000);
</script>
</body></html>`, "CATCHER", base)
}

// frameOf attaches to the frame (an iframe of an opaque origin is a target
// of its own) showing url; cancel detaches.
func frameOf(t *testing.T, ctx context.Context, url string) (context.Context, context.CancelFunc) {
	t.Helper()
	var id target.ID
	deadline := time.Now().Add(20 * time.Second)
	for id == "" {
		infos, err := chromedp.Targets(ctx)
		if err == nil {
			for _, ti := range infos {
				if ti.Type == "iframe" && ti.URL == url {
					id = ti.TargetID
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no frame shows %s: %v", url, infos)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return chromedp.NewContext(ctx, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
}

// attack waits until the leaking app shows in ctx, a tab or a frame, and
// long enough for it to click its links and its form's button and for its
// refresh.
func attack(t *testing.T, fctx context.Context) {
	t.Helper()
	poll(t, fctx, "showed the app and its own image", `document.querySelector("#own")?.naturalWidth > 0`)
	time.Sleep(5 * time.Second) // the clicks, the refresh, and any request still on its way
}

// TestBrowserPreviewKeepsItsTokenFromOthers shows a learner's app that
// asks for an unsafe-url referrer policy (its header, a meta element and
// the elements' own referrerpolicy, which a browser obeys over any header)
// and sends the browser to a server on 127.0.0.1 of another port in every
// way a document can: its images, styles, frames, prefetch, refresh, links
// (in its frame, to a new window, to the top), ping, a form and fetch. The
// preview's address holds the previews' token, which must reach no one. In
// the page's preview tab nothing reaches the other server at all; opened
// on its own (labctl open), only the app's own navigations do, and without
// the token. First, the same app served without the preview's policy
// shows that the browser would send its address.
func TestBrowserPreviewKeepsItsTokenFromOthers(t *testing.T) {
	catcher := newReferrerCatcher(t)
	var pixel bytes.Buffer
	if err := png.Encode(&pixel, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	app := func(w http.ResponseWriter, rest string) {
		if rest == "/own.png" {
			w.Header().Set("Content-Type", "image/png")
			w.Write(pixel.Bytes())
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Referrer-Policy", "unsafe-url")
		fmt.Fprint(w, leakingApp(catcher.URL))
	}
	api := newRecordingAPI(t, `{"kind":"ServiceList","apiVersion":"v1","items":[
	  {"metadata":{"name":"web","namespace":"shop"},"spec":{"ports":[{"port":80,"protocol":"TCP"}]}}]}`)
	api.answer = func(w http.ResponseWriter, _ *http.Request, rest string) { app(w, rest) }
	ts := startServer(t, realPage, api.kube)
	preview := ts.base + ts.pv("/preview/shop/web:80/")
	leaked := func(t *testing.T, secret string) (got []string, leaks int) {
		t.Helper()
		got = catcher.requests()
		for _, r := range got {
			if strings.Contains(r, secret) {
				leaks++
			}
			t.Logf("the other server got %s", r)
		}
		return got, leaks
	}

	t.Run("without the preview's policy", func(t *testing.T) {
		plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			app(w, strings.TrimPrefix(r.URL.Path, "/secret-in-the-path"))
		}))
		defer plain.Close()
		ctx := e2etest.Chromium(t)
		if err := chromedp.Do(ctx, chromedp.Navigate(plain.URL+"/secret-in-the-path/")); err != nil {
			t.Fatal(err)
		}
		attack(t, ctx)
		if _, n := leaked(t, "Referer: "+plain.URL+"/secret-in-the-path/"); n == 0 {
			t.Error("the app's own policy sent its address nowhere: this test shows nothing")
		}
		catcher.reset()
	})
	t.Run("in the page", func(t *testing.T) {
		ctx := e2etest.Chromium(t)
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL())); err != nil {
			t.Fatal(err)
		}
		tab := `#preview-tabs [role=tab]`
		poll(t, ctx, "showed the preview's tab", fmt.Sprintf(`document.querySelector(%q) !== null`, tab))
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(tab))); err != nil {
			t.Fatal(err)
		}
		fctx, cancel := frameOf(t, ctx, preview)
		defer cancel()
		attack(t, fctx)
		if got, n := leaked(t, ts.ptoken); n > 0 || len(got) > 0 {
			t.Errorf("the previewed app reached another server %d times, %d of them with the previews' token", len(got), n)
		}
		catcher.reset()
	})
	t.Run("on its own", func(t *testing.T) {
		ctx := e2etest.Chromium(t)
		if err := chromedp.Do(ctx, chromedp.Navigate(preview)); err != nil {
			t.Fatal(err)
		}
		// The app leaves its address within a second: the requests that
		// reach the other server tell that it ran.
		time.Sleep(6 * time.Second)
		got, n := leaked(t, ts.ptoken)
		if n > 0 {
			t.Errorf("the previews' token reached another server %d times", n)
		}
		if len(got) == 0 {
			t.Error("the app, opened on its own, did not run: this test shows nothing")
		}
		for _, r := range got {
			if p := strings.Fields(r)[1]; p != "/nav" && p != "/top" && p != "/refresh" && p != "/favicon.ico" {
				t.Errorf("the previewed app, opened on its own, reached another server with more than a navigation: %s", r)
			}
		}
	})
}

// TestBrowserAuthorsTextReachesNoOne opens the page of a lab whose author
// put an image and a link to another server into its goal, and a link into
// a step, as a way to learn the page's address (and its token) or when the
// learner works: the image is not loaded (img-src 'self'), and the links,
// followed, carry no Referer.
func TestBrowserAuthorsTextReachesNoOne(t *testing.T) {
	catcher := newReferrerCatcher(t)
	ts := startServer(t, realPage, func(c *Config) {
		c.Lab.Metadata.Goal = "Learn. ![track](" + catcher.URL + "/goal.png) [more](" + catcher.URL + "/goal-link)"
		c.Lab.Steps[0].Instructions = "Do it: [see](" + catcher.URL + "/step-link)."
	})
	ctx := e2etest.Chromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL())); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "showed the goal's link", `document.querySelector('a[href$="/goal-link"]') !== null && document.querySelector('a[href$="/step-link"]') !== null`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelectorAll('a[href$="-link"]').forEach(a => a.click()), true`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	got := catcher.requests()
	var links int
	for _, r := range got {
		t.Logf("the other server got %s", r)
		if strings.Contains(r, ts.Token()) || strings.Contains(r, ts.ptoken) || strings.Contains(r, ts.host) {
			t.Errorf("the page's address reached another server: %s", r)
		}
		switch p := strings.Fields(r)[1]; p {
		case "/goal-link", "/step-link":
			links++
		case "/favicon.ico":
		default:
			t.Errorf("the page loaded the author's %s from another server", p)
		}
	}
	if links != 2 {
		t.Errorf("the author's links were followed %d times, want 2: this test shows nothing", links)
	}
}

// TestBrowserCodeBlockButtons: a shell's code block in a step has a Copy
// button, which puts the block on the clipboard, and a Run button, which
// types it into the terminal on show; a YAML block can only be copied.
func TestBrowserCodeBlockButtons(t *testing.T) {
	ts := startServer(t, realPage, func(c *Config) {
		c.Lab.Steps[0].Instructions = "Look:\n\n```sh\necho from-the-page\nls /root\n```\n\nThen:\n\n```yaml\nkind: ConfigMap\n```\n"
		// A lab that reached the page without the loader: its goal's blocks
		// hold what the page does not show.
		c.Lab.Metadata.Goal = "Hidden:\n\n```sh\necho unshown-1\u202Etxt.exe\n```\n\n```sh\necho unshown-2\x1b[2K\n```\n\n" +
			"```sh\ncat /etc/unshown-3\t\n```\n\n```yaml\nkind: Con\u200bfigMap\n```\n"
	})
	ctx := e2etest.Chromium(t)
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted, Origin: ts.base,
		}); err != nil {
			t.Fatalf("granting %s: %v", name, err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL())); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "showed the step's code blocks with their buttons", `document.querySelectorAll('#step-instructions .code-actions').length === 2`)
	buttons, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#step-instructions .code-actions')].map(b => [...b.querySelectorAll('button')].map(x => x.className).join(' '))`))
	if err != nil {
		t.Fatal(err)
	}
	if len(buttons) != 2 || buttons[0] != "code-copy code-run" || buttons[1] != "code-copy" {
		t.Errorf("buttons of the sh and the yaml block: %q, want copy and run, then copy only", buttons)
	}
	for deadline := time.Now().Add(20 * time.Second); len(ts.sandbox.opened()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the page opened no terminal")
		}
	}
	shell := ts.sandbox.opened()[0]
	if typed := shell.typedText(); strings.Contains(typed, "from-the-page") {
		t.Fatalf("the block reached the terminal before any click: %q", typed)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#step-instructions .code-run`))); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(shell.typedText(), "echo from-the-page\rls /root\r"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Run typed %q into the terminal, want each line of the block ended by Enter", shell.typedText())
		}
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#step-instructions .code-actions:last-of-type .code-copy`))); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "said the yaml block was copied", `[...document.querySelectorAll('#step-instructions .code-copy')].some(b => b.textContent === 'Copied')`)
	clip, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.clipboard.readText()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if clip != "kind: ConfigMap" {
		t.Errorf("the clipboard holds %q, want the yaml block", clip)
	}
	if strings.Contains(shell.typedText(), "kind: ConfigMap") {
		t.Errorf("copying typed the block into the terminal: %q", shell.typedText())
	}

	t.Run("a block holding what the page does not show", func(t *testing.T) {
		poll(t, ctx, "noted the goal's four refused blocks", `document.querySelectorAll('#lab-goal .code-refused').length === 4`)
		type block struct {
			Copy, Run string // "on", "off" or "" (no button)
			Note      string
			Visible   bool
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]block](`[...document.querySelectorAll('#lab-goal .code-actions')].map(bar => {
			const state = (b) => b ? (b.disabled ? 'off' : 'on') : '';
			const note = bar.nextElementSibling;
			const run = bar.querySelector('.code-run');
			return { copy: state(bar.querySelector('.code-copy')), run: state(run), note: note.textContent,
				visible: note.getBoundingClientRect().height > 0 && (!run || run.getAttribute('aria-describedby') === note.id) };
		})`))
		if err != nil {
			t.Fatal(err)
		}
		want := []struct{ copy, run, char string }{{"off", "off", "U+202E"}, {"off", "off", "U+001B"}, {"on", "off", "U+0009"}, {"off", "", "U+200B"}}
		if len(got) != len(want) {
			t.Fatalf("the goal's blocks: %+v, want %d", got, len(want))
		}
		for i, w := range want {
			if g := got[i]; g.Copy != w.copy || g.Run != w.run || !strings.Contains(g.Note, w.char) || !g.Visible {
				t.Errorf("block %d: copy %q, run %q, note %q (shown and described: %v); want copy %q, run %q and a shown note naming %s", i+1, g.Copy, g.Run, g.Note, g.Visible, w.copy, w.run, w.char)
			}
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelectorAll('#lab-goal .code-run').forEach(b => b.click()), true`)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if typed := shell.typedText(); strings.Contains(typed, "unshown") {
			t.Errorf("a refused block reached the terminal: %q", typed)
		}
	})
}

// TestBrowserClosedSolution: a step's solution is not on the page until the
// learner asks and confirms; a learner who cancels sees nothing and nothing
// is recorded; one who confirms sees it open, and the host has recorded it.
func TestBrowserClosedSolution(t *testing.T) {
	ts := startServer(t, realPage)
	ctx := e2etest.Chromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL())); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "offered the solution", `!document.querySelector('#solution').hidden && document.querySelector('#step-solution').hidden`)
	if text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); err != nil || strings.Contains(text, "touch a") {
		t.Fatalf("the solution is in the page before the learner asked (%v)", err)
	}
	shown := func() bool {
		p, err := ts.store.Load(ts.lab.Metadata.Name)
		if err != nil {
			t.Fatal(err)
		}
		_, ok := p.SolutionShown["one"]
		return ok
	}

	// The learner cancels the confirmation.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.confirm = () => false, true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("solution"))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if open, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!document.querySelector('#step-solution').hidden`)); err != nil || open || shown() {
		t.Fatalf("a cancelled confirmation showed the solution (%v, %v) or recorded it (%v)", open, err, shown())
	}

	// The learner confirms.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.confirm = () => true, true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("solution"))); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "showed the solution, open", `document.querySelector('#step-solution').open && !document.querySelector('#step-solution').hidden && document.querySelector('#step-solution-text code')?.textContent === 'touch a' && document.querySelector('#solution').hidden`)
	if !shown() {
		t.Error("the page shows the solution, but the host did not record that it was shown")
	}
}

// TestBrowserLabImage: an image of the lab's fixtures in a step's text
// loads in the page (the page's policy allows its own images) and is no
// wider than the step's column.
func TestBrowserLabImage(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 3000, 20))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wide.png"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, realPage, func(c *Config) {
		c.Fixtures = os.DirFS(dir)
		c.Lab.Steps[0].Instructions = "The plan:\n\n![the plan](fixtures/wide.png)\n"
	})
	ctx := e2etest.Chromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL())); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "loaded the lab's image", `(() => { const i = document.querySelector('#step-instructions img'); return !!i && i.complete && i.naturalWidth === 3000; })()`)
	fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const i = document.querySelector('#step-instructions img'); return i.getBoundingClientRect().width <= document.querySelector('#step-instructions').getBoundingClientRect().width + 1; })()`))
	if err != nil || !fits {
		t.Errorf("the image is wider than the step's text (%v)", err)
	}
}

// TestBrowserChoosesTheLabsLanguage: a lab with a translation offers its
// languages; choosing Japanese shows the lab's texts, the page's words and
// the check results in it, keeps the terminal (re-attached, not a new
// shell; TestTerminalInTheChosenLanguage shows it speaks Japanese then) and
// is remembered on the next load. A lab in one language
// offers no choice.
func TestBrowserChoosesTheLabsLanguage(t *testing.T) {
	ts := startServer(t, realPage, withJapanese)
	ctx := e2etest.Chromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL())); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "offered English and Japanese, English chosen",
		`!document.querySelector('#lab-language').hidden && [...document.querySelectorAll('#lab-language-select option')].map(o => o.value + ':' + o.textContent).join(',') === 'en:English,ja:日本語' && document.querySelector('#lab-language-select').value === 'en' && document.querySelector('#step-title')?.textContent.includes('Step one')`)
	for deadline := time.Now().Add(20 * time.Second); len(ts.sandbox.opened()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the page opened no terminal")
		}
	}

	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('#lab-language-select'); s.value = 'ja'; s.dispatchEvent(new Event('change')); return true; })()`)); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "showed the lab, its step and the page's words in Japanese",
		`document.querySelector('#lab-title').textContent === 'ウェブのテスト' && document.querySelector('#lab-title').lang === 'ja' && document.querySelector('#step-title')?.textContent.includes('一つ目') && document.querySelector('#steps-heading').textContent !== 'Steps' && document.documentElement.lang === 'ja' && document.querySelector('#lab-language-select').value === 'ja'`)
	ts.sandbox.pass("has-b")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("check"))); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "showed the check's description and the mistake in Japanese",
		`document.body.innerText.includes('a がある') && document.body.innerText.includes('a ではなく b を作った。')`)
	if n := len(ts.sandbox.opened()); n != 1 {
		t.Errorf("choosing a language opened %d shells, want the one terminal re-attached", n)
	}
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "kept Japanese on the next load", `document.querySelector('#lab-title').textContent === 'ウェブのテスト'`)

	one := startServer(t, realPage)
	if err := chromedp.Do(ctx, chromedp.Navigate(one.URL())); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "showed a lab in one language with no choice", `document.querySelector('#lab-title').textContent === 'Web test' && document.querySelector('#lab-language').hidden`)
}

// TestBrowserReloadsTheLab: after SetLab (labctl ui --watch saw an edit)
// the open page shows the edited steps and the edit's warnings without a
// reload by the learner, on the step it was on; after SetLabProblem it
// keeps them and shows the problem.
func TestBrowserReloadsTheLab(t *testing.T) {
	ts := startServer(t, realPage)
	ctx := e2etest.Chromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL())); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "showed step one", `document.querySelector('#step-title')?.textContent.includes('Step one')`)
	edited := testLab()
	edited.Steps[0].Title = "Step one, edited"
	edited.Steps[0].Instructions = "Make `a` **now**."
	ts.SetLab("lab.yaml", edited, "sha256:edited", []string{"steps[0]: a warning"})
	poll(t, ctx, "showed the edited step and the warning", `document.querySelector('#step-title').textContent.includes('Step one, edited') && document.querySelector('#step-instructions strong')?.textContent === 'now' && document.querySelector('#steps .step-name').textContent.endsWith('Step one, edited') && document.querySelector('#banner').textContent.includes('a warning')`)
	ts.SetLabProblem("lab.yaml", "lab.yaml:3:1: did not find expected key")
	poll(t, ctx, "showed the problem and kept the edited lab", `document.querySelector('#banner').textContent.includes('did not find expected key') && document.querySelector('#step-title').textContent.includes('Step one, edited')`)
}
