package kind

import (
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/images"
)

// A class cluster's nodes all carry its mark, and their kubelets bound each
// Pod's processes; its workers are the number asked for.
func TestClassClusterConfig(t *testing.T) {
	c := classClusterConfig(ClassClusterOptions{Name: "room-2", Workers: 2, NodeImage: images.NodeRef()})
	cfg := kindConfig(c)
	if len(cfg.Nodes) != 3 {
		t.Fatalf("%d nodes, want 3", len(cfg.Nodes))
	}
	for i, n := range cfg.Nodes {
		if n.Labels[classClusterLabel] != "room-2" || n.Image != images.NodeRef() {
			t.Errorf("node %d: labels %v, image %s", i, n.Labels, n.Image)
		}
	}
	if !slices.ContainsFunc(cfg.KubeadmConfigPatches, func(p string) bool { return strings.Contains(p, "podPidsLimit: 4096") }) {
		t.Errorf("no podPidsLimit among the patches: %q", cfg.KubeadmConfigPatches)
	}
	// The patches of the node image come first, unchanged.
	if ks := images.KindSettingsFor(images.NodeRef()); !slices.Equal(cfg.KubeadmConfigPatches[:len(ks.KubeadmConfigPatches)], ks.KubeadmConfigPatches) {
		t.Errorf("patches %q do not begin with the node image's %q", cfg.KubeadmConfigPatches, ks.KubeadmConfigPatches)
	}
	// A lab's cluster carries no such mark.
	for _, n := range kindConfig(ClusterConfig{NodeImage: "x"}).Nodes {
		if _, ok := n.Labels[classClusterLabel]; ok {
			t.Errorf("a lab's node is marked as a class cluster's: %v", n.Labels)
		}
	}
}

func TestValidClassClusterName(t *testing.T) {
	for _, ok := range []string{"labctl-class", "a", "room-2", strings.Repeat("a", 50)} {
		if err := ValidClassClusterName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Room", "-a", "a-", "a_b", "a.b", strings.Repeat("a", 51)} {
		if err := ValidClassClusterName(bad); err == nil || !strings.Contains(err.Error(), "lower-case letters, digits and '-'") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// An image this machine lacks is named, with the command that makes it.
func TestMissingClassImage(t *testing.T) {
	if err := missingClassImage(images.SandboxRef()).Error(); !strings.Contains(err, images.SandboxRef()) || !strings.Contains(err, "`labctl images build`") {
		t.Error(err)
	}
	if err := missingClassImage(images.AddonsRef()).Error(); !strings.Contains(err, "`labctl images build --addons`") {
		t.Error(err)
	}
}
