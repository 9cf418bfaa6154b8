// Package web serves `labctl ui`: one page on the learner's own machine
// with the lab's texts beside terminals into the sandbox, the Check and
// Grade buttons, and previews of the lab's Services. It is an HTTP server
// on loopback: a random token in the printed URL becomes an HttpOnly,
// SameSite=Strict cookie, and a second one in the previews' paths opens
// the previews and nothing else; every request must name the listen
// address as its Host (no DNS rebinding), every POST and WebSocket must
// come from the page's own Origin (or, on a preview, from the preview), and
// every answer carries a strict Content-Security-Policy. The page's files are embedded in the binary
// (usecase/web/assets); nothing is fetched from elsewhere.
//
// The live lab is behind the small interfaces declared here (Sandbox,
// Shell), so the server runs in tests without Docker. Each terminal is one
// usecase/shell session, the engine of `labctl shell`, with the WebSocket
// as its terminal: checks after every command, banners, the in-band lab
// commands, and one progress shared with `labctl shell` and `labctl status`.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/shell"
)

// Sandbox is the lab's live environment as the page needs it: the checker
// and the scripts of `labctl check`, and the learner's login shell of
// `labctl shell`. provision's *Live, adapted by the command layer, is the
// real one.
type Sandbox interface {
	grading.Checker
	grading.Prober
	grading.ScriptRunner
	// OpenShell starts the learner's login shell in the sandbox on a PTY
	// of rows×cols, as `labctl shell` starts it (TERM is term, and lang
	// the language of labctl's words in it: LABCTL_LANG).
	OpenShell(ctx context.Context, term string, lang msg.Lang, rows, cols uint) (Shell, error)
}

// Shell is a learner's login shell attached through a PTY.
type Shell interface {
	shell.Shell
	// ExitCode waits for the shell to end and returns its exit code.
	ExitCode(ctx context.Context) (int, error)
}

// Config is what a Server needs. Lab, Store, Sandbox and Assets are
// required.
type Config struct {
	Lab *lab.Lab
	// Digest identifies the lab definition (lab.Digest).
	Digest string
	// Store is the learner's progress, the one `labctl status` reads.
	Store   *progress.Store
	Sandbox Sandbox
	// Catalog holds labctl's own words in the learner's language; nil
	// means English. Lab and Catalog are what the page shows unless the
	// learner chooses another of the lab's languages (lab.Languages) on
	// the page: then the lab's texts and labctl's words are in that one.
	Catalog *msg.Catalog
	// Situation is whose lab it is (the learner's own, or an invited
	// learner's in a class), which words the retry of a step's setup that
	// fails.
	Situation grading.Situation
	// Assets holds the page: index.html, app.js, app.css at its top
	// (assets.FS).
	Assets fs.FS
	// Fixtures are the lab's files (its fixtures/ directory): the images
	// its texts show, written as fixtures/PATH, are served from them at
	// /lab-files/PATH. Nil: the texts show no images of the lab.
	Fixtures fs.FS
	// Kube, when set, gives the learner's identity for the previews of the
	// lab's Services; without it the page has no previews.
	Kube func(ctx context.Context) (*rest.Config, error)
	// Token is the secret of the printed URL; "" draws 32 random bytes.
	Token string
	// Log receives a line for each terminal and for errors of the API;
	// nil discards them.
	Log io.Writer
}

// Server is `labctl ui`'s HTTP server. Start it with Serve on a listener;
// Close ends it and every shell it opened (the work in /root stays).
type Server struct {
	cfg    Config
	token  string
	ptoken string // the previews' token, in their paths
	md     *markdownRenderer
	kube   *kubeClient

	labMu      sync.RWMutex
	langs      []variant // the lab in each of its languages, cfg's own first
	digest     string    // the lab's digest
	labVersion int       // counts the reloads of the lab (SetLab)
	labProblem string    // what is wrong with the last edit of the lab, or its lint warnings

	ctx    context.Context // ends with Close: the shells' lifetime
	cancel context.CancelFunc

	serveErr chan error // the listener failed (buffered, 1)

	mu      sync.Mutex
	http    *http.Server
	hosts   map[string]bool // the Host header values accepted
	base    string          // http://host:port of the printed URL
	grade   *gradeResult    // the last grade, for /api/report
	closed  bool
	wg      sync.WaitGroup
	terms   *terminals
	gradeMu sync.Mutex // one grade at a time
}

