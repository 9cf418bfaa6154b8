// Package class is the runtime of a class: one lab per learner on an
// existing Kubernetes cluster. The instructor's labctl opens the class
// (Open) and brings learners up, connects to one (Class.Connect: a
// provision.Live over the learner's namespace), reports status and
// capacity, and issues invites; a learner's own labctl reaches their lab
// with an invite (OpenInvite). Processes in the learner's Pods run through
// internal/podexec.
package class

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/docker"
)

// A class runs one lab per learner on an existing Kubernetes cluster, the
// second runtime beside kind and Docker. Each learner has a namespace on
// that cluster (Prefix + learner name) holding a virtual control plane (one
// Pod: etcd, kube-apiserver, kube-controller-manager, the grader and an
// admin container; no nodes) and a sandbox Pod. What exists is read from the
// cluster itself: namespaces carry LabelClassLearner.

// DefaultPrefix prefixes every learner's namespace on the class cluster.
const DefaultPrefix = "labctl-"

// PrefixOr is the namespace prefix of a class configured with prefix:
// DefaultPrefix when it is "".
func PrefixOr(prefix string) string {
	if prefix == "" {
		return DefaultPrefix
	}
	return prefix
}

// Labels of a class's objects on the class cluster.
const (
	// LabelClassLearner names the learner a namespace belongs to.
	LabelClassLearner = "labctl.dev/learner"
	// LabelClassLab names the lab the learner's namespace runs.
	LabelClassLab = "labctl.dev/lab"
	// LabelClassPrefix is the namespace prefix of the class.
	LabelClassPrefix = "labctl.dev/class-prefix"
)

// Config says which cluster a class runs on, and how.
type Config struct {
	Lab *lab.Lab
	// Fixtures is the lab's fixtures directory; nil means none.
	Fixtures fs.FS
	// Kubeconfig is the instructor's kubeconfig file; "" follows kubectl
	// ($KUBECONFIG, then ~/.kube/config). Context "" is its current context.
	Kubeconfig, Context string
	// Prefix of each learner's namespace; "" is DefaultPrefix.
	Prefix string
	// StorageClass of the learners' volumes; "" is the cluster's default.
	StorageClass string
	// SandboxImage is the sandbox image the class cluster's nodes run; ""
	// is the image labctl builds (sandbox.Image()).
	SandboxImage string
	// CheckerBinary overrides the static binary placed in the grader.
	CheckerBinary string
	// LearnerNodes gives each learner a node of their own (NodeImage, in a
	// privileged container of their control-plane Pod), so that a lab
	// whose Pods must run works as a class; the instructor consents to the
	// privilege. Images are the lab's workload images, loaded into each
	// node from the local engine.
	LearnerNodes bool
	NodeImage    string
	Images       []string
	// Placement keeps every learner's Pods on the nodes the instructor
	// chose (dedicated to the class, say).
	Placement Placement
	// NodeAccessOn is the instructor's consent to a lab that makes each
	// learner root on their node (cluster.nodeAccess): the label and
	// taint of the nodes dedicated to such learners (nodeaccess.go). The
	// zero value takes the consent the class's learners were brought up
	// with, if any.
	NodeAccessOn NodeLabel
	// Log, when set, receives progress lines of Up.
	Log io.Writer
}

// Placement is where the learners' Pods may go: nodes with all of
// NodeSelector's labels, and nodes whose taints Tolerations tolerate.
type Placement struct {
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
}

// ParsePlacement reads the --node-selector (KEY=VALUE, comma-separated)
// and --toleration (KEY[=VALUE]:EFFECT, comma-separated) settings.
func ParsePlacement(selector, tolerations string) (Placement, error) {
	var p Placement
	for _, kv := range strings.Split(selector, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return p, fmt.Errorf("node selector %q: write KEY=VALUE, e.g. labctl.dev/class=yes", kv)
		}
		if p.NodeSelector == nil {
			p.NodeSelector = map[string]string{}
		}
		p.NodeSelector[k] = v
	}
	for _, t := range strings.Split(tolerations, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		taint, err := lab.ParseTaint(t)
		if err != nil {
			return p, tolerationError(t, err)
		}
		tol := corev1.Toleration{Key: taint.Key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffect(taint.Effect)}
		if taint.Valued {
			tol.Operator, tol.Value = corev1.TolerationOpEqual, taint.Value
		}
		p.Tolerations = append(p.Tolerations, tol)
	}
	return p, nil
}

