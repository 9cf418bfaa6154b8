package lab_test

import (
	"os"
	"strings"
	"testing"

	"github.com/labctl/labctl/lab"
)

// TestAuthoringGuideExample loads and lints the lab that docs/authoring.md
// walks through, so that the guide's example stays a valid lab with nothing
// to warn about as the format changes.
func TestAuthoringGuideExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/authoring.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- authoring-example:"
	_, rest, ok := strings.Cut(string(doc), marker)
	if !ok {
		t.Fatalf("docs/authoring.md has no %s block", marker)
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	if !ok {
		t.Fatal("no ```yaml block after the marker")
	}
	example, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("the example's block does not end")
	}
	_, rest, ok = strings.Cut(string(doc), "<!-- authoring-translation:")
	if !ok {
		t.Fatal("docs/authoring.md has no authoring-translation block")
	}
	_, rest, _ = strings.Cut(rest, "```yaml\n")
	translation, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatal("the translation's block does not end")
	}
	l, err := lab.Parse("docs/authoring.md", []byte(example+translation))
	if err != nil {
		t.Fatalf("the guide's example does not load:\n%v", err)
	}
	for _, w := range l.Lint() {
		t.Errorf("the guide's example draws a warning: %s", w)
	}
	if ja := l.In("ja"); ja.Metadata.Title == l.Metadata.Title || ja.Steps[0].Checks[1].Description == l.Steps[0].Checks[1].Description {
		t.Errorf("the guide's translation is not read: %q", ja.Metadata.Title)
	}
	if l.Metadata.Name != "configmap-basics" || len(l.Steps) != 1 || len(l.Steps[0].Mistakes) != 1 || len(l.Steps[0].Alternatives) != 1 {
		t.Errorf("the example is not the lab the guide describes: %s, %d steps", l.Metadata.Name, len(l.Steps))
	}
}
