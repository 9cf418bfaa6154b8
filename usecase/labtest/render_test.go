package labtest

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/report"
)

func sampleReport(passed bool) *Report {
	r := &Report{Lab: "demo-test", Graded: true, Score: 3, MaxScore: 4, Resets: 3, SandboxesKept: 1, StepStartsRestored: 1,
		ResetTime: 3 * time.Second, Duration: 9 * time.Second,
		ResetParts: map[string]time.Duration{"sandbox": 2 * time.Second, "backup": time.Second}}
	r.Phases = []Phase{
		{Kind: Before, Step: "files", Passed: true, Duration: 200 * time.Millisecond,
			Checks: []checks.Result{{Name: "has-x", Status: checks.Fail, Message: "missing", Points: 1}}},
		{Kind: Mistake, Step: "files", Script: "mistake only-x", Passed: passed, Duration: time.Second},
		{Kind: Grade, Passed: passed, Duration: time.Second},
	}
	if !passed {
		r.Phases[1].Failures = []Failure{{Step: "files", Script: "mistake only-x", Check: "has-y",
			Message: "passed, so the mistake is not caught"}}
		r.Phases[2].Failures = []Failure{{Step: "files", Check: "has-z", Message: "failed: expected\nsomething else"}}
	}
	r.Passed = passed
	return r
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sampleReport(false), report.Text); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"✗ files  mistake only-x is caught",
		"step files: mistake only-x: check has-y: passed, so the mistake is not caught",
		"step files: check has-z: failed: expected\n      something else\n",
		"Grade: 3/4 points", "Resets: 3, 3.0s in all (sandbox 2.0s, backup 1.0s); 1 kept the sandbox, restoring /root in place; 1 went back to the step's start as it was kept, replaying no earlier step", "FAIL: lab demo-test: 2 failures",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteText(&b, sampleReport(true)); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "PASS: lab demo-test") || strings.Contains(out, "✗") || strings.Contains(out, "FAIL") {
		t.Errorf("a passing report reads:\n%s", out)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sampleReport(false), report.JSON); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Lab        string           `json:"lab"`
		Passed     bool             `json:"passed"`
		Score      int              `json:"score"`
		ResetMs    int64            `json:"resetMs"`
		Parts      map[string]int64 `json:"resetPartsMs"`
		DurationMs int64            `json:"durationMs"`
		Phases     []struct {
			Kind       string    `json:"kind"`
			Passed     bool      `json:"passed"`
			DurationMs int64     `json:"durationMs"`
			Failures   []Failure `json:"failures"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	if got.Lab != "demo-test" || got.Passed || got.Score != 3 || got.ResetMs != 3000 || got.Parts["sandbox"] != 2000 || got.DurationMs != 9000 {
		t.Errorf("report fields: %+v", got)
	}
	if len(got.Phases) != 3 || got.Phases[1].Kind != "mistake" || got.Phases[1].Passed || got.Phases[1].DurationMs != 1000 ||
		len(got.Phases[1].Failures) != 1 || got.Phases[1].Failures[0].Check != "has-y" {
		t.Errorf("phases: %+v", got.Phases)
	}
}

func TestWriteJUnit(t *testing.T) {
	for _, passed := range []bool{false, true} {
		var b bytes.Buffer
		if err := Write(&b, sampleReport(passed), report.JUnit); err != nil {
			t.Fatal(err)
		}
		var got report.JUnitSuites
		if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("%v:\n%s", err, b.String())
		}
		wantFailures := 2
		if passed {
			wantFailures = 0
		}
		if got.Tests != 3 || got.Failures != wantFailures || len(got.Suites) != 2 {
			t.Errorf("passed=%t: %d tests, %d failures, %d suites:\n%s", passed, got.Tests, got.Failures, len(got.Suites), b.String())
			continue
		}
		if s := got.Suites[0]; s.Name != "files" || s.Tests != 2 || s.Time != "1.200" {
			t.Errorf("suite files: %+v", s)
		}
		if !passed {
			f := got.Suites[0].Cases[1].Failure
			if f == nil || !strings.Contains(f.Message, "check has-y") {
				t.Errorf("mistake case failure: %+v", f)
			}
		}
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	if err := Write(&bytes.Buffer{}, sampleReport(true), "yaml"); err == nil || !strings.Contains(err.Error(), "text, json or junit") {
		t.Errorf("unknown format gave %v", err)
	}
}
