package lab

import (
	"slices"
	"strings"
)

// systemNamespaces are the namespaces Kubernetes, kind and labctl keep in
// every lab cluster, with what each one is.
var systemNamespaces = map[string]string{
	"default":            "the cluster's default namespace (it holds the API server's own Service, kubernetes)",
	"kube-system":        "the cluster's own namespace (its control plane, DNS and network)",
	"kube-public":        "a namespace of the cluster's own (its public cluster-info)",
	"kube-node-lease":    "a namespace of the cluster's own (its nodes' heartbeats)",
	"local-path-storage": "kind's namespace (its volume provisioner)",
	"labctl-system":      "labctl's own namespace (the learner's and the grader's identities)",
	"labctl-probe":       "labctl's own namespace (what a probe keeps for the grader alone)",
}

// ReservedNamespace says what namespace ns is when it belongs to the
// cluster, kind or labctl (kube-system, kube-public, kube-node-lease,
// default, local-path-storage, labctl-system, labctl-probe, and every name starting with
// kube- or labctl-, which they keep for what they add), and so can never
// be one of a lab's namespaces: a lab's namespace is emptied by reset,
// carries the lab's Pod Security level, and its admin is the learner. It
// returns "" for any other name.
func ReservedNamespace(ns string) string {
	if what, ok := systemNamespaces[ns]; ok {
		return what
	}
	switch {
	case strings.HasPrefix(ns, "kube-"):
		return "in the kube- names Kubernetes keeps for its own namespaces"
	case strings.HasPrefix(ns, "labctl-"):
		return "in the labctl- names labctl keeps for its own namespaces"
	}
	return ""
}

// suggestNamespace is a namespace name for messages that is not reserved
// and not among taken.
func suggestNamespace(taken []string) string {
	for _, n := range []string{"lab", "workshop", "practice"} {
		if !slices.Contains(taken, n) {
			return n
		}
	}
	return "lab-1"
}