// New checks cfg and returns a server ready to Serve.
func New(cfg Config) (*Server, error) {
	if cfg.Lab == nil || cfg.Store == nil || cfg.Sandbox == nil || cfg.Assets == nil {
		return nil, errors.New("web: Lab, Store, Sandbox and Assets are required")
	}
	if _, err := fs.Stat(cfg.Assets, "index.html"); err != nil {
		return nil, fmt.Errorf("web: the page's assets have no index.html: %w", err)
	}
	if cfg.Catalog == nil {
		cfg.Catalog = msg.New(msg.English)
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	token := cfg.Token
	if token == "" {
		t, err := randomToken()
		if err != nil {
			return nil, fmt.Errorf("drawing the page's token: %w", err)
		}
		token = t
	}
	ptoken, err := randomToken()
	if err != nil {
		return nil, fmt.Errorf("drawing the previews' token: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, token: token, ptoken: ptoken, md: newMarkdownRenderer(cfg.Fixtures != nil), ctx: ctx, cancel: cancel, serveErr: make(chan error, 1)}
	if cfg.Kube != nil {
		s.kube = &kubeClient{config: cfg.Kube}
	}
	s.langs, s.digest = variants(cfg.Lab, cfg.Catalog), cfg.Digest
	s.terms = newTerminals(s)
	return s, nil
}

// variant is the lab in one of its languages, with labctl's words in the
// same language when labctl has them (else English), for the same learner.
type variant struct {
	tag string
	lab *lab.Lab
	cat *msg.Catalog
}

// variants are l in each of its languages: l and cat first, as configured.
func variants(l *lab.Lab, cat *msg.Catalog) []variant {
	out := []variant{{tag: l.Metadata.Language, lab: l, cat: cat}}
	for _, tag := range l.Languages() {
		if tag == l.Metadata.Language {
			continue
		}
		words, ok := msg.Parse(tag)
		if !ok {
			words = msg.English
		}
		out = append(out, variant{tag: tag, lab: l.In(tag), cat: cat.In(words)})
	}
	return out
}

// text is the variant a request asks for with ?lang=TAG (one of the lab's
// languages), else the configured one.
func (s *Server) text(r *http.Request) variant {
	return s.variant(r.URL.Query().Get("lang"))
}

// variant is the lab in language tag, else in the configured language.
func (s *Server) variant(tag string) variant {
	s.labMu.RLock()
	defer s.labMu.RUnlock()
	if tag != "" {
		for _, v := range s.langs {
			if strings.EqualFold(v.tag, tag) {
				return v
			}
		}
	}
	return s.langs[0]
}

// labNow is the lab as configured (or last reloaded) and its digest.
func (s *Server) labNow() (*lab.Lab, string) {
	s.labMu.RLock()
	defer s.labMu.RUnlock()
	return s.langs[0].lab, s.digest
}

// SetLab replaces the lab the page and its terminals show with l, whose
// digest is digest: its file, named file, was edited (labctl ui --watch).
// l must be a lab the environment runs as it is (labwatch.NeedsUp says
// nothing), in the configured language. The page shows warnings (the
// edited lab's lint warnings) and the terminals say it was reloaded; the
// learner's progress is kept by step id.
func (s *Server) SetLab(file string, l *lab.Lab, digest string, warnings []string) {
	s.labMu.Lock()
	s.langs, s.digest = variants(l, s.langs[0].cat), digest
	s.labVersion++
	s.labProblem = strings.Join(warnings, "\n")
	s.labMu.Unlock()
	for t, tag := range s.terms.tags() {
		v := s.variant(tag)
		if err := t.sess.Reloaded(v.lab, v.cat, file, warnings); err != nil {
			s.logf("labctl ui: reloading the lab: %v", err)
		}
	}
}

// SetLabProblem says on the page and in the terminals what is wrong with
// the last edit of the lab's file, named file, which was not taken: the
// page and its terminals keep the lab they show.
func (s *Server) SetLabProblem(file, problem string) {
	s.labMu.Lock()
	s.labProblem = problem
	s.labMu.Unlock()
	for _, t := range s.terms.all() {
		t.sess.NotReloaded(file, problem)
	}
}

// randomToken is 32 random bytes in hex.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Token is the secret the printed URL carries.
func (s *Server) Token() string { return s.token }

// Start begins answering on ln, in the background, until Close: the URL
// is known when it returns.
func (s *Server) Start(ln net.Listener) error {
	hosts, base, err := acceptedHosts(ln.Addr())
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		// net/http's own complaints (a handler's panic with its stack
		// among them) go to the log, not to the learner's terminal.
		ErrorLog: log.New(s.cfg.Log, "labctl ui: ", 0),
	}
	s.mu.Lock()
	if s.closed || s.http != nil {
		s.mu.Unlock()
		return errors.New("web: the server was started or closed already")
	}
	s.http, s.hosts, s.base = srv, hosts, base
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.logf("labctl ui: %v", err)
			s.serveErr <- err
		}
	}()
	return nil
}

// Serve is Start, then waits until Close (nil) or the listener fails.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.Start(ln); err != nil {
		return err
	}
	select {
	case <-s.ctx.Done():
		return nil
	case err := <-s.serveErr:
		return err
	}
}

