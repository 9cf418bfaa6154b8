package provision

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// snapshotTypes are the namespaced types Snapshot lists: those the mutant
// catalogue of `labctl test --mutate` knows, and ServiceAccounts (the
// other subjects a binding may name by mistake).
var snapshotTypes = []schema.GroupVersionResource{
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "apps", Version: "v1", Resource: "daemonsets"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "serviceaccounts"},
}

// draftTypes are the namespaced types DraftSnapshot lists: snapshotTypes
// and the other kinds a solve makes that a check is drafted of.
var draftTypes = append(slices.Clone(snapshotTypes),
	schema.GroupVersionResource{Version: "v1", Resource: "pods"},
	schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
	schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"},
	schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"},
	schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"},
	schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
	schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"},
)

// snapshotClusterTypes are the cluster's types Snapshot lists.
var snapshotClusterTypes = []schema.GroupVersionResource{
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
}

// Snapshot lists the lab's objects as its admin reads them, for `labctl
// test --mutate`: every object of snapshotTypes in the lab's namespaces
// (but labctl's own grants to the learner and to the probe), and the cluster's ClusterRoles
// and ClusterRoleBindings but Kubernetes' own (system:, aggregated, or
// labelled its defaults).
func (e *Live) Snapshot(ctx context.Context) ([]map[string]any, error) {
	return e.snapshot(ctx, snapshotTypes)
}

// DraftSnapshot lists the lab's objects as Snapshot does, and those of the
// other kinds of draftTypes, for `labctl test --draft`.
func (e *Live) DraftSnapshot(ctx context.Context) ([]map[string]any, error) {
	return e.snapshot(ctx, draftTypes)
}

func (e *Live) snapshot(ctx context.Context, types []schema.GroupVersionResource) ([]map[string]any, error) {
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("connecting to cluster %s: %w", e.rt.Name(), err)
	}
	var out []map[string]any
	add := func(gvr schema.GroupVersionResource, ns string, keep func(map[string]any) bool) error {
		l, err := dc.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("listing %s in cluster %s: %w", gvr.Resource, e.rt.Name(), err)
		}
		for _, item := range l.Items {
			if item.GetDeletionTimestamp() == nil && keep(item.Object) {
				out = append(out, item.Object)
			}
		}
		return nil
	}
	for _, ns := range e.Lab.Cluster.Namespaces {
		for _, gvr := range types {
			if err := add(gvr, ns, func(o map[string]any) bool { return !labctlOwn(gvr, o) && !namespaceOwn(gvr, o) }); err != nil {
				return nil, err
			}
		}
	}
	for _, gvr := range snapshotClusterTypes {
		if err := add(gvr, "", func(o map[string]any) bool { return !kubernetesOwn(o) }); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// labctlOwn reports whether o is labctl's grant in a lab namespace, to the
// learner or to a probe, which is no learner's answer: the probe's
// binding appears when a step's probe first runs (so a solve seems to make
// it), and each probe script grants it again.
func labctlOwn(gvr schema.GroupVersionResource, o map[string]any) bool {
	md, _ := o["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	return gvr.Group == "rbac.authorization.k8s.io" && (name == learnerRole || name == probeRole)
}

// namespaceOwn reports whether o is what Kubernetes' controllers make in
// every namespace, a moment after it is made: the ConfigMap
// kube-root-ca.crt and the ServiceAccount default. A listing taken right
// after labctl made the namespace may lack them, so that the next seems to
// show a solve making them.
func namespaceOwn(gvr schema.GroupVersionResource, o map[string]any) bool {
	md, _ := o["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	return gvr.Group == "" && (gvr.Resource == "configmaps" && name == "kube-root-ca.crt" || gvr.Resource == "serviceaccounts" && name == "default")
}

// kubernetesOwn reports whether a cluster RBAC object is Kubernetes' own
// (or labctl's): it changes without a learner, or never.
func kubernetesOwn(o map[string]any) bool {
	md, _ := o["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	labels, _ := md["labels"].(map[string]any)
	_, aggregated := o["aggregationRule"]
	return strings.HasPrefix(name, "system:") || strings.HasPrefix(name, "labctl") || aggregated ||
		labels["kubernetes.io/bootstrapping"] == "rbac-defaults"
}
