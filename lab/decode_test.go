package lab

import (
	"errors"
	"strings"
	"testing"
)

// header is the start of a lab file that decodes cleanly; cases append steps.
const header = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: t
steps:
  - id: s1
    title: T
    instructions: I
    solve: S
    checks:
`

// problems parses src and returns every reported problem, formatted, or
// fails the test when src parses cleanly.
func problems(t *testing.T, src string) []string {
	t.Helper()
	l, err := Parse("t.yaml", []byte(src))
	if err == nil {
		t.Fatalf("Parse succeeded, want problems; lab: %+v", l)
	}
	if l != nil {
		t.Errorf("Parse returned a lab along with an error")
	}
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Parse error is %T, want lab.Errors: %v", err, err)
	}
	out := make([]string, len(errs))
	for i, e := range errs {
		if e.File != "t.yaml" || e.Line < 1 {
			t.Errorf("problem %q has no position", e.Error())
		}
		out[i] = e.Error()
	}
	if got := err.Error(); got != strings.Join(out, "\n") {
		t.Errorf("Errors.Error() = %q, want one problem per line", got)
	}
	return out
}

func assertProblems(t *testing.T, src string, want ...string) {
	t.Helper()
	got := problems(t, src)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n  got:  %s\n  want: %s", strings.Join(got, "\n        "), strings.Join(want, "\n        "))
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{{
		name: "boolean written as yes",
		src: header + `      - name: c1
        file:
          path: /root/x
          exists: "yes"
`,
		want: []string{`t.yaml:14:19: steps[0].checks[0].file.exists: expected a boolean, found "yes"`},
	}, {
		name: "unknown field with a close name",
		src: header + `      - name: c1
        file:
          path: /root/x
          exist: true
`,
		want: []string{`t.yaml:14:11: steps[0].checks[0].file.exist: unknown field; did you mean "exists"?`},
	}, {
		name: "unknown field listing the known ones",
		src: `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: t
  colour: red
` + header[len("apiVersion: labctl.dev/v1alpha1\nkind: Lab\nmetadata:\n  name: t\n"):] + `      - name: c1
        file: {path: /root/x}
`,
		want: []string{`t.yaml:5:3: metadata.colour: unknown field; metadata takes name, title, language, version, goal, why, draft`},
	}, {
		name: "every wrong type in one check, all reported",
		src: header + `      - name: c1
        timeout: 10
        points: two
        optional: 1
        file:
          path: /root/x
          lines: {min: 1.5}
          contains: foo
          equals: {ref: 3}
          script: {name: Han, min: lots}
`,
		want: []string{
			`t.yaml:12:18: steps[0].checks[0].timeout: expected a duration with a unit such as "10s" or "1m30s", found the number 10`,
			`t.yaml:13:17: steps[0].checks[0].points: expected an integer, found "two"`,
			`t.yaml:14:19: steps[0].checks[0].optional: expected a boolean, found the number 1`,
			`t.yaml:17:24: steps[0].checks[0].file.lines.min: expected an integer, found the number 1.5`,
			`t.yaml:18:21: steps[0].checks[0].file.contains: expected a list, found "foo"; write a list, e.g. [foo] or one "- item" per line`,
			`t.yaml:19:25: steps[0].checks[0].file.equals.ref: expected a reference string such as "file:/root/out.json#key", found the number 3`,
			`t.yaml:20:36: steps[0].checks[0].file.script.min: expected a number, found "lots"`,
		},
	}, {
		name: "bad duration",
		src: header + `      - name: c1
        timeout: ten seconds
        file: {path: /root/x}
`,
		want: []string{`t.yaml:12:18: steps[0].checks[0].timeout: expected a duration such as "10s" or "1m30s", found "ten seconds"`},
	}, {
		name: "mapping where a list belongs and a list where a mapping belongs",
		src: header + `      - name: c1
        file: [a]
      - name: c2
        command:
          run: {program: ls}
`,
		want: []string{
			`t.yaml:12:15: steps[0].checks[0].file: expected a mapping (key: value lines), found a list`,
			`t.yaml:15:16: steps[0].checks[1].command.run: expected a list, found a mapping`,
		},
	}, {
		name: "boolean where a string belongs",
		src: header + `      - name: c1
        file: {path: true}
`,
		want: []string{`t.yaml:12:22: steps[0].checks[0].file.path: expected a string, found the boolean true; quote it if you mean the text`},
	}, {
		name: "duplicate key",
		src: header + `      - name: c1
        git: {repo: /root/r, clean: true, clean: false}
`,
		want: []string{`t.yaml:12:43: steps[0].checks[0].git.clean: "clean" is set twice (first at line 12); remove one`},
	}, {
		name: "too large for an int",
		src: header + `      - name: c1
        command: {run: [x], exitCode: 99999999999999999999}
`,
		want: []string{`t.yaml:12:39: steps[0].checks[0].command.exitCode: expected an integer, found the number 99999999999999999999`},
	}, {
		name: "non-finite number",
		src: header + `      - name: c1
        file: {path: /root/x, script: {name: Han, min: .nan}}
