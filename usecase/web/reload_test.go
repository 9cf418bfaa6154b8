package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestSetLab: a reloaded lab (labctl ui --watch) is what the API gives
// from then on, its version counted in /api/state with its warnings; an
// open terminal says it was reloaded and shows the step as the new lab
// words it. An edit that was not taken is said in both places, and the
// lab stays.
func TestSetLab(t *testing.T) {
	ts := startServer(t)
	c := dialTerminal(t, ts, "t1")
	defer c.Close(websocket.StatusNormalClosure, "")
	s := watch(c)
	s.waitFor(t, "Step one")

	edited := testLab()
	edited.Steps[0].Title = "Step one, edited"
	edited.Steps[0].Checks[0].Description = "a exists, edited"
	ts.SetLab("lab.yaml", edited, "sha256:edited", []string{"steps[0]: a warning"})

	var st stateAnswer
	_, body := ts.request(t, http.MethodGet, "/api/state", "")
	decodeStrict(t, body, &st)
	if st.LabVersion != 1 || st.LabProblem != "steps[0]: a warning" || st.Current != "one" {
		t.Errorf("GET /api/state after SetLab: %+v", st)
	}
	var doc labDoc
	_, body = ts.request(t, http.MethodGet, "/api/lab", "")
	decodeStrict(t, body, &doc)
	if doc.Steps[0].Title != "Step one, edited" {
		t.Errorf("GET /api/lab after SetLab: %+v", doc.Steps)
	}
	var ans checkAnswer
	_, body = ts.request(t, http.MethodPost, "/api/check", `{"step":"one"}`)
	decodeStrict(t, body, &ans)
	if ans.Checks[0].Description != "a exists, edited" {
		t.Errorf("POST /api/check after SetLab: %s", body)
	}

	// The notice waits for a prompt: the fake shell echoes one.
	send(t, c, websocket.MessageBinary, "\x1b]133;A\x07")
	s.waitFor(t, "lab.yaml was edited: reloaded, 2 steps.")
	send(t, c, websocket.MessageBinary, "\x1b]7707;labctl;step;n1\x07")
	s.waitFor(t, "Step one, edited")

	ts.SetLabProblem("lab.yaml", "steps[0].checks[0]: no such field")
	_, body = ts.request(t, http.MethodGet, "/api/state", "")
	decodeStrict(t, body, &st)
	if st.LabVersion != 1 || !strings.Contains(st.LabProblem, "no such field") {
		t.Errorf("GET /api/state after SetLabProblem: %+v", st)
	}
	send(t, c, websocket.MessageBinary, "\x1b]133;A\x07")
	s.waitFor(t, "lab.yaml was edited, but the lab stays as it was: steps[0].checks[0]: no such field")
}
