package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func sampleLab() *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "gitops-drift", Title: "GitOps drift", Version: "1.2.0", Language: "ja"},
		Steps: []lab.Step{
			{ID: "init", Title: "リポジトリを初期化する"},
			{ID: "apply", Title: "Apply the manifests"},
			{ID: "sync", Title: "Write sync.sh"},
		},
	}
}

func sampleResults() map[string][]checks.Result {
	return map[string][]checks.Result{
		"init": {
			{Name: "repo-exists", Description: "/root/gitops/repo はgitリポジトリ", Status: checks.Pass, Duration: 3 * time.Millisecond, Points: 1},
			{Name: "has-commit", Description: "コミットが1つ以上", Status: checks.Pass, Duration: 12 * time.Millisecond, Points: 2},
		},
		"apply": {
			{Name: "deployment", Description: "Deployment web exists", Status: checks.Fail, Message: "expected apps/v1 Deployment gitops-lab/web, found none", Duration: 40 * time.Millisecond, Points: 2},
			{Name: "cluster-reachable", Status: checks.Error, Message: "the cluster did not answer:\ndial tcp 10.0.0.2:6443: connection refused", Duration: 10 * time.Second, Points: 1},
			{Name: "apply-log", Description: "apply output saved", Status: checks.Fail, Message: `expected /root/gitops/out/apply.txt to contain "configured" & <created>`, Duration: time.Millisecond, Points: 1, Optional: true},
		},
		"sync": {
			{Name: "script", Status: checks.Pass, Points: 3, Optional: true},
		},
	}
}

func sampleReport() *Report {
	return Build(sampleLab(), "sha256:0123456789abcdef", time.Date(2026, 11, 30, 7, 1, 2, 0, time.FixedZone("JST", 9*3600)), sampleResults())
}

func TestBuild(t *testing.T) {
	r := sampleReport()
	if r.Score != 6 || r.MaxScore != 10 {
		t.Errorf("score %d/%d, want 6/10", r.Score, r.MaxScore)
	}
	if r.Passed {
		t.Errorf("a report with a failed required check must not pass")
	}
	if !r.Steps[0].Passed || r.Steps[1].Passed || !r.Steps[2].Passed {
		t.Errorf("step verdicts %v %v %v, want true false true", r.Steps[0].Passed, r.Steps[1].Passed, r.Steps[2].Passed)
	}
	if r.GradedAt.Location() != time.UTC {
		t.Errorf("gradedAt must be UTC")
	}
	sum := r.Summary()
	if sum.Failed != 1 || sum.Errored != 1 || sum.Required != 4 || sum.Passed() {
		t.Errorf("summary %+v", sum)
	}

	// Every required check passing passes, whatever optional checks do.
	res := sampleResults()
	res["apply"][0].Status = checks.Pass
	res["apply"][1].Status = checks.Pass
	r = Build(sampleLab(), "", time.Now(), res)
	if !r.Passed || r.Score != 9 {
		t.Errorf("all required pass: passed %v score %d, want true 9", r.Passed, r.Score)
	}
	// A step with no results is reported, and empty.
	r = Build(sampleLab(), "", time.Now(), map[string][]checks.Result{})
	if len(r.Steps) != 3 || len(r.Steps[1].Checks) != 0 || r.Steps[1].Checks == nil {
		t.Errorf("steps without results: %+v", r.Steps)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./report -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestGoldenText(t *testing.T) {
	for _, lang := range []msg.Lang{msg.English, msg.Japanese} {
		var b bytes.Buffer
		if err := WriteText(&b, sampleReport(), msg.New(lang)); err != nil {
			t.Fatal(err)
		}
		golden(t, "report."+string(lang)+".txt", b.Bytes())
	}
}

func TestGoldenJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sampleReport(), JSON, nil); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", b.Bytes())

	// The schema: every documented key is present, even when empty.
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schemaVersion", "lab", "gradedAt", "score", "maxScore", "passed", "steps"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("top-level key %q missing", k)
		}
	}
	for _, k := range []string{"name", "version", "title", "digest"} {
		if _, ok := doc["lab"].(map[string]any)[k]; !ok {
			t.Errorf("lab key %q missing", k)
		}
	}
	check := doc["steps"].([]any)[0].(map[string]any)["checks"].([]any)[0].(map[string]any)
	for _, k := range []string{"name", "description", "status", "message", "durationMs", "points", "optional"} {
		if _, ok := check[k]; !ok {
			t.Errorf("check key %q missing in %v", k, check)
		}
	}
	if doc["gradedAt"] != "2026-11-29T22:01:02Z" {
		t.Errorf("gradedAt = %v, want RFC 3339 UTC", doc["gradedAt"])
	}
}

func TestGoldenJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, sampleReport(), JUnit, nil); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.junit.xml", b.Bytes())

	var doc JUnitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("the JUnit output does not parse back: %v", err)
	}
	if doc.Tests != 6 || doc.Failures != 1 || doc.Errors != 1 || doc.Skipped != 1 || len(doc.Suites) != 3 {
		t.Errorf("totals tests %d failures %d errors %d skipped %d suites %d; want 6 1 1 1 3",
			doc.Tests, doc.Failures, doc.Errors, doc.Skipped, len(doc.Suites))
	}
	apply := doc.Suites[1]
	if apply.Cases[0].Failure == nil || apply.Cases[1].Error == nil || apply.Cases[2].Skipped == nil {
		t.Errorf("apply cases: %+v", apply.Cases)
	}
	if doc.Suites[0].Cases[0].Failure != nil || doc.Suites[0].Cases[0].Error != nil {
		t.Errorf("a passing check must have no failure or error")
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": Text, "text": Text, "JSON": JSON, "junit": JUnit} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ParseFormat("yaml")
	if err == nil || !strings.Contains(err.Error(), "text, json or junit") {
		t.Errorf("ParseFormat(yaml) = %v, want an error naming the formats", err)
	}
}

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, sampleReport(), JSON, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var doc Report
	if err := json.Unmarshal(b, &doc); err != nil || doc.Score != 6 {
		t.Errorf("written file: score %d, %v", doc.Score, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("%d files left beside the report, want 1", len(entries))
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "no", "such", "dir", "r.xml"), sampleReport(), JUnit, nil); err == nil || !strings.Contains(err.Error(), "r.xml") {
		t.Errorf("writing into a missing directory: %v, want an error naming the file", err)
	}
}

// The grade of a lab whose learner was root on its nodes says so, in
// every rendering a person or a program reads.
func TestReportSaysTheLearnerWasRootOnTheNodes(t *testing.T) {
	l := sampleLab()
	l.Cluster.NodeAccess = true
	r := Build(l, "", time.Now(), sampleResults())
	var text, js bytes.Buffer
	if err := WriteText(&text, r, msg.New(msg.English)); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "root on the lab's nodes (cluster.nodeAccess)") || !strings.Contains(js.String(), `"nodeRoot": true`) {
		t.Errorf("text:\n%s\njson:\n%s\nwant both to say the learner was root on the nodes", text.String(), js.String())
	}
	var plain bytes.Buffer
	if err := WriteText(&plain, sampleReport(), msg.New(msg.English)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "nodeAccess") {
		t.Errorf("a lab without node access says it had it:\n%s", plain.String())
	}
}
