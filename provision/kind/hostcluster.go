package kind

import (
	"context"

	"github.com/labctl/labctl/internal/docker"
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
