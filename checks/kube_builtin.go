package checks

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// BuiltinKind is a kind every Kubernetes version labctl runs serves, in
// its stable version, and its resource as discovery names it.
type BuiltinKind struct {
	APIVersion string
	Kind       string
	Resource   string
	Namespaced bool
}

// builtinKinds are the kinds a round maps without asking the cluster: each
// is served at its stable version since long before the oldest Kubernetes
// labctl runs, under these names. A kind not listed (a CRD, a beta
// version) is asked of the cluster as before.
var builtinKinds = []BuiltinKind{
	{"v1", "ConfigMap", "configmaps", true},
	{"v1", "LimitRange", "limitranges", true},
	{"v1", "Namespace", "namespaces", false},
	{"v1", "Node", "nodes", false},
	{"v1", "PersistentVolume", "persistentvolumes", false},
	{"v1", "PersistentVolumeClaim", "persistentvolumeclaims", true},
	{"v1", "Pod", "pods", true},
	{"v1", "ResourceQuota", "resourcequotas", true},
	{"v1", "Secret", "secrets", true},
	{"v1", "Service", "services", true},
	{"v1", "ServiceAccount", "serviceaccounts", true},
	{"apps/v1", "DaemonSet", "daemonsets", true},
	{"apps/v1", "Deployment", "deployments", true},
	{"apps/v1", "ReplicaSet", "replicasets", true},
	{"apps/v1", "StatefulSet", "statefulsets", true},
	{"autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true},
	{"batch/v1", "CronJob", "cronjobs", true},
	{"batch/v1", "Job", "jobs", true},
	{"coordination.k8s.io/v1", "Lease", "leases", true},
	{"discovery.k8s.io/v1", "EndpointSlice", "endpointslices", true},
	{"networking.k8s.io/v1", "Ingress", "ingresses", true},
	{"networking.k8s.io/v1", "IngressClass", "ingressclasses", false},
	{"networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", true},
	{"policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", true},
	{"rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", false},
	{"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", false},
	{"rbac.authorization.k8s.io/v1", "Role", "roles", true},
	{"rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", true},
	{"scheduling.k8s.io/v1", "PriorityClass", "priorityclasses", false},
	{"storage.k8s.io/v1", "CSIDriver", "csidrivers", false},
	{"storage.k8s.io/v1", "StorageClass", "storageclasses", false},
}

// BuiltinKinds are the kinds a round maps to their resources without
// discovery (for a test against a real API server).
func BuiltinKinds() []BuiltinKind { return builtinKinds }

// builtinMapper maps the built-in kinds from builtinKinds and asks next
// about every other: a round of a lab's usual kinds then spends no
// request on discovery.
type builtinMapper struct {
	next  mapper
	kinds map[schema.GroupVersionKind]*meta.RESTMapping
}

func newBuiltinMapper(next mapper) *builtinMapper {
	m := &builtinMapper{next: next, kinds: make(map[schema.GroupVersionKind]*meta.RESTMapping, len(builtinKinds))}
	for _, k := range builtinKinds {
		gvk := schema.FromAPIVersionAndKind(k.APIVersion, k.Kind)
		scope := meta.RESTScopeRoot
		if k.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		m.kinds[gvk] = &meta.RESTMapping{Resource: gvk.GroupVersion().WithResource(k.Resource), GroupVersionKind: gvk, Scope: scope}
	}
	return m
}

func (m *builtinMapper) RESTMappingWithContext(ctx context.Context, gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) > 0 {
		if mapping, ok := m.kinds[gk.WithVersion(versions[0])]; ok {
			return mapping, nil
		}
	}
	return m.next.RESTMappingWithContext(ctx, gk, versions...)
}
