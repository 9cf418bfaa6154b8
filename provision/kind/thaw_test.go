package kind

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A frozen cgroup anywhere below a node's is thawed; others are left as
// they are.
func TestThawBelow(t *testing.T) {
	root := t.TempDir()
	states := map[string]string{
		".":                 "THAWED\n",
		"kubelet.slice":     "THAWED\n",
		"kubelet.slice/pod": "FROZEN\n",
		"kubelet.slice/pod/cri-containerd-1.scope": "FROZEN\n",
		"other": "FREEZING\n",
	}
	for dir, state := range states {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, "freezer.state"), []byte(state), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n := thawBelow(root); n != 2 {
		t.Errorf("thawed %d cgroups, want 2", n)
	}
	for dir, was := range states {
		b, _ := os.ReadFile(filepath.Join(root, dir, "freezer.state"))
		want := strings.TrimSpace(was)
		if want == "FROZEN" {
			want = "THAWED"
		}
		if got := strings.TrimSpace(string(b)); got != want {
			t.Errorf("%s: %s, want %s", dir, got, want)
		}
	}
	if n := thawBelow(filepath.Join(root, "missing")); n != 0 {
		t.Errorf("a missing tree: thawed %d", n)
	}
}
