package kind

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/kind/pkg/cluster"
	kindexec "sigs.k8s.io/kind/pkg/exec"
	kindlog "sigs.k8s.io/kind/pkg/log"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// ControlPlaneServer is the API server's address inside the kind network,
// the one the sandbox uses.
func ControlPlaneServer(lab string) string {
	return "https://" + provision.ClusterName(lab) + "-control-plane:6443"
}

// ClusterConfig is what kind needs beyond the cluster's name.
type ClusterConfig struct {
	NodeImage string
	// DisableDefaultCNI is set for node images that bring their own CNI.
	DisableDefaultCNI bool
	// KubeadmPatches are kubeadm config patches the node image needs.
	KubeadmPatches []string
	// WaitForReady bounds kind's wait for the control plane.
	WaitForReady time.Duration
	// AuditDir, when set, is the host directory the API server keeps its
	// audit log in (see audit.go); AuditPolicy is written there before
	// the cluster is made.
	AuditDir    string
	AuditPolicy []byte
	// Workers are the lab's worker nodes. When the node image brings no
	// CNI of its own, every node registers tainted networkUnreadyTaint: the
	// network add-on writes its CNI configuration, then up removes the
	// taint.
	Workers []lab.Node
	// NodeLabels are set on every node (a class cluster's mark).
	NodeLabels map[string]string
}

// clusterConfig is the cluster labctl makes for l on nodeImage, with the
// settings the node image needs and the API server's audit log in
// auditDir: `up` creates it and `images kind-config` prints it.
func clusterConfig(l *lab.Lab, nodeImage, auditDir string) ClusterConfig {
	ks := images.KindSettingsFor(nodeImage)
	return ClusterConfig{
		NodeImage:         nodeImage,
		DisableDefaultCNI: ks.DisableDefaultCNI,
		KubeadmPatches:    ks.KubeadmConfigPatches,
		WaitForReady:      3 * time.Minute,
		AuditDir:          auditDir,
		AuditPolicy:       provision.AuditPolicy(l, false),
		Workers:           l.Cluster.Workers,
	}
}

// networkUnreadyTaint keeps every Pod but the add-ons' node agents off a
// node of a multi-node lab until the network add-on has written the node's
// CNI configuration for its own Pod CIDR.
const networkUnreadyTaint = "labctl.dev/network-unready"

// kindConfig builds the kind cluster configuration: one control plane,
// and the lab's workers.
func kindConfig(c ClusterConfig) *v1alpha4.Cluster {
	cfg := &v1alpha4.Cluster{
		TypeMeta:             v1alpha4.TypeMeta{Kind: "Cluster", APIVersion: "kind.x-k8s.io/v1alpha4"},
		Nodes:                []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole, Image: c.NodeImage}},
		KubeadmConfigPatches: append([]string(nil), c.KubeadmPatches...),
	}
	cfg.Networking.DisableDefaultCNI = c.DisableDefaultCNI
	if len(c.Workers) > 0 && c.DisableDefaultCNI {
		// The control plane's CoreDNS too must wait for its node's CNI
		// configuration: a Pod made on the image's single-node one would
		// take the whole Pod network for its own link.
		cfg.Nodes[0].KubeadmConfigPatches = []string{joinTaints("InitConfiguration", []string{
			"{key: node-role.kubernetes.io/control-plane, effect: NoSchedule}",
			"{key: " + networkUnreadyTaint + ", effect: NoSchedule}",
		})}
	}
	for _, w := range c.Workers {
		cfg.Nodes = append(cfg.Nodes, workerNode(c, w))
	}
	for i := range cfg.Nodes {
		for k, v := range c.NodeLabels {
			if cfg.Nodes[i].Labels == nil {
				cfg.Nodes[i].Labels = map[string]string{}
			}
			cfg.Nodes[i].Labels[k] = v
		}
	}
	if c.AuditDir != "" {
		addAudit(cfg, c.AuditDir)
	}
	v1alpha4.SetDefaultsCluster(cfg)
	return cfg
}

// workerNode is the kind node of worker w: its labels, and its taints set
// by kubeadm when it joins.
func workerNode(c ClusterConfig, w lab.Node) v1alpha4.Node {
	var taints []string
	if c.DisableDefaultCNI {
		taints = append(taints, "{key: "+networkUnreadyTaint+", effect: NoSchedule}")
	}
	for _, t := range w.Taints {
		if parsed, err := lab.ParseTaint(t); err == nil {
			taints = append(taints, fmt.Sprintf("{key: %q, value: %q, effect: %s}", parsed.Key, parsed.Value, parsed.Effect))
		}
	}
	n := v1alpha4.Node{Role: v1alpha4.WorkerRole, Image: c.NodeImage, Labels: maps.Clone(w.Labels)}
	if len(taints) > 0 {
		n.KubeadmConfigPatches = []string{joinTaints("JoinConfiguration", taints)}
	}
	return n
}

