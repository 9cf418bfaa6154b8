package web

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// dialTerminal opens the page's WebSocket to terminal id.
func dialTerminal(t *testing.T, ts *testServer, id string) *websocket.Conn {
	t.Helper()
	return dialTerminalQuery(t, ts, "id="+id)
}

// screen collects what a socket receives.
type screen struct {
	out  chan []byte
	text chan string
}

func watch(c *websocket.Conn) *screen {
	s := &screen{out: make(chan []byte, 1024), text: make(chan string, 16)}
	go func() {
		defer close(s.out)
		for {
			typ, b, err := c.Read(context.Background())
			if err != nil {
				return
			}
			if typ == websocket.MessageText {
				s.text <- string(b)
			} else {
				s.out <- b
			}
		}
	}()
	return s
}

// waitFor reads output until it holds want and returns all of it.
func (s *screen) waitFor(t *testing.T, want string) string {
	t.Helper()
	var got bytes.Buffer
	deadline := time.After(10 * time.Second)
	for !strings.Contains(got.String(), want) {
		select {
		case b, ok := <-s.out:
			if !ok {
				t.Fatalf("the socket closed before %q came; it showed %q", want, got.String())
			}
			got.Write(b)
		case <-deadline:
			t.Fatalf("no %q on the terminal within 10 s; it showed %q", want, got.String())
		}
	}
	return got.String()
}

func send(t *testing.T, c *websocket.Conn, typ websocket.MessageType, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, typ, []byte(data)); err != nil {
		t.Fatal(err)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTerminalSurvivesReconnects(t *testing.T) {
	ts := startServer(t)
	c := dialTerminal(t, ts, "t1")
	scr := watch(c)
	// The session greets with the current step, as labctl shell does.
	scr.waitFor(t, "Step one")
	shells := ts.sandbox.opened()
	if len(shells) != 1 || shells[0].term != TermName {
		t.Fatalf("opened %d shells (TERM %v), want one with TERM=%s", len(shells), shells, TermName)
	}
	sh := shells[0]

	send(t, c, websocket.MessageBinary, "echo hello")
	scr.waitFor(t, "echo hello") // the fake shell echoes keystrokes
	send(t, c, websocket.MessageText, `{"type":"resize","rows":30,"cols":100}`)
	waitUntil(t, "the PTY resized to 30×100", func() bool { return sh.lastSize() == [2]uint{30, 100} })

	// The page drops; the shell goes on writing.
	c.CloseNow()
	time.Sleep(50 * time.Millisecond)
	sh.say("written while away\r\n")
	time.Sleep(50 * time.Millisecond)

	// The same id re-attaches the same shell, and the screen comes back.
	c = dialTerminal(t, ts, "t1")
	scr = watch(c)
	got := scr.waitFor(t, "written while away")
	if !strings.Contains(got, "Step one") || !strings.Contains(got, "echo hello") {
		t.Errorf("the replay after re-attaching lacks the earlier output: %q", got)
	}
	if n := len(ts.sandbox.opened()); n != 1 {
		t.Errorf("re-attaching opened %d shells, want the same one", n)
	}
	send(t, c, websocket.MessageBinary, "more")
	scr.waitFor(t, "more")

	// The shell ends: the page is told its exit code and the id is free.
	send(t, c, websocket.MessageBinary, "exit")
	select {
	case m := <-scr.text:
		var exit struct {
			Type string `json:"type"`
			Code int    `json:"code"`
		}
		if err := json.Unmarshal([]byte(m), &exit); err != nil || exit.Type != "exit" || exit.Code != 3 {
			t.Errorf("the message at the shell's end is %q, want {\"type\":\"exit\",\"code\":3}", m)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit message within 10 s of the shell's end")
	}
	waitUntil(t, "terminal t1 freed", func() bool {
		ts.terms.mu.Lock()
		defer ts.terms.mu.Unlock()
		return ts.terms.m["t1"] == nil
	})
	c = dialTerminal(t, ts, "t1")
	watch(c).waitFor(t, "Step one")
	if n := len(ts.sandbox.opened()); n != 2 {
		t.Errorf("after the shell ended the same id opened %d shells in all, want a second one", n)
	}
}

func TestTerminalsAreApart(t *testing.T) {
	ts := startServer(t)
	a, b := watch(dialTerminal(t, ts, "a")), watch(dialTerminal(t, ts, "b"))
	a.waitFor(t, "Step one")
	b.waitFor(t, "Step one")
	shells := ts.sandbox.opened()
	if len(shells) != 2 {
		t.Fatalf("two ids opened %d shells", len(shells))
	}
	for _, sh := range shells {
		sh.say("from " + sh.term + "\r\n")
	}
	a.waitFor(t, "from "+TermName)
	b.waitFor(t, "from "+TermName)
}

func TestCloseEndsTheShells(t *testing.T) {
	ts := startServer(t)
	c := dialTerminal(t, ts, "z")
	scr := watch(c)
	scr.waitFor(t, "Step one")
	if err := ts.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-scr.text:
		if !strings.Contains(m, `"exit"`) {
			t.Errorf("the message at Close is %q", m)
		}
	case <-time.After(10 * time.Second):
		t.Error("Close sent the page no exit message")
	}
	// The shell was detached: its output ended.
	sh := ts.sandbox.opened()[0]
	if _, err := sh.pw.Write([]byte("x")); err == nil {
		t.Error("the shell is still attached after Close")
	}
}

func TestRing(t *testing.T) {
	r := ring{size: 8}
	r.write([]byte("abc"))
	r.write([]byte("defgh"))
	if got := string(r.bytes()); got != "abcdefgh" {
		t.Errorf("ring %q, want abcdefgh", got)
	}
	r.write([]byte("ij"))
	if got := string(r.bytes()); got != "cdefghij" {
		t.Errorf("ring %q, want cdefghij", got)
	}
	r.write([]byte("0123456789"))
	if got := string(r.bytes()); got != "23456789" {
		t.Errorf("ring %q, want 23456789", got)
	}
}
