package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/docker"
)

// A class cluster is a kind cluster on this machine for `labctl class`
// (`labctl class cluster create`): labctl's node image, which holds the
// control-plane images of the learners' Pods, with the sandbox image
// loaded into its nodes, the add-ons a class needs (NetworkPolicy enforced,
// claims bound by a provisioner that makes their directories, the default
// StorageClass) and a bound on each Pod's processes. It is made as `up`
// makes a lab's cluster, by the same code.

// DefaultClassCluster is the name of the class cluster when none is given.
const DefaultClassCluster = "labctl-class"

// classClusterLabel, on every node of a class cluster, holds its name: a
// kind cluster without it (a lab's, or one of the user's own) is never
// reused or deleted as a class cluster.
const classClusterLabel = "labctl.dev/class-cluster"

// classPodPids bounds the processes of each Pod on a class cluster's nodes.
const classPodPids = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\npodPidsLimit: 4096\n"

// classAddons are the lab add-ons a class cluster runs.
var classAddons = []string{lab.AddonNetworkPolicy, lab.AddonStorage}

// ClassClusterOptions says which class cluster to make.
type ClassClusterOptions struct {
	// Name is kind's name of the cluster (DefaultClassCluster if empty).
	Name string
	// Workers is the number of worker nodes beside the control plane.
	Workers int
	// NodeImage and SandboxImage default to the images labctl builds.
	NodeImage, SandboxImage string
	// Kubeconfig is the file the cluster's admin kubeconfig is written to
	// (default: ClassClusterKubeconfig(Name)).
	Kubeconfig string
	Status     *statusline.Logger
	// Log receives kind's own detail.
	Log io.Writer
}

// ClassCluster is a class cluster made or found by CreateClassCluster.
type ClassCluster struct {
	// Name is kind's name of the cluster; Kubeconfig and Context are what
	// `labctl class up` takes as --kubeconfig and --context.
	Name, Kubeconfig, Context string
	// Created is set when this call made the cluster.
	Created bool
	// Workers is the number of its worker nodes.
	Workers int
	k       *kind
}

