package class

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What labctl cannot promise on a class cluster, read from the cluster
// itself: claim sizes its storage does not enforce (labctl's warden of
// /root bounds them look by look, not write by write), and processes its
// kubelets do not bound. (The network wall is tried: CheckIsolation.)

// unsizedProvisioners make volumes that are directories on a node: a
// claim's size bounds nothing there.
var unsizedProvisioners = []string{
	"rancher.io/local-path", "kubernetes.io/no-provisioner", "kubernetes.io/host-path",
	"k8s.io/minikube-hostpath", "microk8s.io/hostpath", "docker.io/hostpath", "openebs.io/local",
}

// Caveats says, one sentence each, what the class cluster does not enforce
// that a learner could use against the others. It reads the learners'
// StorageClass and each node's kubelet configuration; what it cannot read
// it says so.
func (c *Class) Caveats(ctx context.Context) []string {
	var out []string
	if sc, err := c.learnerStorageClass(ctx); err != nil {
		out = append(out, fmt.Sprintf("could not read the learners' StorageClass: %v", err))
	} else if sc != nil && slices.Contains(unsizedProvisioners, sc.Provisioner) {
		out = append(out, fmt.Sprintf("StorageClass %s (%s) does not enforce a claim's size: labctl stops a sandbox whose /root "+
			"is past its bound at its next look (every %s), but one allocation between two looks can still fill the node's disk, "+
			"and a node whose disk fills evicts every learner's Pods on it (docs/classroom.md, A bounded /root)",
			sc.Name, sc.Provisioner, homeLook))
	}
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return append(out, fmt.Sprintf("could not read the class cluster's nodes: %v", err))
	}
	var unbounded, unread []string
	for _, n := range nodes.Items {
		raw, err := c.kubeletConfig(ctx, n.Name)
		if err != nil {
			unread = append(unread, n.Name)
			continue
		}
		var cfg struct {
			KubeletConfig struct {
				PodPidsLimit *int64 `json:"podPidsLimit"`
			} `json:"kubeletconfig"`
		}
		if json.Unmarshal(raw, &cfg) != nil {
			unread = append(unread, n.Name)
			continue
		}
		if l := cfg.KubeletConfig.PodPidsLimit; l == nil || *l <= 0 {
			unbounded = append(unbounded, n.Name)
		}
	}
	if len(unbounded) > 0 {
		out = append(out, fmt.Sprintf("the kubelet of node(s) %s bounds no Pod's processes (podPidsLimit): a learner's fork bomb "+
			"takes the node's process table from every learner on it", strings.Join(unbounded, ", ")))
	}
	if len(unread) > 0 {
		out = append(out, fmt.Sprintf("could not read the kubelet configuration of node(s) %s (nodes/proxy): whether they bound "+
			"a Pod's processes is unknown", strings.Join(unread, ", ")))
	}
	return out
}

// learnerStorageClass is the StorageClass the learners' claims get: the
// class's own, or the cluster's default; nil when there is none.
func (c *Class) learnerStorageClass(ctx context.Context) (*storagev1.StorageClass, error) {
	if c.cfg.StorageClass != "" {
		return c.cs.StorageV1().StorageClasses().Get(ctx, c.cfg.StorageClass, metav1.GetOptions{})
	}
	list, err := c.cs.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i, sc := range list.Items {
		if sc.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// kubeletConfig reads node's kubelet configuration through the API
// server's node proxy (/configz).
func (c *Class) kubeletConfig(ctx context.Context, node string) ([]byte, error) {
	if c.configz != nil {
		return c.configz(ctx, node)
	}
	return c.cs.CoreV1().RESTClient().Get().Resource("nodes").Name(node).SubResource("proxy").Suffix("configz").DoRaw(ctx)
}