`,
		want: []string{`t.yaml:12:56: steps[0].checks[0].file.script.min: expected a finite number, found the number .nan`},
	}, {
		name: "non-finite number in a value",
		src: header + `      - name: c1
        file: {path: /root/x, field: {path: a, equals: [1, .inf]}}
`,
		want: []string{`t.yaml:12:60: steps[0].checks[0].file.field.equals[1]: expected a finite number, found the number .inf`},
	}, {
		name: "custom tag",
		src: header + `      - name: c1
        file: {path: !secret /x}
`,
		want: []string{`t.yaml:12:22: steps[0].checks[0].file.path: unsupported tag !secret; remove it`},
	}, {
		name: "label keys with dots keep their quotes in the path",
		src: header + `      - name: c1
        kube:
          apiVersion: v1
          kind: Pod
          name: p
          labels:
            app.kubernetes.io/name: [web]
`,
		want: []string{`t.yaml:17:37: steps[0].checks[0].kube.labels["app.kubernetes.io/name"]: expected a string, found a list`},
	}, {
		name: "empty file",
		src:  "",
		want: []string{`t.yaml:1:1: the file is empty; a lab file starts with "apiVersion: labctl.dev/v1alpha1" and "kind: Lab"`},
	}, {
		name: "only comments",
		src:  "# nothing yet\n",
		want: []string{`t.yaml:1:1: the file is empty; a lab file starts with "apiVersion: labctl.dev/v1alpha1" and "kind: Lab"`},
	}, {
		name: "document that is a list",
		src:  "- a\n- b\n",
		want: []string{`t.yaml:1:1: expected a mapping starting with apiVersion: labctl.dev/v1alpha1, found a list`},
	}, {
		name: "several documents",
		src: header + `      - name: c1
        file: {path: /root/x}
---
apiVersion: labctl.dev/v1alpha1
`,
		want: []string{`t.yaml:13:1: a lab file holds one document; remove this --- and what follows, or move it to another file`},
	}, {
		name: "several documents after an empty one",
		src:  "---\n" + header + "      - name: c1\n        file: {path: /root/x}\n---\n---\nkind: Lab\n",
		want: []string{`t.yaml:15:1: a lab file holds one document; remove this --- and what follows, or move it to another file`},
	}, {
		name: "YAML syntax error",
		src:  "apiVersion: labctl.dev/v1alpha1\nkind: Lab\nmetadata: name: x\n",
		want: []string{`t.yaml:3: mapping values are not allowed in this context`},
	}, {
		name: "tab indentation",
		src:  "apiVersion: labctl.dev/v1alpha1\nkind: Lab\nmetadata:\n\tname: x\n",
		want: []string{`t.yaml:4: found character that cannot start any token`},
	}, {
		name: "invalid UTF-8",
		src:  "apiVersion: labctl.dev/v1alpha1\nkind: Lab\nmetadata:\n  name: x\xff\n",
		want: []string{`t.yaml:4:10: invalid leading UTF-8 octet`},
	}, {
		name: "unknown alias",
		src:  "apiVersion: labctl.dev/v1alpha1\nkind: *k\n",
		want: []string{`t.yaml:2:7: alias *k names no anchor; define &k before using it`},
	}, {
		name: "merge of a scalar",
		src: header + `      - name: c1
        <<: 3
        file: {path: /root/x}
`,
		want: []string{`t.yaml:12:13: steps[0].checks[0]: a merge (<<) takes a mapping or a list of mappings, found the number 3`},
	}, {
		name: "wrong apiVersion and kind, and every problem after them",
		src: `apiVersion: v1
kind: Pod
metadata: {name: Bad_Name}
steps: []
`,
		want: []string{
			`t.yaml:1:13: apiVersion: "v1" is not supported; this labctl reads apiVersion: labctl.dev/v1alpha1`,
			`t.yaml:2:7: kind: "Pod" is not a lab; write kind: Lab`,
			`t.yaml:3:18: metadata.name: "Bad_Name" is not a DNS label: use lower-case letters, digits and '-', starting and ending with a letter or digit`,
			`t.yaml:4:8: steps: a lab needs at least one step`,
		},
	}, {
		name: "a value that failed to decode is reported once",
		src: header + `      - name: c1
        file: "/x"
`,
		want: []string{`t.yaml:12:15: steps[0].checks[0].file: expected a mapping (key: value lines), found "/x"`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertProblems(t, tt.src, tt.want...)
		})
	}
}

func TestDecodeAcceptsYAMLFeatures(t *testing.T) {
	src := header + `      - &base
        name: c1
        timeout: 1m30s
        points: 3
        file:
          path: /root/x
          field:
            path: a
            equals: {replicas: 3, ratio: 0.5, on: true, names: [a, b], none: null}
            gte: 0x10
      - <<: *base
        name: c2
      - name: c3
        command:
          run: [kubectl, scale, --replicas, 3]
          exitCode: 1
        description: numbers in a string list keep their text
