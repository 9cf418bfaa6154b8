package checks

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// failingChecks are checks of every kind that fail on gitRoot plus the
// files written by languageRoot, each with the values it carries (paths,
// field paths, expressions, commands): those may appear in a message as
// they are, in any language; every other word must be the learner's.
func failingChecks() []lab.Check {
	yes, no := boolp(true), boolp(false)
	checks := []lab.Check{
		{Name: "missing", File: &lab.FileCheck{Path: "/root/nothing.txt"}},
		{Name: "absent", File: &lab.FileCheck{Path: "/root/note.md", Exists: no}},
		{Name: "dir", File: &lab.FileCheck{Path: "/root/note.md", Type: "dir"}},
		{Name: "regular", File: &lab.FileCheck{Path: "/root/repo", Type: "file"}},
		{Name: "exec", File: &lab.FileCheck{Path: "/root/note.md", Executable: yes}},
		{Name: "noexec", File: &lab.FileCheck{Path: "/root/run.sh", Executable: no}},
		{Name: "exactly", File: &lab.FileCheck{Path: "/root/note.md", Equals: lit("other")}},
		{Name: "exactly-ref", File: &lab.FileCheck{Path: "/root/note.md", Equals: refv("git:/root/repo@HEAD")}},
		{Name: "contains", File: &lab.FileCheck{Path: "/root/note.md", Contains: []string{"kubectl diff"}}},
		{Name: "matches", File: &lab.FileCheck{Path: "/root/note.md", Matches: []string{"^replicas: [0-9]+$"}}},
		{Name: "notmatches", File: &lab.FileCheck{Path: "/root/note.md", NotMatches: []string{"Hello"}}},
		{Name: "lines", File: &lab.FileCheck{Path: "/root/note.md", Lines: &lab.Range{Min: intp(5)}}},
		{Name: "script", File: &lab.FileCheck{Path: "/root/note.md", Script: &lab.ScriptShare{Name: "Hangul", Min: 0.6}}},
		{Name: "yaml", File: &lab.FileCheck{Path: "/root/broken.json", Field: &lab.FieldAssert{Path: "a"}}},
		{Name: "equals", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: lit(3)}}}},
		{Name: "notequals", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{NotEquals: lit(2)}}}},
		{Name: "type", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{Type: "string"}}}},
		{Name: "fieldabsent", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{Exists: no}}}},
		{Name: "fieldmissing", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.paused"}}},
		{Name: "fieldmatch", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.image", Assert: lab.Assert{Matches: `:[0-9.]+$`}}}},
		{Name: "fieldmatchtype", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{Matches: `x`}}}},
		{Name: "gte", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{GTE: lit(5)}}}},
		{Name: "gtetype", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.image", Assert: lab.Assert{GTE: lit(5)}}}},
		{Name: "subset", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec", Assert: lab.Assert{SubsetOf: lit(map[string]any{"replicas": 2})}}}},
		{Name: "ref", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: refv("file:/root/gone.yaml#spec.replicas")}}}},
		{Name: "norepo", Git: &lab.GitCheck{Repo: "/root/nothing"}},
		{Name: "repo", Git: &lab.GitCheck{Repo: "/root/repo", Exists: no}},
		{Name: "commits", Git: &lab.GitCheck{Repo: "/root/repo", Commits: &lab.Range{Min: intp(4), Max: intp(6)}}},
		{Name: "tracked", Git: &lab.GitCheck{Repo: "/root/repo", Tracked: []string{"apps/db/deployment.yaml"}}},
		{Name: "config", Git: &lab.GitCheck{Repo: "/root/repo", Config: []string{"user.email"}}},
		{Name: "clean", Git: &lab.GitCheck{Repo: "/root/repo", Clean: yes}},
		{Name: "dirty", Git: &lab.GitCheck{Repo: "/root/merged", Clean: no}},
		{Name: "nocommits", Git: &lab.GitCheck{Repo: "/root/empty", Message: &lab.MessageAssert{MinLength: 3}}},
		{Name: "msglast", Git: &lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Matches: "(?i)replicas"}}},
		{Name: "msgfirst", Git: &lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "first", MinLength: 40}}},
		{Name: "msgall", Git: &lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "all", Matches: "^feat"}}},
		{Name: "msgany", Git: &lab.GitCheck{Repo: "/root/repo", Message: &lab.MessageAssert{Which: "any", Touching: "apps", Matches: "^fix", MinLength: 3}}},
		{Name: "gitfield", Git: &lab.GitCheck{Repo: "/root/repo", Field: &lab.GitFieldAssert{File: "apps/web/deployment.yaml", FieldAssert: lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: lit(5)}}}}},
		{Name: "gitref", File: &lab.FileCheck{Path: "/root/d.yaml", Field: &lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{Equals: refv("git:/root/repo@HEAD:apps/db.yaml#spec.replicas")}}}},
		{Name: "kube", Kube: &lab.KubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "gitops-lab", Name: "api"}},
		{Name: "kubeabsent", Kube: &lab.KubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "gitops-lab", Name: "web", Exists: no}},
		{Name: "label", Kube: &lab.KubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "gitops-lab", Name: "web", Labels: map[string]string{"tier": "back", "team": "a"}}},
		{Name: "kubefield", Kube: &lab.KubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "gitops-lab", Name: "web", Field: &lab.FieldAssert{Path: "spec.replicas", Assert: lab.Assert{LTE: lit(1)}}}},
		{Name: "exit", Command: &lab.CommandCheck{Run: []string{"/root/run.sh"}}},
		{Name: "stdout", Command: &lab.CommandCheck{Run: []string{"/root/run.sh"}, ExitCode: intp(3), Stdout: "^ok$"}},
		{Name: "nodir", Command: &lab.CommandCheck{Run: []string{"/root/run.sh"}, Dir: "/root/nowhere"}},
	}
	return checks
}