// joinTaints is the kubeadm configuration patch of kind (InitConfiguration
// or JoinConfiguration) that registers its node with taints (flow mappings).
func joinTaints(kind string, taints []string) string {
	return "apiVersion: kubeadm.k8s.io/v1beta4\nkind: " + kind + "\nnodeRegistration:\n  taints:\n  - " +
		strings.Join(taints, "\n  - ") + "\n"
}

// adminKubeconfigFile, in the lab's state directory, is where kind writes
// the cluster's admin kubeconfig when it makes the cluster.
const adminKubeconfigFile = "admin.kubeconfig"

// kind wraps kind's provider for one lab's cluster. Kind's calls take no
// context: each is run in a goroutine and abandoned, or undone, when the
// context ends.
type kind struct {
	provider *cluster.Provider
	name     string
	// kubeconfig is the host file kind writes the admin credentials to.
	kubeconfig string
	// admin is the admin config as adminConfig last read it, until the
	// cluster is made or removed: reading it asks the node through
	// several docker commands, a second or more on a busy machine.
	admin *rest.Config
}

func newKind(lab, kubeconfigPath string, verbose io.Writer) *kind {
	return newKindNamed(provision.ClusterName(lab), kubeconfigPath, verbose)
}

// newKindNamed is the kind cluster named name, not a lab's.
func newKindNamed(name, kubeconfigPath string, verbose io.Writer) *kind {
	var logger kindlog.Logger = kindlog.NoopLogger{}
	if verbose != nil {
		logger = writerLogger{w: verbose}
	}
	return &kind{
		provider:   cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(logger)),
		name:       name,
		kubeconfig: kubeconfigPath,
	}
}

// exists reports whether kind knows the cluster.
func (k *kind) exists(ctx context.Context) (bool, error) {
	names, err := runBounded(ctx, time.Minute, func() ([]string, error) { return k.provider.List() })
	if err != nil {
		return false, fmt.Errorf("listing kind clusters: %w", err)
	}
	return slices.Contains(names, k.name), nil
}

// create makes the cluster. When ctx ends first, the half-made cluster is
// deleted (kind itself cannot be interrupted) and ctx's error returned.
func (k *kind) create(ctx context.Context, c ClusterConfig) error {
	k.admin = nil
	if c.AuditDir != "" {
		if err := startAuditLog(c.AuditDir, c.AuditPolicy); err != nil {
			return err
		}
	}
	wait := c.WaitForReady
	if wait == 0 {
		wait = 3 * time.Minute
	}
	done := make(chan error, 1)
	go func() {
		done <- k.provider.Create(k.name,
			cluster.CreateWithV1Alpha4Config(kindConfig(c)),
			cluster.CreateWithNodeImage(c.NodeImage),
			cluster.CreateWithWaitForReady(wait),
			cluster.CreateWithKubeconfigPath(k.kubeconfig),
			cluster.CreateWithDisplayUsage(false),
			cluster.CreateWithDisplaySalutation(false),
		)
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("creating kind cluster %s: %w%s", k.name, err, commandOutput(err))
		}
		return nil
	case <-ctx.Done():
		// Removing the nodes makes kind's create fail soon; wait for it so
		// nothing it does afterwards outlives this call.
		_ = k.provider.Delete(k.name, k.kubeconfig)
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
		}
		_ = k.provider.Delete(k.name, k.kubeconfig)
		return fmt.Errorf("creating kind cluster %s: %w", k.name, ctx.Err())
	}
}

// delete removes the cluster; a missing one is not an error. A node that
// the engine cannot kill because runc left a cgroup in it frozen (see
// thawNodes) is thawed, and the delete tried once more.
func (k *kind) delete(ctx context.Context) error {
	k.admin = nil
	del := func() error {
		_, err := runBounded(ctx, 3*time.Minute, func() (struct{}, error) {
			return struct{}{}, k.provider.Delete(k.name, k.kubeconfig)
		})
		return err
	}
	err := del()
	if err != nil && ctx.Err() == nil && k.thawNodes() > 0 {
		err = del()
	}
	if err != nil {
		return fmt.Errorf("deleting kind cluster %s: %w", k.name, err)
	}
	return nil
}

// freezerRoots are where the engine puts a container's cgroup in cgroup
// v1's freezer hierarchy (cgroupfs and systemd drivers), by its ID.
var freezerRoots = []string{"/sys/fs/cgroup/freezer/docker/%s", "/sys/fs/cgroup/freezer/system.slice/docker-%s.scope"}

