package lab

import (
	"strings"
	"testing"
)

const draftLab = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: draft%s
steps:
  - id: one
    title: One
    instructions: Create the file /root/x.
    checks:
      - name: write-this-check
        command: {run: ["false"]}
    solve: |
      # write what a correct learner runs
      exit 1
  - id: two
    title: Two
    instructions: Create the file /root/y.
    checks:
      - name: placeholder
        command: {run: [bash, -c, "exit 1"]}
      - name: y
        file: {path: /root/y}
    solve: touch /root/y
`

func TestUnfinished(t *testing.T) {
	l, err := Parse("t.yaml", []byte(strings.Replace(draftLab, "%s", "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range l.Unfinished() {
		got = append(got, w.Path)
	}
	// Step two has a real check beside its placeholder: it proves something.
	if strings.Join(got, " ") != "steps[0].checks steps[0].solve" {
		t.Errorf("unfinished = %q, want steps[0].checks and steps[0].solve", got)
	}
	for _, w := range l.Lint() {
		if strings.Contains(w.Msg, "placeholder") {
			t.Errorf("a lab that is no draft is warned, not refused: %s", w)
		}
	}
	d, err := Parse("t.yaml", []byte(strings.Replace(draftLab, "%s", "\n  draft: true", 1)))
	if err != nil {
		t.Fatal(err)
	}
	var warned int
	for _, w := range d.Lint() {
		if w.Path == "steps[0].checks" || w.Path == "steps[0].solve" || w.Path == "metadata.draft" {
			warned++
		}
	}
	if warned != 3 {
		t.Errorf("a draft's lint warns of %d of its placeholders and its mark, want 3: %v", warned, d.Lint())
	}
}
