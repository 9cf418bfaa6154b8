package kind

import (
	"github.com/labctl/labctl/provision"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
)

func TestKindConfig(t *testing.T) {
	patch := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\n"
	cfg := kindConfig(ClusterConfig{NodeImage: "labctl/node:x", DisableDefaultCNI: true, KubeadmPatches: []string{patch}})
	if len(cfg.Nodes) != 1 || cfg.Nodes[0].Role != "control-plane" || cfg.Nodes[0].Image != "labctl/node:x" {
		t.Fatalf("nodes = %+v", cfg.Nodes)
	}
	if !cfg.Networking.DisableDefaultCNI || len(cfg.KubeadmConfigPatches) != 1 || cfg.KubeadmConfigPatches[0] != patch {
		t.Fatalf("networking %+v patches %q", cfg.Networking, cfg.KubeadmConfigPatches)
	}
	if cfg.APIVersion != "kind.x-k8s.io/v1alpha4" || cfg.Kind != "Cluster" {
		t.Fatalf("type = %s %s", cfg.APIVersion, cfg.Kind)
	}
	if kindConfig(ClusterConfig{NodeImage: "kindest/node:v1"}).Networking.DisableDefaultCNI {
		t.Fatal("default CNI disabled without being asked")
	}
	if provision.ClusterName("gitops") != "labctl-gitops" || ControlPlaneServer("gitops") != "https://labctl-gitops-control-plane:6443" {
		t.Fatal("names")
	}
}

func TestMaterialiseFixtures(t *testing.T) {
	fsys := fstest.MapFS{
		"gitops/app.yaml": {Data: []byte("replicas: 2\n"), Mode: 0o444},
		"bin/run.sh":      {Data: []byte("#!/bin/sh\n"), Mode: 0o555},
	}
	base := t.TempDir()
	dir, err := materialiseFixtures(fsys, base, "lab1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "gitops", "app.yaml"))
	if err != nil || string(b) != "replicas: 2\n" {
		t.Fatalf("content %q %v", b, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "bin", "run.sh")); st.Mode().Perm() != 0o755 {
		t.Errorf("executable mode = %v", st.Mode())
	}
	if st, _ := os.Stat(filepath.Join(dir, "gitops", "app.yaml")); st.Mode().Perm() != 0o644 {
		t.Errorf("file mode = %v", st.Mode())
	}
	again, err := materialiseFixtures(fsys, base, "lab1")
	if err != nil || again != dir {
		t.Fatalf("same content: %s, %v; want %s reused", again, err, dir)
	}
	fsys["gitops/app.yaml"] = &fstest.MapFile{Data: []byte("replicas: 3\n")}
	changed, err := materialiseFixtures(fsys, base, "lab1")
	if err != nil || changed == dir {
		t.Fatalf("changed content kept directory %s (%v)", changed, err)
	}
	entries, _ := os.ReadDir(base)
	if len(entries) != 2 {
		t.Errorf("cache holds %d entries, want 2 (no temporary leftovers)", len(entries))
	}
}
