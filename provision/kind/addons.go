package kind

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
)

// addonManifests are the add-ons' objects, Go templates of addonData.
//
//go:embed addons/*.yaml
var addonManifests embed.FS

// addonNamespace holds every add-on's Pods; lab namespaces may not be
// named labctl-*.
const addonNamespace = "labctl-system"

// Add-on manifests (addons/NAME.yaml) beside the lab's own add-ons.
const (
	// addonNetwork routes Pod traffic between nodes (a lab with workers on
	// a node image without a CNI of its own).
	addonNetwork = "network"
	// addonStorageClass is the class kind makes and the storage add-on
	// replaces.
	addonStorageClass  = "standard"
	storageProvisioner = "rancher.io/local-path"
)

// addonData fills the manifests' templates.
type addonData struct {
	// Image holds the node add-ons, ServeImage the ingress and metrics ones.
	Image, ServeImage, Namespace, PodSubnet string
}

// addonsFor are the add-on manifests l's cluster on nodeImage needs, in
// the order they are applied.
func addonsFor(l *lab.Lab, nodeImage string) []string {
	var out []string
	if len(l.Cluster.Workers) > 0 && images.KindSettingsFor(nodeImage).DisableDefaultCNI {
		out = append(out, addonNetwork)
	}
	if l.Cluster.HasAddon(lab.AddonNetworkPolicy) {
		out = append(out, "network-policy")
	}
	if l.Cluster.HasAddon(lab.AddonStorage) {
		out = append(out, "storage")
	}
	for _, a := range serveAddons {
		if l.Cluster.HasAddon(a) {
			out = append(out, a)
		}
	}
	return out
}

// serveAddons are the add-ons whose programs are in the serving add-ons
// image (images.ServeAddonsRef); their manifests are named after them.
var serveAddons = []string{lab.AddonIngress, lab.AddonMetrics}

// needsServeImage reports whether l's cluster runs any of serveAddons.
func needsServeImage(l *lab.Lab) bool {
	return slices.ContainsFunc(serveAddons, l.Cluster.HasAddon)
}

// needsNodeAddonsImage reports whether l's cluster on nodeImage runs any
// node add-on, or starts reach Pods.
func needsNodeAddonsImage(l *lab.Lab, nodeImage string) bool {
	return slices.ContainsFunc(addonsFor(l, nodeImage), func(n string) bool { return !slices.Contains(serveAddons, n) }) ||
		len(l.ReachNamespaces()) > 0
}

// renderAddons renders the namespace and the named add-ons' manifests into
// objects, in order.
func renderAddons(names []string, d addonData) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, name := range append([]string{"namespace"}, names...) {
		text, err := addonManifests.ReadFile("addons/" + name + ".yaml")
		if err != nil {
			return nil, fmt.Errorf("add-on %s: %w", name, err)
		}
		tmpl, err := template.New(name).Option("missingkey=error").Parse(string(text))
		if err != nil {
			return nil, fmt.Errorf("add-on %s: %w", name, err)
		}
		var out bytes.Buffer
		if err := tmpl.Execute(&out, d); err != nil {
			return nil, fmt.Errorf("add-on %s: %w", name, err)
		}
		for _, doc := range strings.Split(out.String(), "\n---\n") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				return nil, fmt.Errorf("add-on %s: %w", name, err)
			}
			if len(m) > 0 {
				objs = append(objs, &unstructured.Unstructured{Object: m})
			}
		}
	}
	return objs, nil
}

// startAddons applies the add-ons' objects (server-side, so a second up
// changes nothing), waits until the node agents are ready on every node,
// lets other Pods onto the nodes, and waits for the add-ons' Deployments.
func (r *upRun) startAddons(ctx context.Context, admin *rest.Config) error {
	names := addonsFor(r.lab, r.images.node)
	if len(names) == 0 {
		return nil
	}
	return applyAddons(ctx, admin, names, 1+len(r.lab.Cluster.Workers), kindConfig(r.cluster).Networking.PodSubnet)
}

