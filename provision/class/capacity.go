package class

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Capacity reads what the cluster can still schedule: the allocatable
// memory and CPU of its Ready, schedulable nodes less what the Pods there
// request.
func (c *Class) Capacity(ctx context.Context) (Capacity, error) {
	var cap Capacity
	cap.LearnerMemory, cap.LearnerMilliCPU = learnerRequests()
	if c.nodeImage() != "" {
		m, cpu := nodeLearnerRequests()
		cap.LearnerMemory += m
		cap.LearnerMilliCPU += cpu
	}
	cap.Arch = c.arch
	if on := c.cfg.NodeAccessOn; !on.IsZero() {
		if err := checkDedicatedNodes(ctx, c.cs, on); err != nil {
			return cap, err
		}
	}
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return cap, fmt.Errorf("listing the class cluster's nodes: %w", err)
	}
	usable := map[string]bool{}
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable || !c.cfg.Placement.fits(&n) {
			continue
		}
		if arch := nodeArch(&n); c.arch == "" || arch == c.arch {
			if !nodeReady(&n) || notReadyTaint(&n) {
				cap.NotReady = append(cap.NotReady, n.Name)
				continue
			}
		}
		if !nodeReady(&n) || c.noSchedule(&n) {
			continue
		}
		if arch := nodeArch(&n); c.arch != "" && arch != c.arch {
			if cap.OtherArch == nil {
				cap.OtherArch = map[string]int{}
			}
			cap.OtherArch[arch]++
			continue
		}
		usable[n.Name] = true
		cap.Nodes++
		cap.FreeMemory += n.Status.Allocatable.Memory().Value()
		cap.FreeMilliCPU += n.Status.Allocatable.Cpu().MilliValue()
	}
	pods, err := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return cap, fmt.Errorf("listing the class cluster's pods: %w", err)
	}
	for _, p := range pods.Items {
		if !usable[p.Spec.NodeName] {
			continue
		}
		for _, ct := range p.Spec.Containers {
			cap.FreeMemory -= ct.Resources.Requests.Memory().Value()
			cap.FreeMilliCPU -= ct.Resources.Requests.Cpu().MilliValue()
		}
	}
	return cap, nil
}

// nodeArch is the node's architecture, by its label, else as its kubelet
// reports it.
func nodeArch(n *corev1.Node) string {
	if a := n.Labels[corev1.LabelArchStable]; a != "" {
		return a
	}
	return n.Status.NodeInfo.Architecture
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// notReadyTaint says whether n carries a taint of a node that is not ready
// yet: the kubelet's and the node controller's, or a network add-on's.
func notReadyTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		switch t.Key {
		case corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, corev1.TaintNodeNetworkUnavailable, "labctl.dev/network-unready":
			return true
		}
	}
	return false
}

func (c *Class) noSchedule(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !c.cfg.Placement.tolerates(&t) {
			return true
		}
	}
	return false
}
