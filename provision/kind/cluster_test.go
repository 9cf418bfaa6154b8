package kind

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

func TestKindConfig(t *testing.T) {
	patch := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfailCgroupV1: false\n"
	cfg := kindConfig(ClusterConfig{NodeImage: "labctl/node:x", DisableDefaultCNI: true, KubeadmPatches: []string{patch}})
	if len(cfg.Nodes) != 1 || cfg.Nodes[0].Role != "control-plane" || cfg.Nodes[0].Image != "labctl/node:x" {
		t.Fatalf("nodes = %+v", cfg.Nodes)
	}
	if !cfg.Networking.DisableDefaultCNI || len(cfg.KubeadmConfigPatches) != 1 || cfg.KubeadmConfigPatches[0] != patch {
		t.Fatalf("networking %+v patches %q", cfg.Networking, cfg.KubeadmConfigPatches)
	}
	if cfg.APIVersion != "kind.x-k8s.io/v1alpha4" || cfg.Kind != "Cluster" {
		t.Fatalf("type = %s %s", cfg.APIVersion, cfg.Kind)
	}
	if kindConfig(ClusterConfig{NodeImage: "kindest/node:v1"}).Networking.DisableDefaultCNI {
		t.Fatal("default CNI disabled without being asked")
	}
	if provision.ClusterName("gitops") != "labctl-gitops" || ControlPlaneServer("gitops") != "https://labctl-gitops-control-plane:6443" {
		t.Fatal("names")
	}
}

// TestKindConfigWorkers: each worker is a kind worker node with its labels,
// joining with its taints and, on a node image without a CNI, the taint
// that keeps lab Pods off it until the network add-on has configured it.
func TestKindConfigWorkers(t *testing.T) {
	c := ClusterConfig{NodeImage: "labctl/node:x", DisableDefaultCNI: true, Workers: []lab.Node{
		{Labels: map[string]string{"zone": "a"}},
		{Labels: map[string]string{"zone": "b"}, Taints: []string{"dedicated=db:NoSchedule", "gpu:NoExecute"}},
	}}
	cfg := kindConfig(c)
	if len(cfg.Nodes) != 3 || cfg.Nodes[1].Role != v1alpha4.WorkerRole || cfg.Nodes[2].Image != "labctl/node:x" {
		t.Fatalf("nodes = %+v", cfg.Nodes)
	}
	if cfg.Nodes[1].Labels["zone"] != "a" || cfg.Nodes[2].Labels["zone"] != "b" {
		t.Fatalf("labels = %v %v", cfg.Nodes[1].Labels, cfg.Nodes[2].Labels)
	}
	join := registrationTaints(t, cfg.Nodes[2])
	want := []corev1.Taint{
		{Key: networkUnreadyTaint, Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule},
		{Key: "gpu", Effect: corev1.TaintEffectNoExecute},
	}
	if join.Kind != "JoinConfiguration" || !reflect.DeepEqual(join.Taints, want) {
		t.Fatalf("join patch = %+v", join)
	}
	initCfg := registrationTaints(t, cfg.Nodes[0])
	if initCfg.Kind != "InitConfiguration" || !reflect.DeepEqual(initCfg.Taints, []corev1.Taint{
		{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule},
		{Key: networkUnreadyTaint, Effect: corev1.TaintEffectNoSchedule},
	}) {
		t.Fatalf("control plane patch = %+v", initCfg)
	}
	// kind's own CNI needs no waiting: only the lab's taints.
	c.DisableDefaultCNI = false
	if cfg := kindConfig(c); len(cfg.Nodes[1].KubeadmConfigPatches) != 0 || len(cfg.Nodes[0].KubeadmConfigPatches) != 0 {
		t.Fatalf("nodes without taints have patches %q, %q", cfg.Nodes[0].KubeadmConfigPatches, cfg.Nodes[1].KubeadmConfigPatches)
	}
	// One node: the image's own CNI configuration serves it.
	if p := kindConfig(ClusterConfig{NodeImage: "labctl/node:x", DisableDefaultCNI: true}).Nodes[0].KubeadmConfigPatches; len(p) != 0 {
		t.Fatalf("a single node has patches %q", p)
	}
}

