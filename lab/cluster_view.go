package lab

import "strings"

// ClusterView names the cluster-scoped kinds the learner may read (get,
// list, watch) beside their namespaces; a single name stands for a list
// of one.
type ClusterView []string

// OneOrMany says that YAML may give one element for a list of one.
func (ClusterView) OneOrMany() {}

// ClusterViewNone, alone in access.clusterView, gives the learner no
// cluster-wide reading beside access.clusterRules.
const ClusterViewNone = "none"

// ViewedKind is one kind the learner's cluster view may read: its name in
// access.clusterView, and the API group and resource it reads.
type ViewedKind struct {
	Name, Group, Resource string
}

// ClusterViewKinds are the kinds the learner reads cluster-wide by
// default: what a course's first commands list (kubectl get nodes,
// storageclass, ingressclass, crd; kubectl top nodes). None holds a
// secret: see docs/architecture.md, "The learner's view of the cluster".
var ClusterViewKinds = []ViewedKind{
	{"nodes", "", "nodes"},
	{"persistentvolumes", "", "persistentvolumes"},
	{"storageclasses", "storage.k8s.io", "storageclasses"},
	{"csidrivers", "storage.k8s.io", "csidrivers"},
	{"csinodes", "storage.k8s.io", "csinodes"},
	{"ingressclasses", "networking.k8s.io", "ingressclasses"},
	{"gatewayclasses", "gateway.networking.k8s.io", "gatewayclasses"},
	{"customresourcedefinitions", "apiextensions.k8s.io", "customresourcedefinitions"},
	{"runtimeclasses", "node.k8s.io", "runtimeclasses"},
	{"priorityclasses", "scheduling.k8s.io", "priorityclasses"},
	{"nodemetrics", "metrics.k8s.io", "nodes"},
}

// clusterViewNames lists the names access.clusterView accepts, for
// messages.
func clusterViewNames() string {
	names := make([]string, len(ClusterViewKinds))
	for i, k := range ClusterViewKinds {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// LearnerClusterView returns the kinds the learner reads cluster-wide:
// every one of ClusterViewKinds when access.clusterView is unset, none for
// none (or a lab with no cluster), else the ones it names, in
// ClusterViewKinds' order.
func (l *Lab) LearnerClusterView() []ViewedKind {
	v := l.Access.ClusterView
	if !l.HasCluster() {
		return nil
	}
	if v == nil {
		return ClusterViewKinds
	}
	var out []ViewedKind
	for _, k := range ClusterViewKinds {
		for _, name := range v {
			if name == k.Name {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// clusterView requires known names, each once, and none alone.
func (v *validator) clusterView(view ClusterView) {
	const p = "access.clusterView"
	if view != nil && len(view) == 0 {
		v.add(p, "an empty list; write clusterView: %s to give the learner no cluster-wide reading, or leave it out to give them all of it (%s)", ClusterViewNone, clusterViewNames())
		return
	}
	first := map[string]string{}
	for i, name := range view {
		ip := joinIndex(p, i)
		switch {
		case name == ClusterViewNone && len(view) > 1:
			v.add(ip, "%s gives the learner no cluster-wide reading and must stand alone: write clusterView: %s, or list only what they read", ClusterViewNone, ClusterViewNone)
		case name == ClusterViewNone:
		case !known(name):
			v.add(ip, "%q is not a kind the learner can be given to read; use %s (or none)", name, clusterViewNames())
		case first[name] != "":
			v.add(ip, "%q is listed twice (first at %s)", name, v.line(first[name]))
		default:
			first[name] = ip
		}
	}
}

func known(name string) bool {
	for _, k := range ClusterViewKinds {
		if k.Name == name {
			return true
		}
	}
	return false
}