// tolerationError says what is wrong with toleration t, which
// lab.ParseTaint refused with err, in the words of --toleration.
func tolerationError(t string, err error) error {
	var te *lab.TaintError
	switch {
	case !errors.As(err, &te):
		return fmt.Errorf("toleration %q: %w", t, err)
	case te.Part == "effect":
		return fmt.Errorf("toleration %q: write KEY[=VALUE]:EFFECT, the effect NoSchedule, PreferNoSchedule or NoExecute, e.g. labctl.dev/class=yes:NoSchedule", t)
	case te.Part == "key" && te.Key == "":
		return fmt.Errorf("toleration %q: the taint's key is missing", t)
	}
	return fmt.Errorf("toleration %q: %s", t, te.Problem)
}

// fits says whether a learner's Pod may go to n.
func (p Placement) fits(n *corev1.Node) bool {
	for k, v := range p.NodeSelector {
		if n.Labels[k] != v {
			return false
		}
	}
	return true
}

// tolerates says whether the learner's Pods tolerate taint.
func (p Placement) tolerates(taint *corev1.Taint) bool {
	for _, t := range p.Tolerations {
		if t.Key == taint.Key && (t.Effect == "" || t.Effect == taint.Effect) &&
			(t.Operator == corev1.TolerationOpExists || t.Value == taint.Value) {
			return true
		}
	}
	return false
}

// LearnerInfo is one learner's namespace as the class cluster reports it.
type LearnerInfo struct {
	Name, Namespace string
	// Ready says the control plane and the sandbox run; Problem says what
	// is not, when not.
	Ready   bool
	Problem string
	// Settling says the only problem is that a Pod that runs is not ready
	// at the moment: Connect waits a little for it (readyGrace).
	Settling bool
}

// Capacity is what the class cluster can still schedule and what one
// learner asks for.
type Capacity struct {
	// Nodes counted (schedulable, Ready).
	Nodes int
	// FreeMemory (bytes) and FreeMilliCPU: allocatable minus the requests
	// of the Pods already there.
	FreeMemory, FreeMilliCPU int64
	// LearnerMemory and LearnerMilliCPU: the requests of one learner's Pods.
	LearnerMemory, LearnerMilliCPU int64
	// Arch is the checker's architecture; OtherArch counts the Ready,
	// schedulable nodes of other architectures, which are not counted
	// above: the learners' Pods do not go there.
	Arch      string
	OtherArch map[string]int
	// NotReady names the nodes that would count but are not Ready yet (a
	// node just made, still tainted not-ready).
	NotReady []string
}

// Fits is how many learners fit in what is free.
func (c Capacity) Fits() int {
	if c.LearnerMemory <= 0 || c.LearnerMilliCPU <= 0 {
		return 0
	}
	return int(min(c.FreeMemory/c.LearnerMemory, c.FreeMilliCPU/c.LearnerMilliCPU))
}

// ErrNoLearner says the class has no learner by that name.
var ErrNoLearner = errors.New("no such learner in the class")

var learnerName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ValidLearnerName says why name cannot name a learner whose namespace is
// prefix+name, or nil: lower-case letters, digits and '-', starting and
// ending with a letter or digit, the namespace at most 63 characters.
func ValidLearnerName(prefix, name string) error {
	prefix = PrefixOr(prefix)
	if !learnerName.MatchString(name) {
		return fmt.Errorf("learner name %q: use lower-case letters, digits and '-', starting and ending with a letter or digit", name)
	}
	if len(prefix)+len(name) > 63 {
		return fmt.Errorf("learner name %q: with the prefix %q the namespace is longer than 63 characters", name, prefix)
	}
	return nil
}

// LabError says a lab cannot run as a class.
type LabError struct {
	Lab    string
	Reason string
}

func (e *LabError) Error() string {
	return fmt.Sprintf("lab %s cannot run as a class: %s", e.Lab, e.Reason)
}

