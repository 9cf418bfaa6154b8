package labctl_test

import (
	"io/fs"
	"testing"

	"github.com/labctl/labctl"
	"github.com/labctl/labctl/lab"
)

// TestDefaultLabLoads loads the lab shipped in the binary, strictly.
func TestDefaultLabLoads(t *testing.T) {
	l, err := lab.Parse("lab.yaml", labctl.DefaultLab())
	if err != nil {
		t.Fatalf("the embedded lab.yaml has problems:\n%v", err)
	}
	if len(l.Steps) == 0 {
		t.Fatal("the embedded lab has no steps")
	}
}

func TestDefaultFixtures(t *testing.T) {
	seeds, err := fs.Glob(labctl.DefaultFixtures(), "gitops/seed/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(seeds) == 0 {
		t.Fatal("the embedded fixtures hold no gitops/seed/*.yaml")
	}
	if _, err := fs.Stat(labctl.DefaultFixtures(), "fixtures"); err == nil {
		t.Error("DefaultFixtures is not rooted at fixtures/")
	}
}
