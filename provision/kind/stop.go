package kind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/internal/atomicfile"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
	"github.com/labctl/labctl/sandbox"
)

// stoppedFile marks, in the lab's state directory, a lab `labctl stop`
// stopped; it holds the nodes' addresses at the time, so that start can
// tell a node that came back on another one.
const stoppedFile = "stopped.json"

// kindClusterLabel is the label kind puts on its node containers, with the
// cluster's name.
const kindClusterLabel = "io.x-k8s.kind.cluster"

// ErrStopped says the lab was stopped by `labctl stop`: its containers are
// kept, not running. It is also a provision.ErrNotUp.
var ErrStopped error = stoppedError{}

type stoppedError struct{}

func (stoppedError) Error() string {
	return "the lab is stopped: run `labctl start` to resume it"
}

func (stoppedError) Is(target error) bool { return target == provision.ErrNotUp }

// stoppedRecord is what stoppedFile holds.
type stoppedRecord struct {
	// Nodes are the node containers' addresses on the kind network, by
	// container name.
	Nodes map[string]string `json:"nodes"`
}

// Stopped reports whether lab name was stopped by `labctl stop` and not
// started since.
func Stopped(name string) bool {
	dir, err := stateDir(name)
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, stoppedFile))
	return err == nil
}

func readStopped(dir string) stoppedRecord {
	var r stoppedRecord
	b, err := os.ReadFile(filepath.Join(dir, stoppedFile))
	if err == nil {
		_ = json.Unmarshal(b, &r)
	}
	return r
}

// clearStopped forgets that the lab was stopped; a missing mark is fine.
func clearStopped(dir string) error {
	if err := os.Remove(filepath.Join(dir, stoppedFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", filepath.Join(dir, stoppedFile), err)
	}
	return nil
}

// labContainers are the containers of lab l in the order start starts them:
// the control-plane node, the workers, the sandbox, the grader. Only those
// that exist are listed.
func labContainers(ctx context.Context, engine *docker.Engine, l *lab.Lab) (nodes, others []string, err error) {
	name := l.Metadata.Name
	if l.HasCluster() {
		objs, err := engine.ListByLabel(ctx, map[string]string{kindClusterLabel: provision.ClusterName(name)})
		if err != nil {
			return nil, nil, err
		}
		for _, o := range objs {
			if o.Kind == "container" {
				nodes = append(nodes, o.Name)
			}
		}
		nodes = nodeOrder(nodes, controlPlaneNode(name))
	}
	for _, c := range []string{sandbox.ContainerName(name), sandbox.GraderName(name)} {
		st, err := engine.State(ctx, c)
		if err != nil {
			return nil, nil, err
		}
		if st.Exists {
			others = append(others, c)
		}
	}
	return nodes, others, nil
}

// nodeOrder sorts node container names with the control plane first, so
// that it is started first and stopped last.
func nodeOrder(nodes []string, controlPlane string) []string {
	sort.Slice(nodes, func(i, j int) bool {
		if (nodes[i] == controlPlane) != (nodes[j] == controlPlane) {
			return nodes[i] == controlPlane
		}
		return nodes[i] < nodes[j]
	})
	return nodes
}

// Stop stops the lab's containers (the sandbox, the grader and the kind
// nodes) without removing them: the cluster's objects, the volumes, /root
// and the progress are kept, and Start resumes them. A lab of which nothing
// exists is ErrNotUp.
func Stop(ctx context.Context, l *lab.Lab, st *statusline.Logger, c *msg.Catalog) error {
	if l == nil || l.Metadata.Name == "" {
		return errors.New("provision: no lab given")
	}
	if st == nil {
		st = statusline.Discard()
	}
	name := l.Metadata.Name
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		return err
	}
	defer engine.Close()
	dir, err := stateDir(name)
	if err != nil {
		return err
	}
	nodes, others, err := labContainers(ctx, engine, l)
	if err != nil {
		return err
	}
	if len(others) == 0 || (l.HasCluster() && len(nodes) == 0) {
		return fmt.Errorf("lab %s has no cluster or sandbox to stop: %w", name, provision.ErrNotUp)
	}
	st.Start(c.Say(msg.StatusStopping, name))
	rec := stoppedRecord{Nodes: map[string]string{}}
	for _, n := range nodes {
		if addrs, err := engine.Addresses(ctx, n); err == nil && addrs[sandbox.KindNetwork] != "" {
			rec.Nodes[n] = addrs[sandbox.KindNetwork]
		}
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	// The mark first: a lab stopped half-way is still one to start.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, stoppedFile), b, 0o600); err != nil {
		return fmt.Errorf("marking lab %s stopped: %w", name, err)
	}
	// The learner's side first, the control plane last.
	order := slices.Clone(others)
	for i := len(nodes) - 1; i >= 0; i-- {
		order = append(order, nodes[i])
	}
	for _, c := range order {
		if err := engine.Stop(ctx, c); err != nil {
			st.End(false)
			return fmt.Errorf("stopping lab %s: %w", name, err)
		}
	}
	st.End(true)
	return nil
}

// startWait bounds start's wait for the cluster to serve the lab again.
const startWait = 3 * time.Minute

