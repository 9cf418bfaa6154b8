package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/labctl/labctl/usecase/shell"
)

// TermName is the TERM of a page's shell: the page is xterm.js.
const TermName = "xterm-256color"

// RingSize is how much of a terminal's recent output a re-attached page
// gets back.
const RingSize = 64 << 10

// terminalID is the form of a terminal's id, chosen by the page.
var terminalID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]{1,16}$`) })

// maxTerminals bounds the shells one server keeps open.
const maxTerminals = 16

// terminals are the server's shells by id.
type terminals struct {
	s  *Server
	mu sync.Mutex
	m  map[string]*pageTerminal
}

func newTerminals(s *Server) *terminals {
	return &terminals{s: s, m: map[string]*pageTerminal{}}
}

// terminal upgrades to a WebSocket and attaches it to the shell id,
// starting the shell when there is none.
func (s *Server) terminal(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	if !terminalID().MatchString(id) {
		http.Error(w, "400 bad request: id must be 1 to 16 of a-z and 0-9\n", http.StatusBadRequest)
		return
	}
	rows, cols := sizeParam(r, "rows", 24), sizeParam(r, "cols", 80)
	t, err := s.terms.get(id, s.text(r), rows, cols)
	if err != nil {
		code := http.StatusBadGateway
		if errors.Is(err, errTooMany) {
			code = http.StatusTooManyRequests
		}
		s.logf("labctl ui: terminal %s: %v", id, err)
		http.Error(w, err.Error()+"\n", code)
		return
	}
	// Host and Origin were checked before: the page's own.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return
	}
	c.SetReadLimit(maxBody)
	t.attach(c)
}

func sizeParam(r *http.Request, name string, def uint) uint {
	n, err := strconv.ParseUint(r.URL.Query().Get(name), 10, 16)
	if err != nil || !saneSize(uint(n)) {
		return def
	}
	return uint(n)
}

// saneSize reports whether n rows or columns is a terminal's size: a PTY
// is never given 0 or more than 999.
func saneSize(n uint) bool { return n > 0 && n < 1000 }

var errTooMany = errors.New("too many terminals: close one first")

// get returns the terminal id, starting its shell if it has none. The
// terminal speaks v's language from now on; a shell started before keeps
// the LABCTL_LANG it was started with.
func (ts *terminals) get(id string, v variant, rows, cols uint) (*pageTerminal, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.m[id]; ok {
		if err := t.sess.SetLab(v.lab, v.cat); err != nil {
			return nil, err
		}
		t.tag = v.tag
		return t, nil
	}
	if ts.s.ctx.Err() != nil {
		return nil, errors.New("labctl ui is stopping")
	}
	if len(ts.m) >= maxTerminals {
		return nil, errTooMany
	}
	t, err := ts.start(id, v, rows, cols)
	if err != nil {
		return nil, err
	}
	ts.m[id] = t
	return t, nil
}

// start opens a shell and runs its session until the shell ends or the
// server closes; then the id is free again.
func (ts *terminals) start(id string, v variant, rows, cols uint) (*pageTerminal, error) {
	s := ts.s
	sh, err := s.cfg.Sandbox.OpenShell(s.ctx, TermName, v.cat.Lang, rows, cols)
	if err != nil {
		return nil, err
	}
	t := newPageTerminal(rows, cols)
	sess, err := shell.New(shell.Config{
		Lab:      v.lab,
		Shell:    sh,
		Terminal: t,
		Check:    s.cfg.Sandbox.RunChecks,
		Probe:    s.cfg.Sandbox,
		Progress: shell.CurrentProgress(func() shell.Progress { return s.progress() }),
		Catalog:  v.cat,
		Color:    true,
	})
	if err != nil {
		sh.Close()
		return nil, err
	}
	t.sess, t.tag = sess, v.tag
	s.logf("labctl ui: terminal %s opened", id)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := sess.Run(s.ctx)
		sh.Close()
		code := -1
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if c, cerr := sh.ExitCode(ctx); cerr == nil {
				code = c
			}
			cancel()
		} else if !errors.Is(err, context.Canceled) {
			s.logf("labctl ui: terminal %s: %v", id, err)
		}
		ts.mu.Lock()
		if ts.m[id] == t {
			delete(ts.m, id)
		}
		ts.mu.Unlock()
		t.exit(code)
		s.logf("labctl ui: terminal %s ended (exit %d)", id, code)
	}()
	return t, nil
}

// all are the open terminals.
func (ts *terminals) all() []*pageTerminal {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := make([]*pageTerminal, 0, len(ts.m))
	for _, t := range ts.m {
		out = append(out, t)
	}
	return out
}

// tags are the open terminals with the language each speaks.
func (ts *terminals) tags() map[*pageTerminal]string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := make(map[*pageTerminal]string, len(ts.m))
	for _, t := range ts.m {
		out[t] = t.tag
	}
	return out
}

// closeAll ends every terminal's socket; the sessions end with the
// server's context.
func (ts *terminals) closeAll() {
	for _, t := range ts.all() {
		t.exit(-1)
	}
}

// pageTerminal is a shell session's terminal that outlives the page's
// WebSockets: the output goes into a ring of the last RingSize bytes and
// to the socket attached, if any; keystrokes come from whichever socket is
// attached; the size follows the page's resize messages. A socket that
// attaches gets the ring first, so its screen is whole again. It is a
// shell.Terminal.
type pageTerminal struct {
	sess *shell.Session // set once, before the terminal is shared
	tag  string         // the language it speaks; under terminals.mu

	mu    sync.Mutex
	ring  ring
	peer  *peer
	rows  uint
	cols  uint
	sized chan struct{} // a new size (buffered, 1)
	ended bool
	code  int

	keys chan []byte   // from the sockets
	done chan struct{} // closed when the shell ended
	left []byte        // keystrokes Read has not returned yet
}

func newPageTerminal(rows, cols uint) *pageTerminal {
	return &pageTerminal{
		ring:  ring{size: RingSize},
		rows:  rows,
		cols:  cols,
		sized: make(chan struct{}, 1),
		keys:  make(chan []byte, 64),
		done:  make(chan struct{}),
	}
}

// peer is one attached socket and the queue of frames it sends.
type peer struct {
	conn   *websocket.Conn
	out    chan frame
	cancel context.CancelFunc
}

type frame struct {
	typ  websocket.MessageType
	data []byte
}

// peerQueue is how many frames may wait for a slow socket before it is
// dropped (the page re-attaches and gets the ring).
const peerQueue = 1024

// attach makes c the terminal's socket, replacing any other, and serves it
// until it closes.
func (t *pageTerminal) attach(c *websocket.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &peer{conn: c, out: make(chan frame, peerQueue), cancel: cancel}
	t.mu.Lock()
	if old := t.peer; old != nil {
		old.cancel()
		close(old.out)
	}
	t.peer = p
	if b := t.ring.bytes(); len(b) > 0 {
		p.out <- frame{websocket.MessageBinary, b}
	}
	if t.ended {
		p.out <- exitFrame(t.code)
		close(p.out)
		t.peer = nil
	}
	t.mu.Unlock()

	go t.readFrom(ctx, p)
	t.writeTo(ctx, p)
}

// writeTo sends p's queue until it is closed or the socket fails.
func (t *pageTerminal) writeTo(ctx context.Context, p *peer) {
	defer p.cancel()
	for f := range p.out {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := p.conn.Write(wctx, f.typ, f.data)
		cancel()
		if err != nil {
			p.conn.CloseNow()
			t.detach(p)
			for range p.out {
			}
			return
		}
	}
	p.conn.Close(websocket.StatusNormalClosure, "")
}

// readFrom passes p's keystrokes and resizes to the terminal until the
// socket closes.
func (t *pageTerminal) readFrom(ctx context.Context, p *peer) {
	defer t.detach(p)
	for {
		typ, data, err := p.conn.Read(ctx)
		if err != nil {
			return
		}
		switch typ {
		case websocket.MessageBinary:
			select {
			case t.keys <- data:
			case <-t.done:
				return
			case <-ctx.Done():
				return
			}
		case websocket.MessageText:
			var m struct {
				Type string `json:"type"`
				Rows uint   `json:"rows"`
				Cols uint   `json:"cols"`
			}
			if json.Unmarshal(data, &m) == nil && m.Type == "resize" && saneSize(m.Rows) && saneSize(m.Cols) {
				t.resize(m.Rows, m.Cols)
			}
		}
	}
}

// detach forgets p if it is still the terminal's socket.
func (t *pageTerminal) detach(p *peer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.peer == p {
		t.peer = nil
		p.cancel()
		close(p.out)
	}
}

func (t *pageTerminal) resize(rows, cols uint) {
	t.mu.Lock()
	t.rows, t.cols = rows, cols
	t.mu.Unlock()
	select {
	case t.sized <- struct{}{}:
	default:
	}
}

// exit ends the terminal: the socket gets {"type":"exit","code":N} and is
// closed; reads give io.EOF.
func (t *pageTerminal) exit(code int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	t.ended, t.code = true, code
	close(t.done)
	if p := t.peer; p != nil {
		t.peer = nil
		select {
		case p.out <- exitFrame(code):
		default:
		}
		close(p.out)
	}
}

func exitFrame(code int) frame {
	b, _ := json.Marshal(struct {
		Type string `json:"type"`
		Code int    `json:"code"`
	}{"exit", code})
	return frame{websocket.MessageText, b}
}

// Write shows p: into the ring and to the socket attached.
func (t *pageTerminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ring.write(p)
	if pe := t.peer; pe != nil {
		select {
		case pe.out <- frame{websocket.MessageBinary, append([]byte(nil), p...)}:
		default:
			// Too slow a socket: drop it; the page re-attaches and
			// gets the ring.
			t.peer = nil
			pe.cancel()
			close(pe.out)
		}
	}
	return len(p), nil
}

// Read gives the keystrokes of the socket attached; io.EOF once the shell
// ended.
func (t *pageTerminal) Read(p []byte) (int, error) {
	if len(t.left) == 0 {
		select {
		case k := <-t.keys:
			t.left = k
		case <-t.done:
			return 0, io.EOF
		}
	}
	n := copy(p, t.left)
	t.left = t.left[n:]
	return n, nil
}

// Restore does nothing: the page's terminal has no modes to give back.
func (t *pageTerminal) Restore() {}

// WatchSize calls resized with the size now and after every resize
// message, until ctx ends.
func (t *pageTerminal) WatchSize(ctx context.Context, resized func(rows, cols uint)) {
	for {
		t.mu.Lock()
		rows, cols := t.rows, t.cols
		t.mu.Unlock()
		resized(rows, cols)
		select {
		case <-ctx.Done():
			return
		case <-t.done:
			return
		case <-t.sized:
		}
	}
}

// ring keeps the last size bytes written.
type ring struct {
	size int
	buf  []byte
}

func (r *ring) write(p []byte) {
	if len(p) >= r.size {
		r.buf = append(r.buf[:0], p[len(p)-r.size:]...)
		return
	}
	if over := len(r.buf) + len(p) - r.size; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	r.buf = append(r.buf, p...)
}

// bytes is a copy of what the ring holds.
func (r *ring) bytes() []byte { return append([]byte(nil), r.buf...) }
