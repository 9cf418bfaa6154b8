package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// hostileResults runs real checks on a learner's files made to rewrite a
// terminal: a file named with ESC [1A and a commit message with an OSC
// title sequence, BEL and CR.
func hostileResults(t *testing.T) map[string][]checks.Result {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "root")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "a\x1b[1Ab"), []byte("grade: 0\x1b[2K\r"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(home, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "x\x1b]0;pwned\x07\rALL PASSED"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=L", "GIT_AUTHOR_EMAIL=l@example.com", "GIT_COMMITTER_NAME=L", "GIT_COMMITTER_EMAIL=l@example.com"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	cs := []lab.Check{
		{Name: "file", File: &lab.FileCheck{Path: "/root/a\x1b[1Ab", Equals: &lab.Value{Literal: "grade: 10"}}},
		{Name: "message", Git: &lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Matches: "^feat"}}},
	}
	rs := checks.Run(context.Background(), checks.Env{Root: root}, cs)
	for _, r := range rs {
		if r.Status != checks.Fail {
			t.Fatalf("check %s: %s %q, want a failure", r.Name, r.Status, r.Message)
		}
	}
	return map[string][]checks.Result{"init": rs}
}

func assertNoControls(t *testing.T, where, out string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\r"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s holds the raw control character %q:\n%s", where, bad, out)
		}
	}
	for _, shown := range []string{`a\x1b[1Ab`, `\x1b]0;pwned`} {
		if !strings.Contains(out, shown) {
			t.Errorf("%s does not show %s escaped:\n%s", where, shown, out)
		}
	}
}

func TestLearnerTextIsEscaped(t *testing.T) {
	r := Build(sampleLab(), "sha256:0", time.Now(), hostileResults(t))
	var text bytes.Buffer
	if err := WriteText(&text, r, msg.New(msg.English)); err != nil {
		t.Fatal(err)
	}
	assertNoControls(t, "the text report", text.String())

	var junit bytes.Buffer
	if err := Write(&junit, r, JUnit, nil); err != nil {
		t.Fatal(err)
	}
	var back JUnitSuites
	if err := xml.Unmarshal(junit.Bytes(), &back); err != nil {
		t.Fatalf("the JUnit report does not parse: %v", err)
	}
	if strings.ContainsRune(junit.String(), '\uFFFD') {
		t.Errorf("the JUnit report replaced characters instead of escaping them:\n%s", junit.String())
	}
	assertNoControls(t, "the JUnit report", junit.String())

	// JSON keeps the exact values; its encoder escapes them itself.
	var js bytes.Buffer
	if err := Write(&js, r, JSON, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `a\u001b[1Ab`) {
		t.Errorf("the JSON report does not keep the exact file name:\n%s", js.String())
	}
}

// TestTextEscapesLabText: an OSC 52 sequence in the lab's title and
// version, a step's title and a mistake's explanation comes out of the
// text report visible.
func TestTextEscapesLabText(t *testing.T) {
	const osc52 = "\x1b]52;c;cHduZWQ=\x07"
	r := &Report{Lab: Lab{Name: "t", Title: "T" + osc52, Version: "1" + osc52}, Steps: []Step{{
		ID: "s", Title: "S" + osc52,
		Checks:   []Check{{Name: "c", Status: checks.Fail, Points: 1}},
		Mistakes: []Mistake{{Name: "m", Description: "D" + osc52, Explain: "E" + osc52}},
	}}}
	var b bytes.Buffer
	if err := WriteText(&b, r, msg.New(msg.English)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("raw control characters in the text report:\n%q", out)
	}
	const shown = `\x1b]52;c;cHduZWQ=\x07`
	for _, want := range []string{"T" + shown + " (t 1" + shown + ")\n", "s: S" + shown + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the text report lacks %q:\n%q", want, out)
		}
	}
}
