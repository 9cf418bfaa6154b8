package kind

import (
	"testing"

	"github.com/labctl/labctl/provision"
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