// Done is closed when the server is closed.
func (s *Server) Done() <-chan struct{} { return s.ctx.Done() }

// URL is the address to open, with the token: http://HOST:PORT/?token=T.
// It is "" before Serve.
func (s *Server) URL() string {
	return s.PathURL("/")
}

// PathURL is the address of path on the server, or "" before Serve.
// Opening it sets the cookie and leads to path: it carries the page's
// token, except a preview's path, which carries its own.
func (s *Server) PathURL(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.base == "" {
		return ""
	}
	if strings.HasPrefix(path, "/preview/") {
		return s.base + path
	}
	return s.base + path + "?token=" + s.token
}

// Close stops the server and closes every shell it opened; the learner's
// work in the sandbox stays.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	srv := s.http
	s.mu.Unlock()
	s.cancel()
	var err error
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = srv.Shutdown(ctx)
		cancel()
	}
	s.terms.closeAll()
	s.wg.Wait()
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil // a download still going is cut
	}
	return err
}

// acceptedHosts are the Host headers a request to addr may carry, and the
// base of the printed URL. On loopback (and on an unspecified address) the
// loopback names are accepted; an unspecified address also accepts the
// machine's own addresses.
func acceptedHosts(addr net.Addr) (map[string]bool, string, error) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return nil, "", fmt.Errorf("web: serving on %s, not a TCP address", addr)
	}
	port := fmt.Sprint(tcp.Port)
	hosts := map[string]bool{}
	add := func(ip net.IP) { hosts[net.JoinHostPort(ip.String(), port)] = true }
	base := "http://" + net.JoinHostPort(tcp.IP.String(), port)
	if tcp.IP.IsLoopback() || tcp.IP.IsUnspecified() {
		hosts["localhost:"+port] = true
		add(net.IPv4(127, 0, 0, 1))
		add(net.IPv6loopback)
	}
	if tcp.IP.IsUnspecified() {
		base = "http://127.0.0.1:" + port
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					add(n.IP)
				}
			}
		}
	} else {
		add(tcp.IP)
	}
	return hosts, base, nil
}

// The cookie that carries the token after the first visit.
const cookieName = "labctl_ui"

// The headers of every answer (docs/ui.md).
const (
	pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
		"connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
	// previewPolicy is a preview's: a sandbox without allow-same-origin
	// gives the proxied app an origin of its own, so its scripts cannot
	// reach the page's API, cookie or terminals, and a document of an
	// opaque origin sends no Referer, whatever referrer policy the app asks
	// for (a <meta name="referrer">, an element's referrerpolicy): its
	// address holds the previews' token. Beyond that, the app's document
	// makes no request beyond this server (default-src, form-action) and
	// opens no window (no allow-popups); in the page, its frame's own
	// navigations are held by the page's frame-src.
	previewPolicy = "sandbox allow-scripts allow-forms allow-modals allow-downloads; " +
		"default-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob:; form-action 'self'; frame-ancestors 'self'"
)

// refusal is what a request without the token is told.
const refusal = "403 forbidden: open the URL that labctl ui printed\n"

// Handler is the server's routes behind its checks: Host, token, Origin,
// and the headers of every answer.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.index)
	mux.HandleFunc("GET /assets/{file}", s.asset)
	mux.HandleFunc("GET /lab-files/{path...}", s.labFile)
	mux.HandleFunc("GET /api/lab", s.apiLab)
	mux.HandleFunc("GET /api/state", s.apiState)
	mux.HandleFunc("POST /api/check", s.apiCheck)
	mux.HandleFunc("POST /api/solution", s.apiSolution)
	mux.HandleFunc("POST /api/grade", s.apiGrade)
	mux.HandleFunc("GET /api/report", s.apiReport)
	mux.HandleFunc("GET /api/previews", s.apiPreviews)
	mux.HandleFunc("/preview/", s.preview)
	mux.HandleFunc("GET /ws/terminal", s.terminal)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", pagePolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if strings.HasPrefix(r.URL.Path, "/api/") {
			h.Set("Cache-Control", "no-store")
		}
		if !s.hostAllowed(r.Host) {
			http.Error(w, "403 forbidden: this server answers only to the address labctl ui printed\n", http.StatusForbidden)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/preview/") {
			s.previewGate(w, r, mux)
			return
		}
		tokenInURL := r.URL.Query().Has("token")
		if !s.authorised(r) {
			http.Error(w, refusal, http.StatusForbidden)
			return
		}
		if (r.Method != http.MethodGet && r.Method != http.MethodHead) || isUpgrade(r) {
			if !s.sameOrigin(r) {
				http.Error(w, "403 forbidden: a request from another site\n", http.StatusForbidden)
				return
			}
		}
		// The printed URL: keep the token in a cookie
		// and take it out of the address bar.
		if tokenInURL && r.Method == http.MethodGet && !isUpgrade(r) && r.URL.Path == "/" {
			http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			u := *r.URL
			q := u.Query()
			q.Del("token")
			u.RawQuery = q.Encode()
			u.Scheme, u.Host = "", ""
			if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
				// Another site led here (the file labctl ui gives the
				// browser is one): the browser would send the
				// SameSite=Strict cookie with no request of this
				// navigation, a redirect's included. The page's own
				// refresh is a navigation of this site.
				refreshTo(w, u.RequestURI())
				return
			}
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// refreshTo answers with a page that leads the browser to path.
func refreshTo(w http.ResponseWriter, path string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	p := html.EscapeString(path)
	fmt.Fprintf(w, `<!doctype html>
<html><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=%s"><title>labctl ui</title></head>
<body><p><a href="%s">Open the lab's page</a></p></body></html>
`, p, p)
}

