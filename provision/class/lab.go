package class

import "github.com/labctl/labctl/lab"

// CheckLab says why l cannot run as a class (a *LabError), or nil.
// A class gives each learner a virtual control plane, which has no nodes: a
// Pod created there is never scheduled and stays Pending, so only a lab
// whose cluster.workloads is declare (its checks read what the API server
// stores, never that a Pod runs) can run as one.
func CheckLab(l *lab.Lab) error {
	if len(l.Cluster.Workers) > 0 || len(l.Cluster.Addons) > 0 {
		return &LabError{Lab: l.Metadata.Name, Reason: "it asks for worker nodes or add-ons (cluster.workers, cluster.addons), " +
			"which a class's virtual control planes do not have: its learners run it with labctl up on their own machines"}
	}
	if l.Cluster.Workloads == lab.WorkloadsDeclare {
		return nil
	}
	return &LabError{Lab: l.Metadata.Name, Reason: "its Pods must run (cluster.workloads: " + lab.WorkloadsRun + "), " +
		"and a class gives each learner a virtual control plane with no nodes, where every Pod stays Pending; " +
		"such a lab needs a node per learner: a kind cluster per learner (each learner runs labctl up on their own machine), " +
		"or nodes joined per learner, and only on clusters made for the class and thrown away after it " +
		"(a lab whose checks only read what the API server stores, specs and status.replicas, says cluster.workloads: " + lab.WorkloadsDeclare + ")"}
}