// Class is a class on its cluster, as the instructor's labctl reaches it.
type Class struct {
	cfg      Config
	rest     *rest.Config
	cs       kubernetes.Interface
	cp       images.ControlPlane
	fixtures []byte
	// arch is the checker's architecture (kubernetes.io/arch): the Pods
	// run on nodes of it only. Empty when the checker cannot be read;
	// placing it then fails with the reason.
	arch string
	// checker is the static labctl binary placed in every learner's
	// grader, or checkerErr why there is none.
	checker    string
	checkerErr error
	// configz, when set, reads a node's kubelet configuration (tests).
	configz func(ctx context.Context, node string) ([]byte, error)
}

// classWait bounds the wait for a learner's lab to become ready.
const classWait = 4 * time.Minute

// Open connects to the class cluster that cfg names.
func Open(ctx context.Context, cfg Config) (*Class, error) {
	cfg.Prefix = PrefixOr(cfg.Prefix)
	if cfg.SandboxImage == "" {
		cfg.SandboxImage = images.SandboxRef()
	}
	if cfg.LearnerNodes && cfg.NodeImage == "" {
		cfg.NodeImage = images.NodeRef()
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if cfg.Kubeconfig != "" {
		rules.ExplicitPath = cfg.Kubeconfig
	}
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: cfg.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the class cluster's kubeconfig: %w (name it with --kubeconfig and --context)", err)
	}
	rc.QPS, rc.Burst = 50, 100
	rc.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("connecting to the class cluster: %w", err)
	}
	vctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := cs.Discovery().RESTClient().Get().AbsPath("/version").DoRaw(vctx); err != nil {
		return nil, fmt.Errorf("the class cluster at %s does not answer: %w (check --context and --kubeconfig)", rc.Host, err)
	}
	if cfg.Lab != nil && cfg.Lab.Cluster.NodeAccess {
		had, err := recordedNodeAccess(vctx, cs, cfg.Prefix, cfg.Lab.Metadata.Name)
		switch {
		case err != nil:
			return nil, err
		case cfg.NodeAccessOn.IsZero():
			cfg.NodeAccessOn = had
		case !had.IsZero() && had != cfg.NodeAccessOn:
			return nil, fmt.Errorf("the class's learners were brought up with --node-access-on %s, not %s: give the same label, "+
				"or bring the class down (labctl class down --all) to move it to other nodes", had, cfg.NodeAccessOn)
		}
	}
	if cfg.Placement, err = cfg.Placement.withNodeAccess(cfg.NodeAccessOn); err != nil {
		return nil, err
	}
	fx, err := fixturesTar(cfg.Fixtures)
	if err != nil {
		return nil, err
	}
	c := &Class{cfg: cfg, rest: rc, cs: cs, cp: images.ControlPlaneImages(), fixtures: fx}
	// The checker is found once: every learner's grader gets this one, and a
	// class whose binary is missing says so when a learner needs it.
	if c.checker, c.checkerErr = docker.CheckerBinary(cfg.CheckerBinary); c.checkerErr == nil {
		c.arch, _ = docker.BinaryArch(c.checker)
	}
	return c, nil
}

// Close releases the class's connections.
func (c *Class) Close() error { return nil }

// Namespace is the learner's namespace on the class cluster.
func (c *Class) Namespace(learner string) string { return c.cfg.Prefix + learner }

func (c *Class) objects(learner string) classObjects {
	return classObjects{lab: c.cfg.Lab, namespace: c.Namespace(learner), learner: learner, prefix: c.cfg.Prefix,
		image: c.cfg.SandboxImage, cp: c.cp, storageClass: c.cfg.StorageClass, arch: c.arch, nodeImage: c.nodeImage(),
		placement: c.cfg.Placement, nodeAccessOn: c.cfg.NodeAccessOn}
}

// nodeImage is the learners' node image, or "" when they have no node.
func (c *Class) nodeImage() string {
	if !c.cfg.LearnerNodes {
		return ""
	}
	return c.cfg.NodeImage
}

func (c *Class) logf(format string, args ...any) {
	if c.cfg.Log != nil {
		fmt.Fprintf(c.cfg.Log, format+"\n", args...)
	}
}