// thawNodes thaws every frozen cgroup of cgroup v1's freezer below the
// cluster's node containers, and returns how many it thawed. On cgroup v1
// runc freezes a container while it changes its device rules; when it dies
// meanwhile the cgroup stays frozen, and the node, whose processes wait in
// it, can no longer be killed ("did not receive an exit event").
func (k *kind) thawNodes() int {
	nodes, err := k.provider.ListNodes(k.name)
	if err != nil {
		return 0
	}
	thawed := 0
	for _, n := range nodes {
		out, err := kindexec.Output(kindexec.Command("docker", "inspect", "--format", "{{.Id}}", n.String()))
		id := strings.TrimSpace(string(out))
		if err != nil || id == "" || strings.ContainsAny(id, "/.") {
			continue
		}
		for _, root := range freezerRoots {
			thawed += thawBelow(fmt.Sprintf(root, id))
		}
	}
	return thawed
}

// thawBelow thaws the frozen freezer cgroups in the tree at root, and
// returns how many.
func thawBelow(root string) int {
	thawed := 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		state := filepath.Join(p, "freezer.state")
		if b, err := os.ReadFile(state); err == nil && strings.TrimSpace(string(b)) == "FROZEN" &&
			os.WriteFile(state, []byte("THAWED"), 0) == nil {
			thawed++
		}
		return nil
	})
	return thawed
}

// adminConfig reads the cluster's admin credentials (host-facing address)
// from the control-plane node, once for the cluster as this kind has it.
func (k *kind) adminConfig(ctx context.Context) (*rest.Config, error) {
	if k.admin != nil {
		return rest.CopyConfig(k.admin), nil
	}
	raw, err := runBounded(ctx, time.Minute, func() (string, error) { return k.provider.KubeConfig(k.name, false) })
	if err != nil {
		return nil, fmt.Errorf("reading the admin kubeconfig of %s: %w", k.name, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("parsing the admin kubeconfig of %s: %w", k.name, err)
	}
	cfg.Timeout = 30 * time.Second
	k.admin = rest.CopyConfig(cfg)
	return cfg, nil
}

// savedAdmin is the admin config kind wrote into the lab's state directory
// when it made the cluster, when the cluster's API server answers it: its
// certificate authority is the cluster's own, so a file left from a
// cluster since made anew, or a port another cluster took, never answers.
// Reading it spares the docker commands adminConfig runs.
func (k *kind) savedAdmin(ctx context.Context) (*rest.Config, bool) {
	if k.kubeconfig == "" {
		return nil, false
	}
	file, err := clientcmd.LoadFromFile(k.kubeconfig)
	if err != nil {
		return nil, false
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*file, "kind-"+k.name, nil, nil).ClientConfig()
	if err != nil {
		return nil, false
	}
	cfg.Timeout = 30 * time.Second
	ctx, cancel := context.WithTimeout(ctx, savedAdminWait)
	defer cancel()
	if apiReady(ctx, cfg) != nil {
		return nil, false
	}
	k.admin = rest.CopyConfig(cfg)
	return cfg, true
}

// savedAdminWait bounds the try of the saved admin config; when it runs
// out, the cluster is asked through kind, as when there is none.
const savedAdminWait = 5 * time.Second

// commandOutput is the tail of the output of the command behind a kind
// error, if any, for the error message.
func commandOutput(err error) string {
	re := kindexec.RunErrorForError(err)
	if re == nil || len(re.Output) == 0 {
		return ""
	}
	return "\n" + provision.LastLines(string(re.Output), 25)
}

// runBounded runs a call that takes no context, returning early with an
// error when ctx ends or the timeout passes.
func runBounded[T any](ctx context.Context, timeout time.Duration, f func() (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// writerLogger prints kind's messages as lines.
type writerLogger struct{ w io.Writer }

func (l writerLogger) Warn(m string)                        { line(l.w, m) }
func (l writerLogger) Warnf(f string, a ...any)             { line(l.w, fmt.Sprintf(f, a...)) }
func (l writerLogger) Error(m string)                       { line(l.w, m) }
func (l writerLogger) Errorf(f string, a ...any)            { line(l.w, fmt.Sprintf(f, a...)) }
func (l writerLogger) V(v kindlog.Level) kindlog.InfoLogger { return infoLogger{l.w, v <= 1} }

type infoLogger struct {
	w  io.Writer
	on bool
}

func (l infoLogger) Info(m string) {
	if l.on {
		line(l.w, m)
	}
}

func (l infoLogger) Infof(f string, a ...any) {
	if l.on {
		line(l.w, fmt.Sprintf(f, a...))
	}
}

func (l infoLogger) Enabled() bool { return l.on }

// line writes m ending in exactly one newline.
func line(w io.Writer, m string) {
	fmt.Fprintln(w, strings.TrimRight(m, "\n"))
}