// languageRoot adds the files failingChecks reads to gitRoot's repositories.
func languageRoot(t *testing.T) string {
	root := gitRoot(t)
	writeFile(t, root, "/root/note.md", "Hello\nkubectl scale\n", 0o644)
	writeFile(t, root, "/root/run.sh", "#!/bin/sh\necho fail >&2\nexit 3\n", 0o755)
	writeFile(t, root, "/root/broken.json", "{\"a\": 1,}", 0o644)
	writeFile(t, root, "/root/d.yaml", "spec:\n  replicas: 2\n  image: nginx:latest\n", 0o644)
	return root
}

// quoted spans are values shown as they are: Go-quoted strings and the
// learner's own text.
var quotedSpan = regexp.MustCompile(`"(?:[^"\\]|\\.)*"…?`)

// valueLike are tokens that are values, not words: paths, field paths,
// key=value pairs, versions, hashes, object kinds with their API version.
var valueLike = regexp.MustCompile(`\S*[/.=:_\[\]0-9]\S*`)

// codeWords name formats, git's own objects and lab file fields, the same
// in every language.
var codeWords = map[string]bool{"JSON": true, "YAML": true, "HEAD": true, "git": true, "Deployment": true}

// TestJapaneseFailuresHaveNoEnglish runs failing checks of every kind with
// the real engine in Japanese: once values (quoted text, paths, field
// paths, versions) and code names are set aside, no Latin word is left.
// The same checks in English must say something else, so the test cannot
// pass by the messages being empty or untranslated.
func TestJapaneseFailuresHaveNoEnglish(t *testing.T) {
	root := languageRoot(t)
	cs := failingChecks()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ja := Run(ctx, Env{Root: root, Kube: fakeCluster(t), Lang: msg.Japanese}, cs)
	en := Run(ctx, Env{Root: root, Kube: fakeCluster(t), Lang: msg.English}, cs)
	latin := regexp.MustCompile(`[A-Za-z]{2,}`)
	for i, r := range ja {
		if r.Status != Fail {
			t.Errorf("%s: %s %q, want a failure", r.Name, r.Status, r.Message)
			continue
		}
		if r.Message == en[i].Message {
			t.Errorf("%s: the Japanese message is the English one: %q", r.Name, r.Message)
		}
		rest := quotedSpan.ReplaceAllString(r.Message, " ")
		rest = valueLike.ReplaceAllString(rest, " ")
		for _, v := range values(cs[i]) {
			rest = strings.ReplaceAll(rest, v, " ")
		}
		for _, w := range latin.FindAllString(rest, -1) {
			if !codeWords[w] {
				t.Errorf("%s: English word %q in %q", r.Name, w, r.Message)
			}
		}
	}
}

// values are the strings a check carries that a message may quote as they
// are, longest first.
func values(c lab.Check) []string {
	var out []string
	var fa *lab.FieldAssert
	switch {
	case c.File != nil:
		fa = c.File.Field
	case c.Kube != nil:
		fa = c.Kube.Field
	case c.Git != nil && c.Git.Field != nil:
		fa = &c.Git.Field.FieldAssert
	}
	if fa != nil {
		out = append(out, fa.Path)
	}
	if c.Git != nil && c.Git.Message != nil {
		out = append(out, c.Git.Message.Touching)
	}
	if c.Kube != nil {
		out = append(out, c.Kube.Kind, c.Kube.Name)
	}
	if c.Command != nil {
		out = append(out, c.Command.Run...)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// TestEnglishIsTheDefault: a request without a language gives the English
// messages the host and the tests have always read.
func TestEnglishIsTheDefault(t *testing.T) {
	env := Env{Root: t.TempDir()}
	got := runCheck(t, env, lab.Check{File: &lab.FileCheck{Path: "/root/x"}})
	expect(t, got, Fail, "expected /root/x to exist, found nothing there")
	env.Lang = msg.Japanese
	got = runCheck(t, env, lab.Check{File: &lab.FileCheck{Path: "/root/x"}})
	expect(t, got, Fail, "/root/x があるはずですが、何もありません")
}

// TestServeWordsResultsInTheRequestsLanguage: the language travels in the
// check request, so the checker in the grader container words its results
// as the host chose.
func TestServeWordsResultsInTheRequestsLanguage(t *testing.T) {
	root := t.TempDir()
	for lang, want := range map[string]string{
		`"lang":"ja",`: "/root/x があるはずですが、何もありません",
		``:             "expected /root/x to exist, found nothing there",
	} {
		in := strings.NewReader(`{"root":"` + root + `",` + lang + `"checks":[{"name":"c","file":{"path":"/root/x"}}]}`)
		var out strings.Builder
		if err := Serve(context.Background(), in, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"message":"`+want+`"`) {
			t.Errorf("request %q: response %s, want the message %q", lang, out.String(), want)
		}
	}
}

// TestFailuresUseTheCatalogue: every failf names a catalogue key, never a
// format written in place, which would reach a Japanese learner in English.
func TestFailuresUseTheCatalogue(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	inPlace := regexp.MustCompile(`failf\(\s*"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range inPlace.FindAllIndex(src, -1) {
			line := 1 + strings.Count(string(src[:m[0]]), "\n")
			t.Errorf("%s:%d: failf with a format in place; add the text to msg/checks.go in English and Japanese and pass its key", f, line)
		}
	}
}
