package e2etest

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/fsx"
	"github.com/labctl/labctl/lab"
)

// Images are the node and sandbox images the tests run:
// LABCTL_TEST_NODE_IMAGE and LABCTL_TEST_SANDBOX_IMAGE, else labctl's own
// (`make images` builds them).
func Images() (node, sandbox string) {
	node, sandbox = os.Getenv("LABCTL_TEST_NODE_IMAGE"), os.Getenv("LABCTL_TEST_SANDBOX_IMAGE")
	if node == "" {
		node = images.NodeRef()
	}
	if sandbox == "" {
		sandbox = images.SandboxRef()
	}
	return node, sandbox
}

// NewLab is a lab named name with one namespace, the sandbox's usual work
// directory and fixtures mount, the default Pod Security level, and steps.
func NewLab(name, namespace string, steps ...lab.Step) *lab.Lab {
	l := &lab.Lab{APIVersion: lab.APIVersion, Kind: lab.Kind, Metadata: lab.Metadata{Name: name}}
	l.Cluster.Namespaces = []string{namespace}
	l.Sandbox = lab.Sandbox{WorkDir: lab.DefaultWorkDir, Fixtures: lab.DefaultFixturesDir}
	l.Cluster.PodSecurity = lab.DefaultPodSecurity
	l.Steps = steps
	return l
}

// repositoryLabName is the name of the repository's own lab in lab.yaml.
var repositoryLabName = regexp.MustCompile(`(?m)^  name: gitops-drift$`)

// CopyLab copies the repository's lab (lab.yaml and its fixtures) into dir
// under the name name, so a test's cluster, sandbox and volume stay apart
// from every other lab's, and returns the lab file and the lab loaded.
func CopyLab(t testing.TB, dir, name string) (string, *lab.Lab) {
	t.Helper()
	root := Root(t)
	b, err := os.ReadFile(filepath.Join(root, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	renamed := repositoryLabName.ReplaceAll(b, []byte("  name: "+name))
	if bytes.Equal(renamed, b) {
		t.Fatal("lab.yaml has no `  name: gitops-drift` line to rename")
	}
	file := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(file, renamed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := fsx.CopyTree(os.DirFS(filepath.Join(root, "fixtures")), filepath.Join(dir, "fixtures"), fsx.ExecBit); err != nil {
		t.Fatalf("copying fixtures: %v", err)
	}
	l, err := lab.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return file, l
}
