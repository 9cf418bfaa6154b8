package checks

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/labctl/labctl/lab"
)

// fileRoot builds a small sandbox file system under a temp root.
func fileRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, "/root/notes.txt", "\n  hello world  \n\nsecond line\n", 0o644)
	writeFile(t, root, "/root/run.sh", "#!/bin/sh\necho hi\n", 0o755)
	writeFile(t, root, "/root/ko.txt", "안녕하세요 세계 hello", 0o644)
	writeFile(t, root, "/root/koja.txt", "안녕하세요 세계 こんにちは `세계` hello", 0o644)
	writeFile(t, root, "/root/app.yaml", "spec:\n  replicas: 3\n  ratio: 0.5\n  name: web\n  on: true\n  containers:\n    - image: nginx:1.27\n    - image: busybox:1.36\nmetadata:\n  labels:\n    app.kubernetes.io/name: web\n    tier: front\n", 0o644)
	writeFile(t, root, "/root/report.json", `{"replicas": 3.0, "quoted": "3", "flag": "true", "ok": true, "n": null, "list": [1, 2]}`, 0o644)
	writeFile(t, root, "/root/multi.yaml", "kind: A\nv: 1\n---\nkind: B\nv: 2\n", 0o644)
	writeFile(t, root, "/root/bad.json", `{"a": `, 0o644)
	writeFile(t, root, "/root/count.txt", "3\n", 0o644)
	writeFile(t, root, "/root/data.conf", `{"a": 1}`, 0o644)
	if err := os.MkdirAll(filepath.Join(root, "/root/gitops/repo/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "/root/gitops/repo/bin/sync.sh", "#!/bin/sh\n", 0o755)
	// An absolute link into the repository: resolved under root, not on the host.
	if err := os.Symlink("/root/gitops/repo/bin/sync.sh", filepath.Join(root, "/root/gitops/sync.sh")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "/root/tools/sync.sh", "#!/bin/sh\n", 0o755)
	if err := os.Symlink("../tools/sync.sh", filepath.Join(root, "/root/gitops/sync2.sh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/root/nowhere", filepath.Join(root, "/root/dangling")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "/root/pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestFileCheck(t *testing.T) {
	root := fileRoot(t)
	env := Env{Root: root}
	f := func(fc lab.FileCheck) lab.Check { return lab.Check{File: &fc} }
	field := func(path string, a lab.Assert) *lab.FieldAssert { return &lab.FieldAssert{Path: path, Assert: a} }
	tests := []struct {
		name   string
		check  lab.Check
		status Status
		msg    string
	}{
		{"exists", f(lab.FileCheck{Path: "/root/notes.txt"}), Pass, ""},
		{"missing", f(lab.FileCheck{Path: "/root/none.txt"}), Fail, "expected /root/none.txt to exist, found nothing there"},
		{"missing below a file", f(lab.FileCheck{Path: "/root/notes.txt/x"}), Fail, "expected /root/notes.txt/x to exist, found nothing there"},
		{"absent", f(lab.FileCheck{Path: "/root/none.txt", Exists: boolp(false)}), Pass, ""},
		{"absent but present", f(lab.FileCheck{Path: "/root/run.sh", Exists: boolp(false)}), Fail, "expected /root/run.sh to be absent, found a regular file"},
		{"dangling link is absent", f(lab.FileCheck{Path: "/root/dangling", Exists: boolp(false)}), Pass, ""},
		{"type file", f(lab.FileCheck{Path: "/root/run.sh", Type: "file"}), Pass, ""},
		{"type file on dir", f(lab.FileCheck{Path: "/root/gitops", Type: "file"}), Fail, "expected /root/gitops to be a regular file, found a directory"},
		{"type dir", f(lab.FileCheck{Path: "/root/gitops", Type: "dir"}), Pass, ""},
		{"type dir on file", f(lab.FileCheck{Path: "/root/run.sh", Type: "dir"}), Fail, "expected /root/run.sh to be a directory, found a regular file"},
		{"type unknown", f(lab.FileCheck{Path: "/root/run.sh", Type: "socket"}), Error, `unknown file type "socket": use file or dir`},
		{"executable", f(lab.FileCheck{Path: "/root/run.sh", Executable: boolp(true)}), Pass, ""},
		{"not executable", f(lab.FileCheck{Path: "/root/notes.txt", Executable: boolp(true)}), Fail, "expected /root/notes.txt to be executable, found mode 0644"},
		{"forbid executable", f(lab.FileCheck{Path: "/root/run.sh", Executable: boolp(false)}), Fail, "expected /root/run.sh not to be executable, found mode 0755"},
		{"equals trimmed", f(lab.FileCheck{Path: "/root/ko.txt", Equals: lit("  안녕하세요 세계 hello\n")}), Pass, ""},
		{"equals differs", f(lab.FileCheck{Path: "/root/run.sh", Equals: lit("echo hi")}), Fail, `expected /root/run.sh to contain exactly "echo hi", found "#!/bin/sh\necho hi"`},
		{"equals number literal", f(lab.FileCheck{Path: "/root/count.txt", Equals: lit(3)}), Pass, ""},
		{"equals object literal as JSON", f(lab.FileCheck{Path: "/root/data.conf", Equals: lit(map[string]any{"a": 1})}), Fail, `expected /root/data.conf to contain exactly "{\"a\":1}", found "{\"a\": 1}"`},
		{"contains", f(lab.FileCheck{Path: "/root/notes.txt", Contains: []string{"hello", "second"}}), Pass, ""},
		{"contains missing", f(lab.FileCheck{Path: "/root/notes.txt", Contains: []string{"hello", "third"}}), Fail, `expected /root/notes.txt to contain "third", found no such text`},
		{"matches multiline", f(lab.FileCheck{Path: "/root/notes.txt", Matches: []string{`^second line$`}}), Pass, ""},
		{"matches fails", f(lab.FileCheck{Path: "/root/notes.txt", Matches: []string{`^hello`}}), Fail, `expected /root/notes.txt to match "^hello", found no match`},
		{"notMatches", f(lab.FileCheck{Path: "/root/notes.txt", NotMatches: []string{`password`}}), Pass, ""},
		{"notMatches fails", f(lab.FileCheck{Path: "/root/notes.txt", NotMatches: []string{`w\w+d`}}), Fail, `expected /root/notes.txt not to match "w\\w+d", found "world"`},
		{"bad regexp", f(lab.FileCheck{Path: "/root/notes.txt", Matches: []string{`(`}}), Error, "invalid regular expression \"(\": error parsing regexp: missing closing ): `(?m)(`"},
		{"lines", f(lab.FileCheck{Path: "/root/notes.txt", Lines: &lab.Range{Min: intp(2), Max: intp(2)}}), Pass, ""},
		{"lines too few", f(lab.FileCheck{Path: "/root/notes.txt", Lines: &lab.Range{Min: intp(3)}}), Fail, "expected /root/notes.txt to have at least 3 non-empty lines, found 2"},
		{"script share", f(lab.FileCheck{Path: "/root/ko.txt", Script: &lab.ScriptShare{Name: "Hangul", Min: 0.5}}), Pass, ""},
		{"script share low", f(lab.FileCheck{Path: "/root/koja.txt", Script: &lab.ScriptShare{Name: "Hangul", Min: 0.8}}), Fail, "expected at least 80% of the letters in /root/koja.txt to be Hangul, found 53.84615384615385% (7 of 13; letters in code are not counted, and a word of ASCII letters counts as one unless the script is Latin)"},
		{"script share Latin counts ASCII", f(lab.FileCheck{Path: "/root/ko.txt", Script: &lab.ScriptShare{Name: "Latin", Min: 0.5}}), Fail, "expected at least 50% of the letters in /root/ko.txt to be Latin, found 41.66666666666667% (5 of 12; letters in code are not counted, and a word of ASCII letters counts as one unless the script is Latin)"},
		{"script unknown", f(lab.FileCheck{Path: "/root/ko.txt", Script: &lab.ScriptShare{Name: "Klingon", Min: 0.5}}), Error, `unknown Unicode script "Klingon" (e.g. Latin, Han, Hangul, Cyrillic)`},
		{"content of a directory", f(lab.FileCheck{Path: "/root/gitops", Contains: []string{"x"}}), Fail, "/root/gitops is a directory, not a regular file"},
		{"content of a fifo does not block", f(lab.FileCheck{Path: "/root/pipe", Contains: []string{"x"}}), Fail, "/root/pipe is a named pipe (FIFO), not a regular file"},
		{"notInside", f(lab.FileCheck{Path: "/root/gitops/sync2.sh", NotInside: "/root/gitops/repo"}), Pass, ""},
		{"notInside through absolute link", f(lab.FileCheck{Path: "/root/gitops/sync.sh", NotInside: "/root/gitops/repo"}), Fail, "expected /root/gitops/sync.sh to lie outside /root/gitops/repo, found it resolves to /root/gitops/repo/bin/sync.sh"},
		{"notInside plain path", f(lab.FileCheck{Path: "/root/gitops/repo/bin/sync.sh", NotInside: "/root/gitops/repo/"}), Fail, "expected /root/gitops/repo/bin/sync.sh to lie outside /root/gitops/repo/, found it resolves to /root/gitops/repo/bin/sync.sh"},
		{"notInside sibling prefix", f(lab.FileCheck{Path: "/root/gitops/repo/bin/sync.sh", NotInside: "/root/gitops/rep"}), Pass, ""},

		{"field yaml", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replicas", lab.Assert{Equals: lit(3)})}), Pass, ""},
		{"field yaml float literal", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replicas", lab.Assert{Equals: lit(3.0)})}), Pass, ""},
		{"field yaml differs", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replicas", lab.Assert{Equals: lit(2)})}), Fail, "expected spec.replicas = 2 in /root/app.yaml, found 3"},
		{"field number is not string", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replicas", lab.Assert{Equals: lit("3")})}), Fail, `expected spec.replicas = "3" in /root/app.yaml, found 3`},
		{"field json 3.0 == 3", f(lab.FileCheck{Path: "/root/report.json", Field: field("replicas", lab.Assert{Equals: lit(3), Type: "integer"})}), Pass, ""},
		{"field json string 3 != 3", f(lab.FileCheck{Path: "/root/report.json", Field: field("quoted", lab.Assert{Equals: lit(3)})}), Fail, `expected quoted = 3 in /root/report.json, found "3"`},
		{"field json true != \"true\"", f(lab.FileCheck{Path: "/root/report.json", Field: field("flag", lab.Assert{Equals: lit(true)})}), Fail, `expected flag = true in /root/report.json, found "true"`},
		{"field bool", f(lab.FileCheck{Path: "/root/report.json", Field: field("ok", lab.Assert{Equals: lit(true), Type: "boolean"})}), Pass, ""},
		{"field null type", f(lab.FileCheck{Path: "/root/report.json", Field: field("n", lab.Assert{Type: "null"})}), Pass, ""},
		{"field not found", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replica", lab.Assert{Equals: lit(3)})}), Fail, "spec.replica not found in /root/app.yaml"},
		{"field absent", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.paused", lab.Assert{Exists: boolp(false)})}), Pass, ""},
		{"field absent but present", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.name", lab.Assert{Exists: boolp(false)})}), Fail, `expected spec.name to be absent in /root/app.yaml, found "web"`},
		{"field wildcard all match", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.containers[*].image", lab.Assert{Matches: `:[0-9.]+$`})}), Pass, ""},
		{"field wildcard one fails", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.containers[*].image", lab.Assert{Matches: `^nginx`})}), Fail, `expected spec.containers[1].image to match "^nginx" in /root/app.yaml, found "busybox:1.36"`},
		{"field wildcard any: one holds", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.containers[*].image", lab.Assert{Matches: `^busybox`, Any: true})}), Pass, ""},
		{"field wildcard any: none holds", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.containers[*].image", lab.Assert{Matches: `^alpine`, Any: true})}), Fail,
			`none of the 2 values of spec.containers[*].image in /root/app.yaml holds; the first: expected spec.containers[0].image to match "^alpine" in /root/app.yaml, found "nginx:1.27"`},
		{"field index", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.containers[1].image", lab.Assert{NotEquals: lit("nginx:1.27")})}), Pass, ""},
		{"field notEquals fails", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.containers[0].image", lab.Assert{NotEquals: lit("nginx:1.27")})}), Fail, `expected spec.containers[0].image != "nginx:1.27" in /root/app.yaml, found "nginx:1.27"`},
		{"field quoted key", f(lab.FileCheck{Path: "/root/app.yaml", Field: field(`metadata.labels["app.kubernetes.io/name"]`, lab.Assert{Equals: lit("web")})}), Pass, ""},
		{"field matches non-string", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replicas", lab.Assert{Matches: `3`})}), Fail, `expected spec.replicas to be a string matching "3" in /root/app.yaml, found number 3`},
		{"field notMatches", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.name", lab.Assert{NotMatches: `^db`})}), Pass, ""},
		{"field notMatches fails", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.name", lab.Assert{NotMatches: `^w`})}), Fail, `expected spec.name not to match "^w" in /root/app.yaml, found "web"`},
		{"field type integer", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.ratio", lab.Assert{Type: "integer"})}), Fail, "expected spec.ratio to be of type integer in /root/app.yaml, found number 0.5"},
		{"field type number", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replicas", lab.Assert{Type: "number"})}), Pass, ""},
		{"field type string", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replicas", lab.Assert{Type: "string"})}), Fail, "expected spec.replicas to be of type string in /root/app.yaml, found number 3"},
		{"field gte lte", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replicas", lab.Assert{GTE: lit(2), LTE: lit(3.5)})}), Pass, ""},
		{"field gte fails", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replicas", lab.Assert{GTE: lit(4)})}), Fail, "expected spec.replicas >= 4 in /root/app.yaml, found 3"},
		{"field lte fails", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.ratio", lab.Assert{LTE: lit(0.25)})}), Fail, "expected spec.ratio <= 0.25 in /root/app.yaml, found 0.5"},
		{"field gte on string", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.name", lab.Assert{GTE: lit(1)})}), Fail, `expected spec.name >= 1 in /root/app.yaml, found string "web"`},
		{"field storedAs: the server's defaults beside", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.containers", lab.Assert{StoredAs: lit([]any{
			map[string]any{"image": "nginx:1.27", "imagePullPolicy": "IfNotPresent"}, map[string]any{"image": "busybox:1.36", "terminationMessagePath": "/dev/termination-log"}})})}), Pass, ""},
		{"field storedAs: a value differs", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.containers", lab.Assert{StoredAs: lit([]any{
			map[string]any{"image": "nginx:1.27"}, map[string]any{"image": "busybox:1.37"}})})}), Fail,
			`expected spec.containers, as stored, to be [{"image":"nginx:1.27"},{"image":"busybox:1.37"}] in /root/app.yaml, found [{"image":"nginx:1.27"},{"image":"busybox:1.36"}] (they differ at spec.containers[1].image)`},
		{"field storedAs: one more item stored", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.containers", lab.Assert{StoredAs: lit([]any{
			map[string]any{"image": "nginx:1.27"}, map[string]any{"image": "busybox:1.36"}, map[string]any{"image": "redis:7.4"}})})}), Fail,
			`expected spec.containers, as stored, to be [{"image":"nginx:1.27"},{"image":"busybox:1.36"},{"image":"redis:7.4"}] in /root/app.yaml, found [{"image":"nginx:1.27"},{"image":"busybox:1.36"}] (they differ at spec.containers)`},
		{"field storedAs: a key given is not stored", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("metadata.labels", lab.Assert{StoredAs: lit(map[string]any{"tier": "front"})})}), Fail,
			`expected metadata.labels, as stored, to be {"tier":"front"} in /root/app.yaml, found {"app.kubernetes.io/name":"web","tier":"front"} (they differ at metadata.labels["app.kubernetes.io/name"])`},
		{"field storedAs: a scalar", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec.replicas", lab.Assert{StoredAs: lit(3)})}), Pass, ""},
		{"field subsetOf", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("metadata.labels", lab.Assert{SubsetOf: lit(map[string]any{"tier": "front", "app.kubernetes.io/name": "web", "extra": "x"})})}), Pass, ""},
		{"field subsetOf fails", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("metadata.labels", lab.Assert{SubsetOf: lit(map[string]any{"app.kubernetes.io/name": "web"})})}), Fail, `expected every entry of metadata.labels to appear in {"app.kubernetes.io/name":"web"} in /root/app.yaml, found tier: "front"`},
		{"field whole list", f(lab.FileCheck{Path: "/root/report.json", Field: field("list", lab.Assert{Equals: lit([]any{1.0, 2})})}), Pass, ""},
		{"field multi-document yaml", f(lab.FileCheck{Path: "/root/multi.yaml", Field: field("v", lab.Assert{GTE: lit(1)})}), Pass, ""},
		{"field multi-document yaml fails", f(lab.FileCheck{Path: "/root/multi.yaml", Field: field("kind", lab.Assert{Equals: lit("A")})}), Fail, `expected kind = "A" in /root/multi.yaml, found "B"`},
		{"field bad json", f(lab.FileCheck{Path: "/root/bad.json", Field: field("a", lab.Assert{})}), Fail, "/root/bad.json is not valid JSON: unexpected EOF"},
		{"field format override", f(lab.FileCheck{Path: "/root/data.conf", Field: field("a", lab.Assert{Equals: lit(1)})}), Pass, ""},
		{"field on missing file", f(lab.FileCheck{Path: "/root/none.json", Exists: nil, Field: field("a", lab.Assert{})}), Fail, "expected /root/none.json to exist, found nothing there"},
		{"field bad path", f(lab.FileCheck{Path: "/root/app.yaml", Field: field("spec..x", lab.Assert{})}), Error, `field path "spec..x" at offset 5: expected a key after the dot`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, runCheck(t, env, tt.check), tt.status, tt.msg)
		})
	}
}

func TestFileCheckReadsAtMostFourMiB(t *testing.T) {
	root := t.TempDir()
	big := make([]byte, maxFileSize+1)
	writeFile(t, root, "/big.txt", string(big), 0o644)
	r := runCheck(t, Env{Root: root}, lab.Check{File: &lab.FileCheck{Path: "/big.txt", Contains: []string{"x"}}})
	expect(t, r, Fail, "/big.txt is larger than 4 MiB, more than any check reads")
	writeFile(t, root, "/ok.txt", string(big[:maxFileSize]), 0o644)
	r = runCheck(t, Env{Root: root}, lab.Check{File: &lab.FileCheck{Path: "/ok.txt", Lines: &lab.Range{Max: intp(0)}}})
	expect(t, r, Fail, "expected /ok.txt to have at most 0 non-empty lines, found 1")
}
