package class

import "github.com/labctl/labctl/lab"

// Consent is what the instructor allows a class on class up, by name.
type Consent struct {
	// LearnerNodes: a node per learner, a privileged container on the
	// class cluster (--learner-nodes).
	LearnerNodes bool
	// NodeAccessOn: the nodes dedicated to learners who are root on their
	// node (--node-access-on KEY=VALUE); zero when not given.
	NodeAccessOn NodeLabel
}

// CheckLab says why l cannot run as a class (a *LabError), or nil.
// A class gives each learner a virtual control plane, which has no nodes: a
// Pod created there is never scheduled and stays Pending, so a lab whose
// Pods must run needs the instructor's consent to a node per learner
// (nodes.go); a lab whose cluster.workloads is declare (its checks read
// what the API server stores, never that a Pod runs) needs none.
func CheckLab(l *lab.Lab, consent Consent) error {
	learnerNodes := consent.LearnerNodes
	if !l.HasCluster() {
		return &LabError{Lab: l.Metadata.Name, Reason: "it has no cluster (cluster.provider: none), and a class runs each learner's lab beside a control plane of their own: " +
			"its learners run it with labctl up on their own machines, where it needs no cluster (see docs/classroom.md)"}
	}
	if l.Cluster.NodeAccess {
		if consent.NodeAccessOn.IsZero() || !learnerNodes {
			return &LabError{Lab: l.Metadata.Name, Reason: "it makes the learner root on the cluster's nodes (cluster.nodeAccess), " +
				"which in a class is root in their learner node's privileged container on a class-cluster node, and may be root on that node and every Pod beside it: " +
				"a class runs it only on nodes dedicated to it, given by name with labctl class up --learner-nodes --node-access-on KEY=VALUE " +
				"(label and taint those nodes first: kubectl label nodes NODE KEY=VALUE; kubectl taint nodes NODE KEY=VALUE:NoSchedule; see docs/classroom.md, Node access); or its learners run it with labctl up on their own machines"}
		}
		if name, what := nodeReadCheck(l); name != "" {
			return &LabError{Lab: l.Metadata.Name, Reason: "its check " + name + " " + what + ", which a class cannot judge soundly: " +
				"labctl reads that from outside the node only on labctl up's kind cluster, and on a learner node the learner is root and may replace the node's own tools; " +
				"judge the node's work through the API server instead (a kube check of what the node does: a static Pod's mirror Pod, the node's Ready condition), " +
				"or its learners run it with labctl up on their own machines"}
		}
	}
	if len(l.Cluster.Workers) > 0 || len(l.Cluster.Addons) > 0 {
		return &LabError{Lab: l.Metadata.Name, Reason: "it asks for worker nodes or add-ons (cluster.workers, cluster.addons), " +
			"which a class's virtual control planes do not have: its learners run it with labctl up on their own machines"}
	}
	if p, repo := sandboxPathOutside(l); p != "" {
		what, instead := "a file check or file: reference reads "+p, "check a file under /root instead"
		if repo {
			what, instead = "a git check or git: reference reads the repository "+p, "keep the repository under /root instead"
		}
		return &LabError{Lab: l.Metadata.Name, Reason: what + " of the sandbox, outside the learner's home (/root) and the fixtures, " +
			"and a class's grader reads only those: the kind runtime reads other paths of the sandbox through its container engine, which a class's learner Pods do not offer yet; " +
			"its learners run it with labctl up on their own machines, or " + instead}
	}
	if !NeedsNodes(l) {
		return nil
	}
	if learnerNodes {
		if l.Cluster.PodSecurity == lab.PodSecurityPrivileged {
			return &LabError{Lab: l.Metadata.Name, Reason: "its namespaces allow privileged Pods (cluster.podSecurity: privileged), which on a learner node would be root on the class cluster's node"}
		}
		return nil
	}
	return &LabError{Lab: l.Metadata.Name, Reason: "its Pods must run (cluster.workloads: " + lab.WorkloadsRun + "), " +
		"and a class's virtual control planes have no nodes, where every Pod stays Pending: " +
		"give each learner a node of their own with labctl class up --learner-nodes (a privileged container per learner on the class cluster: " +
		"see docs/classroom.md, Learner nodes), or have each learner run labctl up on their own machine " +
		"(a lab whose checks only read what the API server stores, specs and status.replicas, says cluster.workloads: " + lab.WorkloadsDeclare + ")"}
}

// nodeReadCheck names the first check of l that reads a node from outside
// it (a file check of a node, a service check), and what it reads; "" when
// none does.
func nodeReadCheck(l *lab.Lab) (name, what string) {
	for i := range l.Steps {
		l.Steps[i].EveryCheck(func(c *lab.Check) {
			switch {
			case name != "":
			case c.File != nil && c.File.Node != "":
				name, what = c.Name, "reads the file "+c.File.Path+" of node "+c.File.Node
			case c.Service != nil:
				name, what = c.Name, "looks at the service "+c.Service.Unit+" of node "+c.Service.Node
			}
		})
		if name != "" {
			return name, what
		}
	}
	return "", ""
}

// sandboxPathOutside is the first path of a file check or repository of
// a git check of l that the grader does not mount, or ""; repo says it is
// a repository.
func sandboxPathOutside(l *lab.Lab) (p string, repo bool) {
	for i := range l.Steps {
		var cs []lab.Check
		l.Steps[i].EveryCheck(func(c *lab.Check) { cs = append(cs, *c) })
		if out := l.FileChecksOutside(cs); len(out) > 0 {
			return out[0], false
		}
		if out := l.RepoChecksOutside(cs); len(out) > 0 {
			return out[0], true
		}
	}
	return "", false
}

// NeedsNodes says whether a class of l gives each learner a node: a lab
// whose Pods must run needs one (CheckLab asks the instructor's consent).
func NeedsNodes(l *lab.Lab) bool { return l.Cluster.Workloads != lab.WorkloadsDeclare }

// LabImages are the lab's workload images, which a learner node loads.
func LabImages(l *lab.Lab) []string {
	var refs []string
	for _, im := range l.Cluster.Images {
		refs = append(refs, im.Name)
	}
	return refs
}