// TestAddonsRender: every add-on a lab can ask for renders into objects
// that run only the add-ons images, never pulled, in labctl-system (but
// metrics-server's read of the API servers' authentication settings, a
// binding to a Role kube-system holds).
func TestAddonsRender(t *testing.T) {
	l := &lab.Lab{Cluster: lab.Cluster{Workers: []lab.Node{{}}, Addons: lab.Addons}}
	names := addonsFor(l, "labctl/node:x")
	if !reflect.DeepEqual(names, []string{addonNetwork, "network-policy", "storage", "ingress", "metrics"}) {
		t.Fatalf("addons = %v", names)
	}
	if got := addonsFor(l, "kindest/node:v1"); !reflect.DeepEqual(got, []string{"network-policy", "storage", "ingress", "metrics"}) {
		t.Fatalf("on kind's node image (kindnetd routes) addons = %v", got)
	}
	if got := addonsFor(&lab.Lab{}, "labctl/node:x"); len(got) != 0 {
		t.Fatalf("a lab that asks for nothing gets %v", got)
	}
	// Each image only where it is needed.
	for _, c := range []struct {
		addons      []string
		workers     int
		node, serve bool
	}{
		{nil, 0, false, false},
		{nil, 1, true, false},
		{[]string{lab.AddonIngress}, 0, false, true},
		{[]string{lab.AddonMetrics, lab.AddonStorage}, 0, true, true},
	} {
		l := &lab.Lab{Cluster: lab.Cluster{Addons: c.addons, Workers: make([]lab.Node, c.workers)}}
		if n, s := needsNodeAddonsImage(l, "labctl/node:x"), needsServeImage(l); n != c.node || s != c.serve {
			t.Errorf("addons %v, %d workers: node image %v, serve image %v; want %v, %v", c.addons, c.workers, n, s, c.node, c.serve)
		}
	}
	objs, err := renderAddons(names, addonData{Image: "labctl/addons:t", ServeImage: "labctl/addons-serve:t", Namespace: addonNamespace, PodSubnet: "10.244.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	if objs[0].GetKind() != "Namespace" || objs[0].GetName() != addonNamespace {
		t.Fatalf("first object %s %s, want the namespace", objs[0].GetKind(), objs[0].GetName())
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetLabels()["app.kubernetes.io/part-of"] != "labctl-addons" {
			t.Errorf("%s %s lacks the part-of label", o.GetKind(), o.GetName())
		}
		if ns := o.GetNamespace(); ns != "" && ns != addonNamespace && !(ns == "kube-system" && o.GetKind() == "RoleBinding" && o.GetName() == "labctl-metrics-server-auth-reader") {
			t.Errorf("%s %s is in %s", o.GetKind(), o.GetName(), ns)
		}
		if o.GetKind() == "DaemonSet" || o.GetKind() == "Deployment" {
			image := "labctl/addons:t"
			if o.GetName() == "labctl-ingress" || o.GetName() == "metrics-server" {
				image = "labctl/addons-serve:t"
			}
			cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			for _, c := range cs {
				c := c.(map[string]any)
				if c["image"] != image || c["imagePullPolicy"] != "Never" {
					t.Errorf("%s %s runs %v (%v)", o.GetKind(), o.GetName(), c["image"], c["imagePullPolicy"])
				}
			}
		}
		if o.GetKind() == "ConfigMap" && o.GetName() == "labctl-network" {
			conf, _, _ := unstructured.NestedString(o.Object, "data", "net-conf.json")
			if !strings.Contains(conf, `"Network": "10.244.0.0/16"`) || !strings.Contains(conf, `"host-gw"`) {
				t.Errorf("net-conf.json = %s", conf)
			}
		}
	}
	if kinds["DaemonSet"] != 2 || kinds["Deployment"] != 3 || kinds["StorageClass"] != 1 || kinds["IngressClass"] != 1 || kinds["APIService"] != 1 {
		t.Fatalf("kinds = %v", kinds)
	}
}

// registration is the kind and taints of a kubeadm nodeRegistration patch.
type registration struct {
	Kind   string
	Taints []corev1.Taint
}

// registrationTaints decodes n's one kubeadm patch.
func registrationTaints(t *testing.T, n v1alpha4.Node) registration {
	t.Helper()
	if len(n.KubeadmConfigPatches) != 1 {
		t.Fatalf("%s node patches = %q, want one", n.Role, n.KubeadmConfigPatches)
	}
	var p struct {
		Kind             string `json:"kind"`
		NodeRegistration struct {
			Taints []corev1.Taint `json:"taints"`
		} `json:"nodeRegistration"`
	}
	if err := yaml.Unmarshal([]byte(n.KubeadmConfigPatches[0]), &p); err != nil {
		t.Fatal(err)
	}
	return registration{Kind: p.Kind, Taints: p.NodeRegistration.Taints}
}
