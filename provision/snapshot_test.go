package provision

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestSnapshotLeavesOutWhatNoLearnerWrites: Kubernetes' own cluster RBAC,
// labctl's grant to the learner and the probe's are never mutants' objects.
func TestSnapshotLeavesOutWhatNoLearnerWrites(t *testing.T) {
	obj := func(name string, labels map[string]any, extra ...string) map[string]any {
		o := map[string]any{"metadata": map[string]any{"name": name, "labels": labels}}
		for _, k := range extra {
			o[k] = map[string]any{}
		}
		return o
	}
	for o, own := range map[*map[string]any]bool{
		ptr(obj("system:node", nil)):              true,
		ptr(obj("admin", nil, "aggregationRule")): true,
		ptr(obj("cluster-admin", map[string]any{"kubernetes.io/bootstrapping": "rbac-defaults"})): true,
		ptr(obj("labctl-grader", nil)): true,
		ptr(obj("ci-deployer", nil)):   false,
	} {
		if got := kubernetesOwn(*o); got != own {
			t.Errorf("kubernetesOwn(%v) = %t", *o, got)
		}
	}
	rbac := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	// The probe's RoleBinding, made in each lab namespace the first time
	// a probe runs, is labctl's too: its mutants were a step's survivors.
	if !labctlOwn(rbac, obj(learnerRole, nil)) || !labctlOwn(rbac, obj(probeRole, nil)) || labctlOwn(rbac, obj("deployer", nil)) ||
		labctlOwn(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, obj(learnerRole, nil)) {
		t.Error("labctlOwn picks the wrong objects")
	}
	// What the controllers make in every namespace, a moment after it,
	// seemed made by the first step's solve when the listing at its start
	// came first: its mutants were survivors.
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	sas := schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	if !namespaceOwn(cms, obj("kube-root-ca.crt", nil)) || !namespaceOwn(sas, obj("default", nil)) ||
		namespaceOwn(cms, obj("default", nil)) || namespaceOwn(sas, obj("web", nil)) || namespaceOwn(rbac, obj("kube-root-ca.crt", nil)) {
		t.Error("namespaceOwn picks the wrong objects")
	}
}

func ptr[T any](v T) *T { return &v }