// previewGate lets a preview's request through when its path holds the
// previews' token: /preview/PTOKEN/NS/SVC:PORT/... The cookie is not
// asked for: a preview's document has an opaque origin (its sandbox), so
// the browser sends its sub-resource requests as cross-site ones, without
// the SameSite=Strict cookie. The previews' token opens nothing else, and
// the page's token opens no preview. A POST or WebSocket must come from
// the page or from a preview: Origin http://<Host>, or null, which is what
// a sandboxed document sends.
func (s *Server) previewGate(w http.ResponseWriter, r *http.Request, next http.Handler) {
	tok, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/preview/"), "/")
	if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.ptoken)) != 1 {
		http.Error(w, "403 forbidden: open the preview's address that labctl ui or labctl open gave\n", http.StatusForbidden)
		return
	}
	if (r.Method != http.MethodGet && r.Method != http.MethodHead) || isUpgrade(r) {
		if r.Header.Get("Origin") != "null" && !s.sameOrigin(r) {
			http.Error(w, "403 forbidden: a request from another site\n", http.StatusForbidden)
			return
		}
	}
	next.ServeHTTP(w, r)
}

// hostAllowed reports whether host is an address this server listens on.
func (s *Server) hostAllowed(host string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[strings.ToLower(host)]
}

// authorised reports whether r carries the token, in the cookie or the
// URL, compared in constant time. Cookies do not keep ports apart: a page
// of another server on this host may set a cookie of the same name, so any
// of them may hold the token.
func (s *Server) authorised(r *http.Request) bool {
	for _, c := range r.CookiesNamed(cookieName) {
		if s.isToken(c.Value) {
			return true
		}
	}
	return s.isToken(r.URL.Query().Get("token"))
}

func (s *Server) isToken(v string) bool {
	return v != "" && subtle.ConstantTimeCompare([]byte(v), []byte(s.token)) == 1
}

// sameOrigin reports whether r comes from the page itself: its Origin is
// http://<Host>.
func (s *Server) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" || u.Path != "" || u.User != nil {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// index serves the page.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	s.serveAsset(w, r, "index.html")
}

// asset serves one of the page's embedded files.
func (s *Server) asset(w http.ResponseWriter, r *http.Request) {
	s.serveAsset(w, r, r.PathValue("file"))
}

func (s *Server) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	if !fs.ValidPath(name) || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	f, err := s.cfg.Assets.Open(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		http.NotFound(w, r)
		return
	}
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		http.Error(w, "the page's file cannot be served", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, st.ModTime(), rs)
}

// maxLabImage bounds an image of the lab the page serves.
const maxLabImage = 4 << 20

// labImageTypes are the only kinds of file /lab-files serves: raster
// images, which run nothing in the page (an SVG could carry script).
var labImageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// labFile serves an image of the lab's fixtures for its texts: a regular
// file reached through no symbolic link, at most maxLabImage, whose bytes
// are a PNG, JPEG, GIF or WebP image, sent as that type and never sniffed.
func (s *Server) labFile(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("path")
	if s.cfg.Fixtures == nil || !fs.ValidPath(name) || name == "." {
		http.NotFound(w, r)
		return
	}
	for p := name; p != "."; p = path.Dir(p) {
		st, err := fs.Lstat(s.cfg.Fixtures, p)
		if err != nil || st.Mode()&fs.ModeSymlink != 0 || (p == name && !st.Mode().IsRegular()) || (p == name && st.Size() > maxLabImage) {
			http.NotFound(w, r)
			return
		}
	}
	f, err := s.cfg.Fixtures.Open(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLabImage+1))
	kind := http.DetectContentType(data)
	if err != nil || len(data) > maxLabImage || !labImageTypes[kind] {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", kind)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(data)
}

// logf writes one line to the server's log.
func (s *Server) logf(format string, args ...any) {
	fmt.Fprintf(s.cfg.Log, format+"\n", args...)
}
