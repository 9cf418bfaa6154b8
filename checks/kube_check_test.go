package checks

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/labctl/labctl/lab"
)

// fakeCluster is a kubeReader over client-go's fake dynamic client and a
// static RESTMapper holding a Deployment (3 replicas) and a Namespace.
func fakeCluster(t *testing.T) ObjectReader {
	t.Helper()
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{{Group: "apps", Version: "v1"}, {Version: "v1"}})
	m.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, meta.RESTScopeRoot)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "gitops-lab", "labels": map[string]any{"app": "web", "tier": "front"}},
		"spec": map[string]any{
			"replicas": int64(3),
			"template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "nginx:1.27"},
				map[string]any{"name": "sidecar", "image": "busybox:latest"},
			}}},
		},
	}}
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "gitops-lab"},
	}}
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme(), deploy, ns)
	return newKubeReader(meta.ToRESTMapperWithContext(m), client)
}

// brokenCluster answers every read with err.
type brokenCluster struct{ err error }

func (b brokenCluster) Get(context.Context, string, string, string, string) (map[string]any, error) {
	return nil, b.err
}

func TestKubeCheck(t *testing.T) {
	env := Env{Root: "/", Kube: fakeCluster(t)}
	deploy := func(kc lab.KubeCheck) lab.Check {
		kc.APIVersion, kc.Kind, kc.Name = "apps/v1", "Deployment", "web"
		if kc.Namespace == "" {
			kc.Namespace = "gitops-lab"
		}
		return lab.Check{Kube: &kc}
	}
	field := func(path string, a lab.Assert) *lab.FieldAssert { return &lab.FieldAssert{Path: path, Assert: a} }
	tests := []struct {
		name   string
		env    Env
		check  lab.Check
		status Status
		msg    string
	}{
		{"exists", env, deploy(lab.KubeCheck{}), Pass, ""},
		{"missing in namespace", env, deploy(lab.KubeCheck{Namespace: "default"}), Fail, "expected apps/v1 Deployment default/web to exist, found no such object in the cluster"},
		{"absent", env, deploy(lab.KubeCheck{Namespace: "default", Exists: boolp(false)}), Pass, ""},
		{"absent but present", env, deploy(lab.KubeCheck{Exists: boolp(false)}), Fail, "expected apps/v1 Deployment gitops-lab/web to be absent, found it in the cluster"},
		{"cluster-scoped", env, lab.Check{Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "gitops-lab"}}, Pass, ""},
		{"cluster-scoped missing", env, lab.Check{Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "prod"}}, Fail, "expected v1 Namespace prod to exist, found no such object in the cluster"},
		{"kind not served", env, lab.Check{Kube: &lab.KubeCheck{APIVersion: "example.com/v1", Kind: "Widget", Namespace: "a", Name: "b"}}, Fail, "expected example.com/v1 Widget a/b to exist, found no such object in the cluster"},
		{"labels", env, deploy(lab.KubeCheck{Labels: map[string]string{"app": "web", "tier": "front"}}), Pass, ""},
		{"label differs", env, deploy(lab.KubeCheck{Labels: map[string]string{"app": "web", "tier": "back"}}), Fail, "expected label tier=back on apps/v1 Deployment gitops-lab/web, found tier=front"},
		{"label missing", env, deploy(lab.KubeCheck{Labels: map[string]string{"env": "prod"}}), Fail, "expected label env=prod on apps/v1 Deployment gitops-lab/web, found no such label"},
		{"field", env, deploy(lab.KubeCheck{Field: field("spec.replicas", lab.Assert{Equals: lit(3.0), Type: "integer"})}), Pass, ""},
		{"field differs", env, deploy(lab.KubeCheck{Field: field("spec.replicas", lab.Assert{Equals: lit(2)})}), Fail, "expected spec.replicas = 2 in apps/v1 Deployment gitops-lab/web, found 3"},
		{"field wildcard", env, deploy(lab.KubeCheck{Field: field("spec.template.spec.containers[*].image", lab.Assert{NotMatches: `:latest$`})}), Fail, `expected spec.template.spec.containers[1].image not to match ":latest$" in apps/v1 Deployment gitops-lab/web, found "busybox:latest"`},
		{"field subsetOf labels", env, deploy(lab.KubeCheck{Field: field("metadata.labels", lab.Assert{SubsetOf: lit(map[string]any{"app": "web", "tier": "front", "x": "y"})})}), Pass, ""},
		{"field not found", env, deploy(lab.KubeCheck{Field: field("spec.paused", lab.Assert{Equals: lit(true)})}), Fail, "spec.paused not found in apps/v1 Deployment gitops-lab/web"},
		{"no credentials", Env{Root: "/"}, deploy(lab.KubeCheck{}), Error, "no cluster credentials were given to the checker"},
		{"cluster unreachable", Env{Root: "/", Kube: brokenCluster{errors.New("dial tcp 10.0.0.1:6443: connect: connection refused")}}, deploy(lab.KubeCheck{}), Error, "dial tcp 10.0.0.1:6443: connect: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			expect(t, runCheck(t, tt.env, tt.check), tt.status, tt.msg)
		})
	}
}

// readyLater is a cluster holding Pod web, whose Ready condition turns
// True at the read numbered readyAt (0 for never).
type readyLater struct {
	reads, readyAt int
}

func (r *readyLater) Get(_ context.Context, _, _, _, _ string) (map[string]any, error) {
	r.reads++
	status := "False"
	if r.readyAt > 0 && r.reads >= r.readyAt {
		status = "True"
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "web", "namespace": "lab"},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": "PodScheduled", "status": "True"},
			map[string]any{"type": "Ready", "status": status, "lastTransitionTime": "2026-01-01T00:00:00Z"},
		}},
	}, nil
}

// TestKubeCheckWait: a kube check with wait reads until its assertion
// holds, as kubectl wait --for=condition=Ready does, and fails (not
// errs) when its timeout comes first; without wait one reading decides.
func TestKubeCheckWait(t *testing.T) {
	ready := func(wait bool, timeout time.Duration) lab.Check {
		return lab.Check{Name: "ready", Timeout: lab.Duration{Duration: timeout}, Kube: &lab.KubeCheck{
			APIVersion: "v1", Kind: "Pod", Namespace: "lab", Name: "web", Wait: wait,
			Field: &lab.FieldAssert{Path: `status.conditions[?(@.type=="Ready")].status`, Assert: lab.Assert{Equals: lit("True")}},
		}}
	}
	run := func(c lab.Check, cluster *readyLater) Result {
		return Run(context.Background(), Env{Root: "/", Kube: cluster}, []lab.Check{c})[0]
	}
	cluster := &readyLater{readyAt: 2}
	r := run(ready(false, 5*time.Second), cluster)
	expect(t, r, Fail, `expected status.conditions[1].status = "True" in v1 Pod lab/web, found "False"`)
	cluster = &readyLater{readyAt: 2}
	if r := run(ready(true, 5*time.Second), cluster); r.Status != Pass || cluster.reads != 2 {
		t.Errorf("wait: %s %q after %d reads, want pass after 2", r.Status, r.Message, cluster.reads)
	}
	cluster = &readyLater{}
	start := time.Now()
	r = run(ready(true, 3*time.Second), cluster)
	expect(t, r, Fail, `expected status.conditions[1].status = "True" in v1 Pod lab/web, found "False"`)
	if d := time.Since(start); d > 3*time.Second || cluster.reads < 2 {
		t.Errorf("wait that never holds: %d reads in %s, want at least 2 within its 3s timeout", cluster.reads, d)
	}
}
