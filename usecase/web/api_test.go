package web

import (
	"encoding/json"
	"github.com/labctl/labctl/grading"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

// decodeStrict parses body into v, refusing fields v does not name.
func decodeStrict(t *testing.T, body string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("not the documented JSON: %v\n%s", err, body)
	}
}

func TestAPILab(t *testing.T) {
	ts := startServer(t)
	resp, body := ts.request(t, http.MethodGet, "/api/lab", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/lab: %d %s", resp.StatusCode, body)
	}
	var doc struct {
		Name, Title, Goal, Why, Lang, Text string
		Languages                          []struct{ Tag, Name string }
		Steps                              []struct {
			ID, Title, Instructions, Why string
			Hints                        []string
			HasSolution                  bool
		}
	}
	decodeStrict(t, body, &doc)
	if doc.Name != "web-test" || doc.Title != "Web test" || doc.Lang != "en" || doc.Goal != "<p>Learn <strong>this</strong>.</p>" ||
		doc.Why != "<p>It <em>matters</em>.</p>" || doc.Text != "en" || len(doc.Languages) != 1 || doc.Languages[0].Name != "English" {
		t.Errorf("lab: %+v", doc)
	}
	if len(doc.Steps) != 2 || doc.Steps[0].Instructions != "<p>Make <code>a</code>.</p>" || doc.Steps[0].Why != "<p>Because.</p>" ||
		!reflect.DeepEqual(doc.Steps[0].Hints, []string{"<p>Try <em>a</em>.</p>", "<p>Really.</p>"}) {
		t.Errorf("steps: %+v", doc.Steps)
	}
	if doc.Steps[1].Why != "" || doc.Steps[1].Hints == nil {
		t.Errorf("step two: why %q, hints %v; want \"\" and []", doc.Steps[1].Why, doc.Steps[1].Hints)
	}
}

// checkAnswer is POST /api/check's answer as the contract has it.
type checkAnswer struct {
	Step      string `json:"step"`
	Passed    bool   `json:"passed"`
	NotPassed int    `json:"notPassed"`
	Required  int    `json:"required"`
	Checks    []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Status      string `json:"status"`
		Mark        string `json:"mark"`
		Message     string `json:"message"`
		Optional    bool   `json:"optional"`
		Mistake     *struct {
			Name    string `json:"name"`
			Explain string `json:"explain"`
		} `json:"mistake"`
	} `json:"checks"`
}

type stateAnswer struct {
	Current    string   `json:"current"`
	Passed     []string `json:"passed"`
	Done       bool     `json:"done"`
	LabVersion int      `json:"labVersion"`
	LabProblem string   `json:"labProblem"`
}

