package kind

import (
	"context"
	"time"

	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/docker"
)

// HostCluster is a bare kind cluster, named as a lab's would be, for the
// integration tests of another runtime to run on (the class tests' class
// cluster): made, loaded with images and deleted as `labctl up` and
// `labctl down` do a lab's.
type HostCluster struct{ k *kind }

// NewHostCluster is the kind cluster named ClusterName(name), whose admin
// kubeconfig is written to kubeconfigPath.
func NewHostCluster(name, kubeconfigPath string) *HostCluster {
	return &HostCluster{k: newKind(name, kubeconfigPath, nil)}
}

// Exists reports whether kind knows the cluster.
func (h *HostCluster) Exists(ctx context.Context) (bool, error) { return h.k.exists(ctx) }

// Create makes the cluster as c says.
func (h *HostCluster) Create(ctx context.Context, c ClusterConfig) error { return h.k.create(ctx, c) }

// Delete removes the cluster; a missing one is not an error.
func (h *HostCluster) Delete(ctx context.Context) error { return h.k.delete(ctx) }

// LoadImages imports refs from engine into every node of the cluster.
func (h *HostCluster) LoadImages(ctx context.Context, engine *docker.Engine, refs []string) error {
	return h.k.loadImages(ctx, engine, refs)
}

// StartAddons starts the lab add-ons named (lab.AddonNetworkPolicy,
// lab.AddonStorage, …) on the cluster as `labctl up` does a lab's: the
// add-on images built if need be and loaded, the manifests applied, and
// their Pods ready.
func (h *HostCluster) StartAddons(ctx context.Context, engine *docker.Engine, addons ...string) error {
	l := &lab.Lab{}
	l.Cluster.Addons = addons
	names := addonsFor(l, "")
	var refs []string
	if needsNodeAddonsImage(l, "") {
		ref, err := images.EnsureAddons(ctx, images.Options{})
		if err != nil {
			return err
		}
		refs = append(refs, ref)
	}
	if needsServeImage(l) {
		ref, err := images.EnsureServeAddons(ctx, images.Options{})
		if err != nil {
			return err
		}
		refs = append(refs, ref)
	}
	if err := h.k.loadImages(ctx, engine, refs); err != nil {
		return err
	}
	admin, err := h.k.adminConfig(ctx)
	if err != nil {
		return err
	}
	nodes, err := runBounded(ctx, time.Minute, func() ([]nodes.Node, error) { return h.k.provider.ListInternalNodes(h.k.name) })
	if err != nil {
		return err
	}
	return applyAddons(ctx, admin, names, len(nodes), kindConfig(ClusterConfig{}).Networking.PodSubnet)
}
