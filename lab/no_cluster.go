package lab

// ProviderNone is the cluster provider of a lab with no cluster: up brings
// up the sandbox and the grader only, and the lab is judged by what the
// sandbox holds (file, git and command checks).
const ProviderNone = "none"

// HasCluster reports whether the lab runs against a Kubernetes cluster:
// every lab but one whose cluster.provider is none.
func (l *Lab) HasCluster() bool { return l.Cluster.Provider != ProviderNone }

// noClusterFix is the end of every message refusing what a lab with no
// cluster cannot have.
const noClusterFix = "a lab with no cluster (cluster.provider: none) has no API server"

// written reports whether the field at path was written in the lab file
// (false for a lab built in Go).
func (v *validator) written(path string) bool {
	if v.src == nil {
		return false
	}
	_, ok := v.src.pos[path]
	return ok
}

// noCluster refuses, in a lab with no cluster, every field that asks for
// one: namespaces, images, workers, add-ons, the node image, Pod Security,
// workloads and the learner's Kubernetes access.
func (v *validator) noCluster(l *Lab) {
	c := &l.Cluster
	for _, f := range []struct {
		path string
		set  bool
	}{
		{"cluster.namespaces", len(c.Namespaces) > 0},
		{"cluster.images", len(c.Images) > 0},
		{"cluster.workers", len(c.Workers) > 0},
		{"cluster.addons", len(c.Addons) > 0},
		{"cluster.nodeImage", c.NodeImage != ""},
		{"cluster.nodeAccess", c.NodeAccess},
		{"cluster.podSecurity", v.written("cluster.podSecurity")},
		{"cluster.workloads", v.written("cluster.workloads")},
		{"sandbox.namespace", v.written("sandbox.namespace")},
		{"access.rules", len(l.Access.Rules) > 0},
		{"access.clusterRules", len(l.Access.ClusterRules) > 0},
		{"access.clusterView", l.Access.ClusterView != nil},
	} {
		if f.set {
			v.add(f.path, "%s: there is nothing for it to set up; remove %s, or give the lab a cluster (remove provider: none)", noClusterFix, f.path)
		}
	}
}

// clusterCheck refuses, in a lab with no cluster, a check of a kind that
// reads or acts on the cluster.
func (v *validator) clusterCheck(p string, c *Check) {
	if v.lab == nil || v.lab.HasCluster() {
		return
	}
	kind := ""
	switch {
	case c.Kube != nil:
		kind = "kube"
	case c.Access != nil:
		kind = "access"
	case c.Permissions != nil:
		kind = "permissions"
	case c.Reach != nil:
		kind = "reach"
	case c.Matrix != nil:
		kind = "matrix"
	case c.Audit != nil:
		kind = "audit"
	default:
		return
	}
	v.add(p+"."+kind, "%s for a %s check to ask; judge the learner's work with file, git or command checks, or give the lab a cluster (remove cluster.provider: none)", noClusterFix, kind)
}

// clusterRef refuses, in a lab with no cluster, a kube: reference.
func (v *validator) clusterRef(p string, r Ref) {
	if v.lab == nil || v.lab.HasCluster() || r.Source != RefKube {
		return
	}
	v.add(p+".ref", "%s for a kube: reference to read; refer to a file: or git: value, or give the lab a cluster (remove cluster.provider: none)", noClusterFix)
}

// clusterProbe refuses, in a lab with no cluster, a step's probe, whose
// scripts run with an identity in the cluster.
func (v *validator) clusterProbe(p string, s *Step) {
	if v.lab == nil || v.lab.HasCluster() || s.Probe == nil {
		return
	}
	v.add(p+".probe", "%s for a probe's scripts to act on (they run with the probe's identity in the cluster); "+
		"judge the learner's script with a command check, or give the lab a cluster (remove cluster.provider: none)", noClusterFix)
}
