package provision

import "context"

// What another runtime needs to serve node access itself (a class's
// learner node, whose listener the class starts in the node's container):
// the session program each connection runs, the sandbox's node command,
// and where that command finds a node it cannot find by its node-access
// Pod.

// Keys of the node-access certificates, as files of NodeAccessTLSDir and
// of the listener's directory.
const (
	NodeAccessCA   = tlsCA
	NodeAccessCert = tlsCert
	NodeAccessKey  = tlsKey
)

// NodeAccessHosts is the sandbox's file, root's only, that names the nodes
// a runtime serves itself: a line per node, NAME HOST PORT. The node
// command connects to HOST:PORT for NAME, and asks for no node-access Pod.
const NodeAccessHosts = NodeAccessTLSDir + "/nodes"

// NodeSession is the program each connection to a node's listener runs
// with the node's perl.
func NodeSession() string { return nodeSession }

// NodeCommandScript is the sandbox's node command (NodeCommand).
func NodeCommandScript() string { return nodeCommand }

type nodeAccessServedKey struct{}

// NodeAccessServed is ctx for SetupCluster and the namespaces' reset on a
// runtime that serves node access itself: they run no node-access Pods.
func NodeAccessServed(ctx context.Context) context.Context {
	return context.WithValue(ctx, nodeAccessServedKey{}, true)
}

func nodeAccessServed(ctx context.Context) bool {
	served, _ := ctx.Value(nodeAccessServedKey{}).(bool)
	return served
}