var classClusterName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,48}[a-z0-9])?$`)

// ValidClassClusterName says what is wrong with a class cluster's name.
func ValidClassClusterName(name string) error {
	if !classClusterName.MatchString(name) {
		return fmt.Errorf("class cluster name %q is not valid: use lower-case letters, digits and '-', at most 50, starting and ending with a letter or digit", name)
	}
	return nil
}

// ClassClusterKubeconfig is where the admin kubeconfig of the class
// cluster name is kept: labctl's state directory, not the user's
// kubeconfig.
func ClassClusterKubeconfig(name string) (string, error) {
	// Lab names cannot begin with a dot: no lab's state is here.
	dir, err := statedir.Dir(os.Getenv, ".class-clusters")
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name, "kubeconfig"), nil
}

// CreateClassCluster makes the class cluster, or brings one made before up
// to what it must be (its images loaded, its add-ons running), and says
// each step on o.Status. A kind cluster of that name that is not a class
// cluster is refused.
func CreateClassCluster(ctx context.Context, o ClassClusterOptions) (c *ClassCluster, err error) {
	st := o.Status
	if st == nil {
		st = statusline.Discard()
	}
	defer func() {
		if err != nil {
			st.End(false)
		}
	}()
	if o.Name == "" {
		o.Name = DefaultClassCluster
	}
	if err := ValidClassClusterName(o.Name); err != nil {
		return nil, err
	}
	if o.Workers < 0 || o.Workers > 10 {
		return nil, fmt.Errorf("--workers %d is out of range: give 0 to 10 worker nodes", o.Workers)
	}
	if o.NodeImage == "" {
		o.NodeImage = images.NodeRef()
	}
	if o.SandboxImage == "" {
		o.SandboxImage = images.SandboxRef()
	}
	if o.Kubeconfig == "" {
		if o.Kubeconfig, err = ClassClusterKubeconfig(o.Name); err != nil {
			return nil, err
		}
	}
	st.Start("Checking Docker and labctl's images")
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		return nil, err
	}
	defer engine.Close()
	l := &lab.Lab{}
	l.Cluster.Addons = classAddons
	l.Cluster.Workers = make([]lab.Node, o.Workers)
	addons := addonsFor(l, o.NodeImage)
	load := []string{o.SandboxImage, images.AddonsRef()}
	for _, ref := range append([]string{o.NodeImage}, load...) {
		ok, err := engine.ImagePresent(ctx, ref)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, missingClassImage(ref)
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.Kubeconfig), 0o700); err != nil {
		return nil, fmt.Errorf("creating the directory of the class cluster's kubeconfig: %w", err)
	}
	c = &ClassCluster{Name: o.Name, Kubeconfig: o.Kubeconfig, Context: "kind-" + o.Name, k: newKindNamed(o.Name, o.Kubeconfig, o.Log)}
	exists, err := c.k.exists(ctx)
	if err != nil {
		return nil, err
	}
	if exists {
		st.Start("Reusing class cluster " + o.Name)
		if err := c.checkOurs(ctx); err != nil {
			return nil, err
		}
	} else {
		st.Start(fmt.Sprintf("Creating class cluster %s (%d node(s))", o.Name, 1+o.Workers))
		cfg := classClusterConfig(o)
		if err := c.k.create(ctx, cfg); err != nil {
			_ = c.k.delete(context.WithoutCancel(ctx))
			return nil, err
		}
		c.Created = true
	}
	list, err := runBounded(ctx, time.Minute, func() ([]nodes.Node, error) { return c.k.provider.ListInternalNodes(c.k.name) })
	if err != nil {
		return nil, fmt.Errorf("listing the nodes of %s: %w", o.Name, err)
	}
	c.Workers = len(list) - 1
	names := make([]string, len(list))
	for i, n := range list {
		names[i] = n.String()
	}
	// Images the nodes hold already, in the host's version, are not
	// loaded again: running it again takes seconds.
	missing, err := c.k.missingImages(ctx, engine, load, names...)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		st.Start("Loading images into the nodes: " + strings.Join(missing, ", "))
		if err := c.k.loadLabelled(ctx, engine, missing, names...); err != nil {
			return nil, err
		}
	}
	admin, err := c.k.adminConfig(ctx)
	if err != nil {
		return nil, err
	}
	st.Start("Starting the add-ons: " + strings.Join(addons, ", "))
	if err := applyAddons(ctx, admin, addons, len(list), kindConfig(ClusterConfig{}).Networking.PodSubnet); err != nil {
		return nil, err
	}
	// kind writes the kubeconfig when it makes the cluster; a cluster
	// found gets it written again, in case the file was removed.
	if err := c.k.provider.ExportKubeConfig(c.k.name, c.Kubeconfig, false); err != nil {
		return nil, fmt.Errorf("writing the kubeconfig of class cluster %s: %w", o.Name, err)
	}
	st.End(true)
	return c, nil
}

// classClusterConfig is the kind cluster of a class cluster: its node image
// with the settings it needs, a bound on each Pod's processes, its workers
// and the mark of a class cluster on every node.
func classClusterConfig(o ClassClusterOptions) ClusterConfig {
	ks := images.KindSettingsFor(o.NodeImage)
	return ClusterConfig{
		NodeImage:         o.NodeImage,
		DisableDefaultCNI: ks.DisableDefaultCNI,
		KubeadmPatches:    append(slices.Clone(ks.KubeadmConfigPatches), classPodPids),
		WaitForReady:      3 * time.Minute,
		Workers:           make([]lab.Node, o.Workers),
		NodeLabels:        map[string]string{classClusterLabel: o.Name},
	}
}

// missingClassImage names the image this machine lacks and how to get it.
func missingClassImage(ref string) error {
	how := "`labctl images build` (or `labctl images load FILE` with a bundle of them)"
	if ref == images.AddonsRef() {
		how = "`labctl images build --addons`"
	}
	return fmt.Errorf("image %s is not on this machine: a class cluster is made from labctl's images; make them with %s, then run this again", ref, how)
}

// errNotClassCluster is a kind cluster of the name asked for that is not
// a class cluster.
var errNotClassCluster = errors.New("not a class cluster")

// checkOurs refuses a kind cluster that is not a class cluster
// (errNotClassCluster), or whose API server does not answer.
func (c *ClassCluster) checkOurs(ctx context.Context) error {
	admin, err := c.k.adminConfig(ctx)
	if err == nil {
		var cs *kubernetes.Clientset
		if cs, err = kubernetes.NewForConfig(admin); err == nil {
			var list *corev1.NodeList
			if list, err = cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
				if len(list.Items) == 0 || list.Items[0].Labels[classClusterLabel] != c.Name {
					return fmt.Errorf("a kind cluster named %s exists and is %w made by labctl: give another --name, or remove that cluster with `kind delete cluster --name %s` if you no longer need it", c.Name, errNotClassCluster, c.Name)
				}
				return nil
			}
		}
	}
	return fmt.Errorf("class cluster %s exists but does not answer (%v): remove it with `labctl class cluster delete --name %s` and create it again", c.Name, err, c.Name)
}

// LoadImages imports refs from engine into every node of the cluster, as
// `kind load docker-image` does.
func (c *ClassCluster) LoadImages(ctx context.Context, engine *docker.Engine, refs []string) error {
	return c.k.loadImages(ctx, engine, refs)
}

// DeleteClassCluster removes the class cluster name and its kubeconfig,
// and reports whether there was one. A kind cluster of that name that is
// not a class cluster is left alone, with an error.
func DeleteClassCluster(ctx context.Context, name string, kubeconfig string) (bool, error) {
	if name == "" {
		name = DefaultClassCluster
	}
	if err := ValidClassClusterName(name); err != nil {
		return false, err
	}
	if kubeconfig == "" {
		var err error
		if kubeconfig, err = ClassClusterKubeconfig(name); err != nil {
			return false, err
		}
	}
	// kind would say only that a docker command failed.
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		return false, err
	}
	engine.Close()
	c := &ClassCluster{Name: name, Kubeconfig: kubeconfig, k: newKindNamed(name, kubeconfig, nil)}
	exists, err := c.k.exists(ctx)
	if err != nil {
		return false, err
	}
	if exists {
		if err := c.checkOurs(ctx); err != nil {
			// One that does not answer (stopped, broken) is deleted only
			// when create left its kubeconfig here: a stopped lab's
			// cluster of that name is not a class cluster.
			if _, serr := os.Stat(kubeconfig); errors.Is(err, errNotClassCluster) || serr != nil {
				if !errors.Is(err, errNotClassCluster) {
					err = fmt.Errorf("a kind cluster named %s exists, does not answer, and has no class cluster kubeconfig at %s: if it is no lab's, remove it with `kind delete cluster --name %s`", name, kubeconfig, name)
				}
				return false, err
			}
		}
		if err := c.k.delete(ctx); err != nil {
			return false, err
		}
	}
	if err := os.Remove(kubeconfig); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exists, err
	}
	if def, err := ClassClusterKubeconfig(name); err == nil && def == kubeconfig {
		_ = os.Remove(filepath.Dir(kubeconfig))
	}
	return exists, nil
}
