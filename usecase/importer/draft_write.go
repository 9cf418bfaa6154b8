package importer

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/internal/atomicfile"
	"github.com/labctl/labctl/lab"
)

// WriteDrafts writes the drafted checks into the lab file: each step of
// drafts (by id) gets them in place of its checks, and the lab is marked a
// draft (metadata.draft: true), so that lint keeps it out of a class until
// the author has read them. The rest of the file is kept as it is; TODO.md
// beside it, if any, lists the steps drafted. A step with no drafted check
// keeps its checks.
func WriteDrafts(labFile string, drafts map[string][]DraftCheck) error {
	raw, err := os.ReadFile(labFile)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", labFile, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return fmt.Errorf("%s is not a lab file (no mapping at its top)", labFile)
	}
	root := doc.Content[0]
	md := mappingValue(root, "metadata")
	if md == nil || md.Kind != yaml.MappingNode {
		return fmt.Errorf("%s has no metadata", labFile)
	}
	setKey(md, "draft", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	steps := mappingValue(root, "steps")
	if steps == nil || steps.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s has no steps", labFile)
	}
	var done []string
	for _, st := range steps.Content {
		id := mappingValue(st, "id")
		if id == nil || len(drafts[id.Value]) == 0 {
			continue
		}
		var n yaml.Node
		if err := n.Encode(drafts[id.Value]); err != nil {
			return err
		}
		setKey(st, "checks", &n)
		done = append(done, fmt.Sprintf("%s (%d)", id.Value, len(drafts[id.Value])))
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if _, err := lab.Parse(labFile, b.Bytes()); err != nil {
		return fmt.Errorf("the lab with its drafted checks does not load (a defect of labctl test --draft): %w", err)
	}
	if err := atomicfile.WriteFile(labFile, b.Bytes(), 0o644); err != nil {
		return err
	}
	if len(done) == 0 {
		return nil
	}
	todo := filepath.Join(filepath.Dir(labFile), "TODO.md")
	old, err := os.ReadFile(todo)
	if err != nil {
		return nil // no TODO.md: the lab was not imported
	}
	line := fmt.Sprintf("- [ ] the checks of step %s were drafted by labctl test --draft from what the solve made: they hold what this solve did, not every right answer; read each, keep what the step asks, add mistakes and alternatives, and remove metadata.draft when `labctl test --mutate` passes\n", strings.Join(done, ", "))
	if strings.Contains(string(old), line) {
		return nil
	}
	return atomicfile.WriteFile(todo, append(old, []byte(line)...), 0o644)
}

// mappingValue is the value of key in the mapping m, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setKey sets key in the mapping m to v, adding it at the end when absent.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}
