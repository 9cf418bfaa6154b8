package kind

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// CopyNodeFile streams the file at p on the lab's node named node (a
// lab.NodeRoles name) out of the node's container through the engine's
// archive API: the engine reads the container's file system itself, so
// what the learner, root on the node, did to its programs changes nothing
// (provision.NodeFile).
func (k *kindRuntime) CopyNodeFile(ctx context.Context, node, p string) (io.ReadCloser, error) {
	if !k.lab.Cluster.NodeAccess || !slices.Contains(lab.NodeRoles(&k.lab.Cluster), node) {
		return nil, fmt.Errorf("%q is not a node of lab %s", node, k.lab.Metadata.Name)
	}
	return k.engine.CopyOut(ctx, k.cluster+"-"+node, p)
}

// NodeProcesses lists the processes of the lab's node named node as the
// engine's host sees them, with provision.NodePSArgs
// (provision.NodeProcesses).
func (k *kindRuntime) NodeProcesses(ctx context.Context, node string) (titles []string, rows [][]string, err error) {
	if !k.lab.Cluster.NodeAccess || !slices.Contains(lab.NodeRoles(&k.lab.Cluster), node) {
		return nil, nil, fmt.Errorf("%q is not a node of lab %s", node, k.lab.Metadata.Name)
	}
	return k.engine.Top(ctx, k.cluster+"-"+node, provision.NodePSArgs)
}