// applyAddons applies the named add-on manifests on a cluster of nodes
// nodes, waits for their node agents, lets Pods onto the nodes and waits
// for their Deployments.
func applyAddons(ctx context.Context, admin *rest.Config, names []string, nodes int, podSubnet string) error {
	cfg := rest.CopyConfig(admin)
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	objs, err := renderAddons(names, addonData{
		Image:      images.AddonsRef(),
		ServeImage: images.ServeAddonsRef(),
		Namespace:  addonNamespace,
		PodSubnet:  podSubnet,
	})
	if err != nil {
		return err
	}
	if slices.Contains(names, "storage") {
		if err := replaceKindStorageClass(ctx, cs); err != nil {
			return err
		}
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("add-on object %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		res := dyn.Resource(m.Resource)
		var c dynamic.ResourceInterface = res
		if obj.GetNamespace() != "" {
			c = res.Namespace(obj.GetNamespace())
		}
		if _, err := c.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "labctl", Force: true}); err != nil {
			return fmt.Errorf("applying add-on object %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
	}
	// The node agents first (they run on the node's network); the taint
	// keeps every other Pod off the nodes until they have.
	if err := waitAddons(ctx, cs, nodes, false, 3*time.Minute); err != nil {
		return err
	}
	if err := untaintNodes(ctx, cs); err != nil {
		return err
	}
	return waitAddons(ctx, cs, nodes, true, 3*time.Minute)
}

// replaceKindStorageClass deletes the StorageClass kind makes (host-path,
// whose claims no provisioner binds): a class's provisioner cannot change.
func replaceKindStorageClass(ctx context.Context, cs kubernetes.Interface) error {
	sc, err := cs.StorageV1().StorageClasses().Get(ctx, addonStorageClass, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if sc.Provisioner == storageProvisioner {
		return nil
	}
	err = cs.StorageV1().StorageClasses().Delete(ctx, addonStorageClass, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("replacing kind's StorageClass %s: %w", addonStorageClass, err)
	}
	return nil
}

// waitAddons waits until every add-on DaemonSet runs a ready Pod on each of
// the cluster's nodes and, with deployments, every add-on Deployment is
// available, and says which is not when timeout passes.
func waitAddons(ctx context.Context, cs kubernetes.Interface, nodes int, deployments bool, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		waiting, err := addonsWaiting(ctx, cs, nodes, deployments)
		if err == nil && len(waiting) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("not ready: %s", strings.Join(waiting, ", "))
			}
			return fmt.Errorf("the cluster's add-ons did not start in %s (%w): see `kubectl -n %s get pods` with the admin kubeconfig", timeout, err, addonNamespace)
		case <-time.After(time.Second):
		}
	}
}

// addonsWaiting lists the add-ons that are not ready yet.
func addonsWaiting(ctx context.Context, cs kubernetes.Interface, nodes int, deployments bool) ([]string, error) {
	var waiting []string
	dss, err := cs.AppsV1().DaemonSets(addonNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, ds := range dss.Items {
		s := ds.Status
		if int(s.DesiredNumberScheduled) < nodes || s.NumberReady < s.DesiredNumberScheduled || s.ObservedGeneration < ds.Generation {
			waiting = append(waiting, fmt.Sprintf("%s (%d of %d nodes)", ds.Name, s.NumberReady, nodes))
		}
	}
	if !deployments {
		return waiting, nil
	}
	deps, err := cs.AppsV1().Deployments(addonNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for _, d := range deps.Items {
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		if d.Status.AvailableReplicas < want || d.Status.ObservedGeneration < d.Generation {
			waiting = append(waiting, d.Name)
		}
	}
	return waiting, nil
}

// untaintNodes removes networkUnreadyTaint from every node. The kubelet
// and the node controllers write the node at the same time, so an update
// that loses to theirs reads the node again and retries.
func untaintNodes(ctx context.Context, cs kubernetes.Interface) error {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, n := range nodes.Items {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			kept := slices.DeleteFunc(slices.Clone(cur.Spec.Taints), func(t corev1.Taint) bool { return t.Key == networkUnreadyTaint })
			if len(kept) == len(cur.Spec.Taints) {
				return nil
			}
			cur.Spec.Taints = kept
			_, err = cs.CoreV1().Nodes().Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("letting Pods onto node %s: %w", n.Name, err)
		}
	}
	return nil
}
