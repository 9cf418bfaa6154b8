package images

import (
	"strings"
)

// KindSettings are the kind cluster settings a node image needs. The kind
// cluster file itself is typed and rendered in one place, provision/kind's
// cluster configuration: `labctl images kind-config` prints it.
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
