package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
)

// sampleClass is a class of a learner who passes, one who fails (the
// sample report) and one who could not be graded.
func sampleClass() *Class {
	passing := Build(sampleLab(), "sha256:0", time.Unix(0, 0), map[string][]checks.Result{
		"init": {{Name: "repo-exists", Status: checks.Pass, Points: 1, Duration: 2 * time.Second}},
	})
	results := sampleResults()
	results["apply"] = slices.DeleteFunc(results["apply"], func(r checks.Result) bool { return r.Status == checks.Error })
	failing := Build(sampleLab(), "sha256:0", time.Unix(0, 0), results)
	return &Class{Lab: "gitops-drift", Learners: []ClassLearner{
		{Name: "alice", Report: passing},
		{Name: "bob", Report: failing},
		{Name: "carol", Error: "the learner's lab is not ready: \x1b[2Kcontrol plane Pod: CrashLoopBackOff"},
	}}
}

func TestClassText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteClass(&b, sampleClass(), Text); err != nil {
		t.Fatal(err)
	}
	want := "LEARNER  SCORE  CHECKS  FIRST FAILING\n" +
		"alice    1/1    1/1     -\n" +
		"bob      6/9    2/3     apply: deployment\n" +
		"carol    -      -       not graded: the learner's lab is not ready: \\x1b[2Kcontrol plane Pod: CrashLoopBackOff\n" +
		"3 learner(s): 1 passed, 1 failed, 1 could not be graded\n"
	if b.String() != want {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestClassVerdict(t *testing.T) {
	c := sampleClass()
	if v := c.Verdict(); v != checks.Errored {
		t.Errorf("with a learner not graded: %v", v)
	}
	c.Learners = c.Learners[:2]
	if v := c.Verdict(); v != checks.Failed || c.Total() != "2 learner(s): 1 passed, 1 failed" {
		t.Errorf("with a learner failing: %v, %q", v, c.Total())
	}
	c.Learners = c.Learners[:1]
	if v := c.Verdict(); v != checks.Passed {
		t.Errorf("every learner passing: %v", v)
	}
}

// The class's JSON holds each learner's report as `labctl grade -o json`
// writes it, byte for byte.
func TestClassJSON(t *testing.T) {
	c := sampleClass()
	var b bytes.Buffer
	if err := WriteClass(&b, c, JSON); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Lab      string `json:"lab"`
		Learners []struct {
			Name   string          `json:"name"`
			Report json.RawMessage `json:"report"`
			Error  string          `json:"error"`
		} `json:"learners"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Lab != "gitops-drift" || len(back.Learners) != 3 || string(back.Learners[2].Report) != "null" ||
		back.Learners[2].Error != c.Learners[2].Error {
		t.Fatalf("class JSON: %s", b.String())
	}
	var single bytes.Buffer
	if err := WriteJSON(&single, c.Learners[1].Report); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `\"configured\" & <created>`) {
		t.Errorf("the class JSON escapes HTML, the learner's report does not:\n%s", b.String())
	}
	var one, other any
	if err := json.Unmarshal(single.Bytes(), &one); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(back.Learners[1].Report, &other); err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(one)
	o, _ := json.Marshal(other)
	if !bytes.Equal(a, o) {
		t.Errorf("bob's report differs from his own:\n%s\n%s", a, o)
	}
}

func TestClassJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteClass(&b, sampleClass(), JUnit); err != nil {
		t.Fatal(err)
	}
	var doc JUnitSuites
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if doc.Name != "labctl class gitops-drift" || len(doc.Suites) != 3 || doc.Tests != 7 || doc.Errors != 1 || doc.Failures != 1 || doc.Time != "2.056" {
		t.Fatalf("junit: %s %d suites, %d tests, %d failures, %d errors\n%s", doc.Name, len(doc.Suites), doc.Tests,
			doc.Failures, doc.Errors, b.String())
	}
	if cs := doc.Suites[1].Cases; cs[0].Classname != "bob.init" {
		t.Errorf("bob's cases: %+v", cs)
	}
	carol := doc.Suites[2]
	if carol.Name != "carol" || len(carol.Cases) != 1 || carol.Cases[0].Name != "grade" || carol.Cases[0].Error == nil ||
		!strings.Contains(carol.Cases[0].Error.Message, `\x1b[2Kcontrol plane`) {
		t.Errorf("carol's suite: %+v", carol)
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Error("a raw ESC in the JUnit report")
	}
}

func TestClassFile(t *testing.T) {
	path := t.TempDir() + "/class.xml"
	if err := WriteClassFile(path, sampleClass(), JUnit); err != nil {
		t.Fatal(err)
	}
	if err := WriteClassFile(t.TempDir()+"/none/class.xml", sampleClass(), Text); err == nil ||
		!strings.Contains(err.Error(), "writing the report to ") {
		t.Errorf("a file in no directory: %v", err)
	}
}