func TestAPICheckAndState(t *testing.T) {
	ts := startServer(t)
	var st stateAnswer
	_, body := ts.request(t, http.MethodGet, "/api/state", "")
	decodeStrict(t, body, &st)
	if st.Current != "one" || len(st.Passed) != 0 || st.Passed == nil || st.Done {
		t.Errorf("state before any check: %+v", st)
	}

	// b made, a not: the step's known mistake.
	ts.sandbox.pass("has-b")
	resp, body := ts.request(t, http.MethodPost, "/api/check", `{"step":""}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/check: %d %s", resp.StatusCode, body)
	}
	var c checkAnswer
	decodeStrict(t, body, &c)
	if c.Step != "one" || c.Passed || len(c.Checks) != 2 {
		t.Fatalf("check of the current step: %+v", c)
	}
	a, b := c.Checks[0], c.Checks[1]
	if a.Name != "has-a" || a.Description != "a exists" || a.Status != "fail" || a.Mark != "✗" || a.Message != "expected has-a, found <b>nothing</b>" {
		t.Errorf("first check: %+v", a)
	}
	if c.NotPassed != 1 || c.Required != 2 {
		t.Errorf("%d of %d required checks do not pass, want 1 of 2", c.NotPassed, c.Required)
	}
	if a.Mistake == nil || a.Mistake.Name != "only-b" || a.Mistake.Explain != "You made b, not a." {
		t.Errorf("the failing check's mistake: %+v, want only-b", a.Mistake)
	}
	if b.Status != "pass" || b.Mark != "✓" || b.Message != "" || b.Mistake != nil {
		t.Errorf("second check: %+v", b)
	}

	// Step two can be checked while one is current; it does not pass.
	_, body = ts.request(t, http.MethodPost, "/api/check", `{"step":"two"}`)
	decodeStrict(t, body, &c)
	if c.Step != "two" || c.Passed || len(c.Checks) != 1 || c.Checks[0].Status != "fail" || c.Checks[0].Mistake != nil {
		t.Errorf("check of step two: %+v", c)
	}

	ts.sandbox.pass("has-a")
	_, body = ts.request(t, http.MethodPost, "/api/check", `{"step":"one"}`)
	decodeStrict(t, body, &c)
	if !c.Passed || c.Step != "one" {
		t.Errorf("check once a and b exist: %+v", c)
	}
	_, body = ts.request(t, http.MethodGet, "/api/state", "")
	decodeStrict(t, body, &st)
	if st.Current != "two" || !reflect.DeepEqual(st.Passed, []string{"one"}) || st.Done {
		t.Errorf("state after step one passed: %+v", st)
	}
	// The progress is the store's, the one labctl status reads.
	p, err := ts.store.Load(ts.lab.Metadata.Name)
	if err != nil || !p.IsPassed("one") {
		t.Errorf("the progress file does not have step one passed (%v)", err)
	}

	for _, c := range []struct{ body, want string }{
		{`{"step":"nine"}`, "nine"},
		{`not json`, `the body must be`},
	} {
		resp, body := ts.request(t, http.MethodPost, "/api/check", c.body)
		if resp.StatusCode < 400 || resp.StatusCode >= 500 || !strings.Contains(body, c.want) {
			t.Errorf("POST /api/check %s: %d %s", c.body, resp.StatusCode, body)
		}
	}

	ts.sandbox.pass("has-c")
	ts.request(t, http.MethodPost, "/api/check", ``)
	_, body = ts.request(t, http.MethodGet, "/api/state", "")
	decodeStrict(t, body, &st)
	if st.Current != "" || !st.Done || len(st.Passed) != 2 {
		t.Errorf("state with every step passed: %+v", st)
	}
	_, body = ts.request(t, http.MethodPost, "/api/check", `{}`)
	decodeStrict(t, body, &c)
	if !c.Passed || len(c.Checks) != 0 {
		t.Errorf("check with every step done: %+v", c)
	}
}

// An invited learner whose next step's setup fails is told to ask their
// instructor, not to run a reset they cannot run.
func TestAPICheckOfAnInvitedLearnerWithAFailingSetup(t *testing.T) {
	ts := startServer(t, func(c *Config) {
		c.Lab.Steps[1].Setup = "false"
		c.Situation = grading.Invited("ada")
	})
	ts.sandbox.code = 3
	ts.sandbox.pass("has-a", "has-b")
	resp, body := ts.request(t, http.MethodPost, "/api/check", `{"step":""}`)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "ask your instructor to run `labctl class reset ada --to two`") ||
		strings.Contains(body, "`labctl reset") {
		t.Errorf("POST /api/check: %d %s", resp.StatusCode, body)
	}
}