`
	l, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	checks := l.Steps[0].Checks
	if len(checks) != 3 {
		t.Fatalf("got %d checks, want 3", len(checks))
	}
	c1, c2, c3 := checks[0], checks[1], checks[2]
	if c1.Timeout.Seconds() != 90 || c1.Points != 3 {
		t.Errorf("c1 timeout %v points %d, want 1m30s and 3", c1.Timeout, c1.Points)
	}
	if c2.Name != "c2" || c2.Points != 3 || c2.File == nil || c2.File.Path != "/root/x" {
		t.Errorf("merge key: c2 = %+v, want c1's fields under the name c2", c2)
	}
	eq, ok := c1.File.Field.Equals.Literal.(map[string]any)
	if !ok {
		t.Fatalf("equals literal is %T, want map[string]any", c1.File.Field.Equals.Literal)
	}
	if eq["replicas"] != 3 || eq["ratio"] != 0.5 || eq["on"] != true || eq["none"] != nil {
		t.Errorf("equals literal = %#v", eq)
	}
	if names, _ := eq["names"].([]any); len(names) != 2 || names[0] != "a" {
		t.Errorf("equals names = %#v, want [a b]", eq["names"])
	}
	if c1.File.Field.GTE.Literal != 16 {
		t.Errorf("gte = %#v, want 16", c1.File.Field.GTE.Literal)
	}
	if got := strings.Join(c3.Command.Run, " "); got != "kubectl scale --replicas 3" {
		t.Errorf("run = %q", got)
	}
	if *c3.Command.ExitCode != 1 {
		t.Errorf("exitCode = %d, want 1", *c3.Command.ExitCode)
	}
}

func TestDecodeValueRefOrLiteral(t *testing.T) {
	tests := []struct {
		yaml    string
		wantRef string
		wantLit any
	}{
		{`{ref: "file:/root/a#b"}`, "file:/root/a#b", nil},
		{`"ref"`, "", "ref"},
		{`{ref: x, other: y}`, "", map[string]any{"ref": "x", "other": "y"}},
		{`3`, "", 3},
	}
	for _, tt := range tests {
		src := header + "      - name: c1\n        file: {path: /root/x, field: {path: a, equals: " + tt.yaml + "}}\n"
		l, err := Parse("t.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", tt.yaml, err)
		}
		got := l.Steps[0].Checks[0].File.Field.Equals
		if got.Ref != tt.wantRef {
			t.Errorf("%s: ref %q, want %q", tt.yaml, got.Ref, tt.wantRef)
		}
		if m, ok := tt.wantLit.(map[string]any); ok {
			gm, _ := got.Literal.(map[string]any)
			if len(gm) != len(m) || gm["ref"] != m["ref"] {
				t.Errorf("%s: literal %#v, want %#v", tt.yaml, got.Literal, tt.wantLit)
			}
		} else if got.Literal != tt.wantLit {
			t.Errorf("%s: literal %#v, want %#v", tt.yaml, got.Literal, tt.wantLit)
		}
	}
}

func TestAliasExpansionIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(header + "      - name: c1\n        file:\n          path: /root/x\n          field:\n            path: a\n            equals:\n              l0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		prev := "*a" + string(rune('0'+i-1))
		b.WriteString("              l" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [" + strings.Repeat(prev+", ", 9) + prev + "]\n")
	}
	got := problems(t, b.String())
	if len(got) != 1 || !strings.Contains(got[0], "expands to more than") {
		t.Errorf("problems = %q, want one about the expansion limit", got)
	}
}

func TestValueReachedThroughAliasesReportedOnce(t *testing.T) {
	src := header + `      - name: c1
        file:
          path: /root/x
          contains: &bad [[1]]
      - name: c2
        file:
          path: /root/y
          contains: *bad
`
	assertProblems(t, src,
		`t.yaml:14:27: steps[0].checks[0].file.contains[0]: expected a string, found a list`)
}

func TestAliasBombOfBadValuesIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(header + "      - name: c1\n        command:\n          run:\n            - &a0 [[x]]\n")
	for i := 1; i < 9; i++ {
		prev := "*a" + string(rune('0'+i-1))
		b.WriteString("            - &a" + string(rune('0'+i)) + " [" + strings.Repeat(prev+", ", 9) + prev + "]\n")
	}
	got := problems(t, b.String())
	if len(got) > 20 {
		t.Errorf("%d problems, want each bad node once:\n%s", len(got), strings.Join(got[:20], "\n"))
	}
}

func TestTrailingDocumentSeparatorIsAccepted(t *testing.T) {
	src := "---\n" + header + "      - name: c1\n        file: {path: /root/x}\n---\n"
	if _, err := Parse("t.yaml", []byte(src)); err != nil {
		t.Fatalf("a trailing --- is reported: %v", err)
	}
}
