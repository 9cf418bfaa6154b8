package images

import (
	"fmt"
	"strings"
)

// KindSettings are the kind cluster settings a node image needs.
type KindSettings struct {
	// DisableDefaultCNI is true for labctl's node images: they carry no
	// kindnetd, but a single-node bridge CNI configuration baked in at
	// /etc/cni/net.d/10-labctl.conflist (pod subnet 10.244.0.0/16, kind's
	// default).
	DisableDefaultCNI bool
	// KubeadmConfigPatches go into the kind cluster's kubeadmConfigPatches.
	KubeadmConfigPatches []string
}

// KindConfigPatches returns the kubeadm configuration patches every labctl
// cluster needs:
//   - kubelet 1.37 refuses to start on a cgroup v1 host unless failCgroupV1
//     is false (harmless on cgroup v2);
//   - a single control plane has no one to elect a leader with: without
//     leader election the controller manager and the scheduler start their
//     work when they start, not seconds later after retrying for a lease
//     that the still bootstrapping RBAC refuses them.
func KindConfigPatches() []string {
	return []string{`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
`, `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
controllerManager:
  extraArgs:
  - name: leader-elect
    value: "false"
scheduler:
  extraArgs:
  - name: leader-elect
    value: "false"
`}
}

// KindSettingsFor returns the settings for a cluster on nodeRef: kind's
// upstream images bring their own CNI, labctl's do not.
func KindSettingsFor(nodeRef string) KindSettings {
	return KindSettings{
		DisableDefaultCNI:    !strings.HasPrefix(nodeRef, "kindest/node"),
		KubeadmConfigPatches: KindConfigPatches(),
	}
}

// KindClusterConfig renders a kind v1alpha4 cluster file with one
// control-plane node on nodeRef and only the settings the node image needs,
// for testing the image with the kind CLI. A lab's cluster has more (its
// audit log): `labctl images kind-config` prints that file, rendered by
// provision.KindConfigFile from the configuration `up` gives kind.
func KindClusterConfig(nodeRef string) string {
	s := KindSettingsFor(nodeRef)
	var b strings.Builder
	b.WriteString("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n")
	fmt.Fprintf(&b, "networking:\n  disableDefaultCNI: %t\n", s.DisableDefaultCNI)
	fmt.Fprintf(&b, "nodes:\n- role: control-plane\n  image: %s\n", nodeRef)
	b.WriteString("kubeadmConfigPatches:\n")
	for _, p := range s.KubeadmConfigPatches {
		b.WriteString("- |\n")
		for _, line := range strings.Split(strings.TrimRight(p, "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
	}
	return b.String()
}