func TestAPIGradeAndReport(t *testing.T) {
	ts := startServer(t)
	if resp, body := ts.request(t, http.MethodGet, "/api/report?format=json", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a report before a grade: %d %s, want 404", resp.StatusCode, body)
	}
	ts.sandbox.pass("has-a", "has-b")
	resp, body := ts.request(t, http.MethodPost, "/api/grade", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/grade: %d %s", resp.StatusCode, body)
	}
	var g struct {
		SchemaVersion int  `json:"schemaVersion"`
		Score         int  `json:"score"`
		MaxScore      int  `json:"maxScore"`
		Passed        bool `json:"passed"`
		Steps         []struct {
			ID string `json:"id"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(body), &g); err != nil {
		t.Fatal(err)
	}
	if g.SchemaVersion != 1 || g.Score != 2 || g.MaxScore != 3 || g.Passed || len(g.Steps) != 2 {
		t.Errorf("grade: %+v", g)
	}
	resp, body = ts.request(t, http.MethodGet, "/api/report?format=json", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Disposition") != `attachment; filename="labctl-grade.json"` || !strings.Contains(body, `"schemaVersion": 1`) {
		t.Errorf("JSON report: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Disposition"), body)
	}
	resp, body = ts.request(t, http.MethodGet, "/api/report?format=junit", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Disposition") != `attachment; filename="labctl-grade.xml"` || !strings.Contains(body, "<testsuites") {
		t.Errorf("JUnit report: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Disposition"), body)
	}
	if resp, _ := ts.request(t, http.MethodGet, "/api/report?format=pdf", ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a report as pdf: %d, want 400", resp.StatusCode)
	}
	p, err := ts.store.Load(ts.lab.Metadata.Name)
	if err != nil || len(p.Grades) != 1 {
		t.Errorf("the grade is not in the learner's history (%v)", err)
	}
}

// TestAPISolution: a step's solution is not in GET /api/lab, only that it
// has one; POST /api/solution gives it and records, on the host, when the
// learner first asked; the grade says so.
func TestAPISolution(t *testing.T) {
	ts := startServer(t)
	_, body := ts.request(t, http.MethodGet, "/api/lab", "")
	if strings.Contains(body, "touch a") || !strings.Contains(body, `"hasSolution":true`) || !strings.Contains(body, `"hasSolution":false`) {
		t.Errorf("GET /api/lab must say which steps have a solution, without it:\n%s", body)
	}
	for _, c := range []struct {
		body string
		code int
	}{
		{`{"step":"two"}`, http.StatusNotFound}, {`{"step":"nine"}`, http.StatusNotFound}, {`{}`, http.StatusBadRequest}, {`x`, http.StatusBadRequest},
	} {
		if resp, body := ts.request(t, http.MethodPost, "/api/solution", c.body); resp.StatusCode != c.code {
			t.Errorf("POST /api/solution %s: %d %s, want %d", c.body, resp.StatusCode, body, c.code)
		}
	}
	if p, _ := ts.store.Load(ts.lab.Metadata.Name); len(p.SolutionShown) != 0 {
		t.Fatalf("refused requests recorded %v", p.SolutionShown)
	}
	resp, body := ts.request(t, http.MethodPost, "/api/solution", `{"step":"one"}`)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"html":"\u003cp\u003eRun \u003ccode\u003etouch a\u003c/code\u003e.\u003c/p\u003e"`) {
		t.Fatalf("POST /api/solution one: %d %s", resp.StatusCode, body)
	}
	p, err := ts.store.Load(ts.lab.Metadata.Name)
	first, ok := p.SolutionShown["one"]
	if err != nil || !ok {
		t.Fatalf("the solution was not recorded as shown: %v %v", p.SolutionShown, err)
	}
	time.Sleep(10 * time.Millisecond)
	ts.request(t, http.MethodPost, "/api/solution", `{"step":"one"}`)
	if p, _ := ts.store.Load(ts.lab.Metadata.Name); !p.SolutionShown["one"].Equal(first) {
		t.Errorf("asking again moved the time the solution was first shown: %v, then %v", first, p.SolutionShown["one"])
	}
	_, body = ts.request(t, http.MethodPost, "/api/grade", "")
	var g struct {
		Steps []struct {
			ID              string     `json:"id"`
			SolutionShownAt *time.Time `json:"solutionShownAt"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(body), &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Steps) != 2 || g.Steps[0].SolutionShownAt == nil || !g.Steps[0].SolutionShownAt.Equal(first) || g.Steps[1].SolutionShownAt != nil {
		t.Errorf("the grade's steps: %+v; want step one's solution shown at %v, and not two's", g.Steps, first)
	}
}
