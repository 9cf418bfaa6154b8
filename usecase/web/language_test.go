package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// withJapanese gives the test lab a Japanese translation of step one.
func withJapanese(c *Config) {
	l := *c.Lab
	l.Translations = map[string]lab.Translation{"ja": {
		Title: "ウェブのテスト",
		Steps: map[string]lab.StepText{"one": {
			Title: "一つ目", Instructions: "`a` を作る。", Solution: "`touch a` を実行する。",
			Checks: map[string]string{"has-a": "a がある"}, Mistakes: map[string]string{"only-b": "a ではなく b を作った。"},
		}},
	}}
	c.Lab = &l
}

// TestAPIInTheChosenLanguage: ?lang= picks one of the lab's languages for
// the texts, the check results and labctl's words; an unknown one, or
// none, gives the configured language.
func TestAPIInTheChosenLanguage(t *testing.T) {
	ts := startServer(t, withJapanese)
	var doc labDoc
	_, body := ts.request(t, http.MethodGet, "/api/lab", "")
	decodeStrict(t, body, &doc)
	if doc.Text != "en" || doc.Title != "Web test" || len(doc.Languages) != 2 ||
		doc.Languages[0] != (languageDoc{"en", "English"}) || doc.Languages[1] != (languageDoc{"ja", "日本語"}) {
		t.Errorf("GET /api/lab: text %q, title %q, languages %+v", doc.Text, doc.Title, doc.Languages)
	}
	_, body = ts.request(t, http.MethodGet, "/api/lab?lang=ja", "")
	decodeStrict(t, body, &doc)
	if doc.Text != "ja" || doc.Lang != "ja" || doc.Title != "ウェブのテスト" || doc.Steps[0].Title != "一つ目" || doc.Steps[1].Title != "Step two" {
		t.Errorf("GET /api/lab?lang=ja: %+v", doc)
	}
	for _, q := range []string{"?lang=fr", "?lang=", "?lang=ja%00"} {
		_, body = ts.request(t, http.MethodGet, "/api/lab"+q, "")
		decodeStrict(t, body, &doc)
		if doc.Text != "en" || doc.Title != "Web test" {
			t.Errorf("GET /api/lab%s: text %q, title %q; want the configured English", q, doc.Text, doc.Title)
		}
	}

	ts.sandbox.pass("has-b")
	var ans checkAnswer
	_, body = ts.request(t, http.MethodPost, "/api/check?lang=ja", `{"step":"one"}`)
	decodeStrict(t, body, &ans)
	if len(ans.Checks) != 2 || ans.Checks[0].Description != "a がある" || ans.Checks[0].Mistake == nil ||
		ans.Checks[0].Mistake.Explain != "a ではなく b を作った。" {
		t.Errorf("POST /api/check?lang=ja: %s", body)
	}
	if langs := ts.sandbox.roundLangs(); len(langs) != 1 || langs[0] != msg.Japanese {
		t.Errorf("the check's rounds asked for messages in %q, want ja", langs)
	}
	_, body = ts.request(t, http.MethodPost, "/api/solution?lang=ja", `{"step":"one"}`)
	if !strings.Contains(body, "実行する") {
		t.Errorf("POST /api/solution?lang=ja: %s", body)
	}
	_, body = ts.request(t, http.MethodPost, "/api/check", `{"step":"one"}`)
	decodeStrict(t, body, &ans)
	if ans.Checks[0].Description != "a exists" || ans.Checks[0].Mistake.Explain != "You made b, not a." {
		t.Errorf("POST /api/check without lang: %s", body)
	}
}

// TestTerminalInTheChosenLanguage: a terminal opened with ?lang=ja starts
// its shell with LABCTL_LANG=ja and shows the step in Japanese; the same
// terminal re-attached with ?lang=en speaks English from then on.
func TestTerminalInTheChosenLanguage(t *testing.T) {
	ts := startServer(t, withJapanese)
	c := dialTerminalQuery(t, ts, "id=t1&lang=ja")
	s := watch(c)
	s.waitFor(t, "一つ目")
	shells := ts.sandbox.opened()
	if len(shells) != 1 || shells[0].lang != msg.Japanese {
		t.Fatalf("opened %d shells, the first with LABCTL_LANG %q; want one, ja", len(shells), shells[0].lang)
	}
	c.Close(websocket.StatusNormalClosure, "")

	c = dialTerminalQuery(t, ts, "id=t1&lang=en")
	defer c.Close(websocket.StatusNormalClosure, "")
	s = watch(c)
	// The fake shell echoes what is typed: the request `lab step` sends.
	send(t, c, websocket.MessageBinary, "\x1b]7707;labctl;step;n1\x07")
	s.waitFor(t, "Step one")
	if got := len(ts.sandbox.opened()); got != 1 {
		t.Errorf("re-attaching opened another shell (%d in all)", got)
	}
}

// dialTerminalQuery opens the page's WebSocket with the query q.
func dialTerminalQuery(t *testing.T, ts *testServer, q string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+ts.host+"/ws/terminal?"+q, &websocket.DialOptions{
		HTTPHeader: http.Header{"Cookie": {cookieName + "=" + ts.Token()}, "Origin": {ts.base}},
	})
	if err != nil {
		t.Fatalf("opening terminal %s: %v", q, err)
	}
	return c
}

func (f *fakeSandbox) roundLangs() []msg.Lang {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]msg.Lang(nil), f.langs...)
}