// Start starts the containers Stop stopped, waits until the API server
// answers, the nodes are Ready and the lab's namespaces are served, renews
// what credentials need it, and returns the lab live, as the learner left
// it. Only opts.Lab, Status, Catalog and CheckerBinary are used.
func Start(ctx context.Context, opts Options) (*provision.Live, error) {
	l := opts.Lab
	if l == nil || l.Metadata.Name == "" {
		return nil, errors.New("provision: no lab given")
	}
	st := opts.Status
	if st == nil {
		st = statusline.Discard()
	}
	name := l.Metadata.Name
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			st.End(false)
			engine.Close()
		}
	}()
	dir, err := stateDir(name)
	if err != nil {
		return nil, err
	}
	nodes, others, err := labContainers(ctx, engine, l)
	if err != nil {
		return nil, err
	}
	if len(others) < 2 || (l.HasCluster() && len(nodes) == 0) {
		return nil, fmt.Errorf("lab %s has no stopped cluster and sandbox to start: run `labctl up` to make them: %w", name, provision.ErrNotUp)
	}
	st.Start(opts.Catalog.Say(msg.StatusStarting, name))
	for _, c := range append(slices.Clone(nodes), others...) {
		if err := engine.Start(ctx, c); err != nil {
			return nil, fmt.Errorf("starting lab %s: %w", name, err)
		}
	}
	rt := newKindRuntime(l, engine)
	rt.up = opts
	if l.HasCluster() {
		moved := movedNodes(ctx, engine, readStopped(dir), nodes)
		st.Start(opts.Catalog.Say(msg.StatusWaitingCluster))
		if err := waitServing(ctx, l, startWait); err != nil {
			if len(moved) > 0 && len(nodes) > 1 {
				return nil, fmt.Errorf("%w\n%s", err, movedMessage(moved))
			}
			return nil, fmt.Errorf("%w: run `labctl start` again; if it still fails, `labctl down` then `labctl up` make the cluster afresh (your /root and progress are kept, the cluster's objects are not)", err)
		}
	}
	st.Start(opts.Catalog.Say(msg.StatusRenewingAccess))
	live, err := rt.connect(ctx)
	if err != nil {
		return nil, err
	}
	if l.HasCluster() {
		renewed, err := live.RenewCredentials(ctx, time.Now())
		if err != nil {
			return nil, err
		}
		if renewed {
			if err := live.WriteKubeconfig(ctx); err != nil {
				return nil, err
			}
		}
		if err := rt.waitReady(ctx); err != nil {
			return nil, err
		}
	}
	if err := clearStopped(dir); err != nil {
		return nil, err
	}
	st.End(true)
	ok = true
	return live, nil
}

// movedNodes lists the nodes whose address on the kind network is not the
// one rec kept, as "name (old -> new)".
func movedNodes(ctx context.Context, engine *docker.Engine, rec stoppedRecord, nodes []string) []string {
	now := map[string]string{}
	for _, n := range nodes {
		if addrs, err := engine.Addresses(ctx, n); err == nil {
			now[n] = addrs[sandbox.KindNetwork]
		}
	}
	return changedAddresses(rec.Nodes, now)
}

// changedAddresses lists the names whose address in now differs from the
// one in was, as "name (was -> now)", sorted; names unknown to was are
// not listed.
func changedAddresses(was, now map[string]string) []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(was)) {
		if cur, ok := now[n]; ok && cur != was[n] {
			out = append(out, fmt.Sprintf("%s (%s -> %s)", n, was[n], cur))
		}
	}
	return out
}

// movedMessage explains a multi-node cluster whose nodes came back on other
// addresses, which kind's nodes do not follow.
func movedMessage(moved []string) string {
	return "the cluster's nodes came back on other addresses on the Docker network: " + strings.Join(moved, ", ") +
		"; a kind cluster of several nodes cannot follow that. Run `labctl down` then `labctl up` to make the cluster afresh " +
		"(your /root and progress are kept, the objects you made in the cluster are not)"
}

// waitServing waits, up to limit, until the API server answers the admin
// credentials, every node is Ready and the lab's namespaces are served.
func waitServing(ctx context.Context, l *lab.Lab, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	k := newKind(l.Metadata.Name, "", nil)
	last := "the API server has not answered"
	for {
		why := servingProblem(ctx, k, l)
		if why == "" {
			return nil
		}
		last = why
		select {
		case <-ctx.Done():
			return fmt.Errorf("the lab's cluster is not serving within %s: %s", limit, last)
		case <-time.After(time.Second):
		}
	}
}

// servingProblem says why the cluster does not serve the lab yet; "" when
// it does.
func servingProblem(ctx context.Context, k *kind, l *lab.Lab) string {
	cfg, err := k.adminConfig(ctx)
	if err != nil {
		return "reading the admin config: " + err.Error()
	}
	if err := apiReady(ctx, cfg); err != nil {
		return "the API server is not ready: " + err.Error()
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err.Error()
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return "listing nodes: " + err.Error()
	}
	if why := notReady(nodes.Items); why != "" {
		return why
	}
	for _, ns := range l.Cluster.Namespaces {
		if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			return "namespace " + ns + ": " + err.Error()
		}
	}
	return ""
}

// notReady names the nodes that are not Ready; "" when all are (and there
// is one at least).
func notReady(nodes []corev1.Node) string {
	if len(nodes) == 0 {
		return "no node is registered"
	}
	var bad []string
	for _, n := range nodes {
		ready := false
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			bad = append(bad, n.Name)
		}
	}
	if len(bad) > 0 {
		return "nodes not Ready: " + strings.Join(bad, ", ")
	}
	return ""
}
