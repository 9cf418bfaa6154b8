package checks

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/labctl/labctl/lab"
)

// reachCluster is a fake cluster whose reach Pods end as status says
// (nil: they never start), with a running Pod "client" in shop labelled
// app=client and pod-template-hash=abc. It records the Pods made and
// deleted.
type reachCluster struct {
	*kubeReader
	made    []*unstructured.Unstructured
	deleted []string
}

func newReachCluster(t *testing.T, status map[string]any) *reachCluster {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "shop", "uid": "ns-uid"},
	}}
	client := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "client", "namespace": "shop", "labels": map[string]any{"app": "client", "pod-template-hash": "abc"}},
		"status":   map[string]any{"phase": "Running"},
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{podsResource: "PodList", namespacesResource: "NamespaceList"}, ns, client)
	rc := &reachCluster{kubeReader: newKubeReader(meta.ToRESTMapperWithContext(meta.NewDefaultRESTMapper(nil)), dyn)}
	dyn.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured).DeepCopy()
		pod.SetName("labctl-reach-x1")
		rc.made = append(rc.made, pod)
		return true, pod, nil
	})
	dyn.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		fs := a.(k8stesting.ListAction).GetListRestrictions().Fields.String()
		if !strings.Contains(fs, "metadata.name=labctl-reach-x1") {
			return false, nil, nil
		}
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "PodList"}}
		if len(rc.made) > 0 && len(rc.deleted) == 0 {
			pod := rc.made[0].DeepCopy()
			if status != nil {
				pod.Object["status"] = status
			}
			list.Items = append(list.Items, *pod)
		}
		return true, list, nil
	})
	dyn.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		rc.deleted = append(rc.deleted, a.(k8stesting.DeleteAction).GetName())
		return true, nil, nil
	})
	return rc
}

func terminated(code int64, message string) map[string]any {
	return map[string]any{"containerStatuses": []any{map[string]any{
		"state": map[string]any{"terminated": map[string]any{"exitCode": code, "message": message}},
	}}}
}

func TestReachCheck(t *testing.T) {
	reach := func(labels map[string]string, allowed bool) lab.Check {
		return lab.Check{Reach: &lab.ReachCheck{From: lab.ReachFrom{Namespace: "shop", Labels: labels}, To: "db.shop:5432", Allowed: &allowed},
			Timeout: lab.Duration{Duration: 5 * time.Second}}
	}
	client := map[string]string{"app": "client"}
	tests := []struct {
		name   string
		status map[string]any
		check  lab.Check
		want   Status
		msg    string
	}{
		{"opened, as wanted", terminated(0, ""), reach(client, true), Pass, ""},
		{"opened, not wanted", terminated(0, ""), reach(client, false), Fail, "expected a new Pod in shop labelled app=client not to connect to db.shop:5432; it connected"},
		{"timed out, as wanted", terminated(124, ""), reach(client, false), Pass, ""},
		{"timed out, not wanted", terminated(124, ""), reach(client, true), Fail, "expected a new Pod in shop labelled app=client to connect to db.shop:5432; it could not: no answer within 3s"},
		{"refused", terminated(1, "db.shop: connect: Connection refused\ndb.shop: line 1: /dev/tcp/db.shop/5432: Connection refused\n"), reach(nil, true), Fail,
			"expected a new Pod in shop to connect to db.shop:5432; it could not: connection refused"},
		{"no such name", terminated(1, "db.shop: line 1: db.shop: Name or service not known\ndb.shop: line 1: /dev/tcp/db.shop/5432: Invalid argument\n"), reach(client, true), Fail,
			"expected a new Pod in shop labelled app=client to connect to db.shop:5432; it could not: the name does not resolve"},
		{"no such name, as wanted", terminated(1, "db.shop: line 1: db.shop: Name or service not known\n"), reach(client, false), Pass, ""},
		{"never started", map[string]any{"containerStatuses": []any{map[string]any{"state": map[string]any{"waiting": map[string]any{"reason": "ErrImageNeverPull", "message": "image not present"}}}}},
			reach(client, false), Error, "the Pod that tries db.shop:5432 from shop did not finish: ErrImageNeverPull image not present"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := newReachCluster(t, tt.status)
			got := runCheck(t, Env{Root: "/", Kube: rc, ReachImage: "labctl/addons:test"}, tt.check)
			expect(t, got, tt.want, tt.msg)
			if len(rc.made) != 1 || len(rc.deleted) != 1 || rc.deleted[0] != "labctl-reach-x1" {
				t.Errorf("made %d Pods, deleted %v; want one made and deleted", len(rc.made), rc.deleted)
			}
		})
	}
}

// TestReachPodStandsIn: the check's Pod carries every label of the running
// Pod it stands in for (so no policy tells them apart), is controlled by
// its namespace (so no ReplicaSet adopts it), is never Ready (so no Service
// sends it traffic), and meets the restricted Pod Security level.
func TestReachPodStandsIn(t *testing.T) {
	rc := newReachCluster(t, terminated(0, ""))
	yes := true
	c := lab.Check{Reach: &lab.ReachCheck{From: lab.ReachFrom{Namespace: "shop", Labels: map[string]string{"app": "client"}}, To: "db:5432", Allowed: &yes}}
	expect(t, runCheck(t, Env{Root: "/", Kube: rc, ReachImage: "labctl/addons:test"}, c), Pass, "")
	pod := rc.made[0]
	if got := pod.GetLabels(); got["app"] != "client" || got["pod-template-hash"] != "abc" || len(got) != 2 {
		t.Errorf("labels %v, want those of the running client Pod", got)
	}
	owners := pod.GetOwnerReferences()
	if len(owners) != 1 || owners[0].Kind != "Namespace" || owners[0].UID != "ns-uid" || owners[0].Controller == nil || !*owners[0].Controller {
		t.Errorf("owners %+v, want the namespace as controller", owners)
	}
	gates, _, _ := unstructured.NestedSlice(pod.Object, "spec", "readinessGates")
	if len(gates) != 1 {
		t.Errorf("readiness gates %v, want one nobody sets", gates)
	}
	for path, want := range map[string]any{
		"spec.securityContext.runAsNonRoot":                          true,
		"spec.automountServiceAccountToken":                          false,
		"spec.containers.0.securityContext.allowPrivilegeEscalation": false,
		"spec.containers.0.imagePullPolicy":                          "Never",
		"spec.containers.0.image":                                    "labctl/addons:test",
	} {
		var v any = pod.Object
		for _, part := range strings.Split(path, ".") {
			if part == "0" {
				v = v.([]any)[0]
			} else {
				v = v.(map[string]any)[part]
			}
		}
		if v != want {
			t.Errorf("%s = %v, want %v", path, v, want)
		}
	}
	cmd, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	if args := cmd[0].(map[string]any)["command"].([]any); len(args) != 8 || args[3] != "db" || args[4] != "5432" || args[5] != "open" {
		t.Errorf("command %v, want the host, the port and the expected outcome as its own arguments", args)
	}
}

func TestReachWithoutImage(t *testing.T) {
	yes := true
	c := lab.Check{Reach: &lab.ReachCheck{From: lab.ReachFrom{Namespace: "shop"}, To: "db:5432", Allowed: &yes}}
	got := runCheck(t, Env{Root: "/", Kube: newReachCluster(t, nil)}, c)
	expect(t, got, Error, "the checker has no image to start a reach check's Pod from")
}

// TestReachDefaultTimeout: a reach check without a timeout gets its kind's
// (it starts a Pod first), and the round's bound grows with it.
func TestReachDefaultTimeout(t *testing.T) {
	yes := true
	reach := lab.Check{Reach: &lab.ReachCheck{From: lab.ReachFrom{Namespace: "shop"}, To: "db:5432", Allowed: &yes}}
	if got := checkTimeout(reach); got != lab.DefaultReachTimeout {
		t.Errorf("a reach check's default timeout is %s, want %s", got, lab.DefaultReachTimeout)
	}
	file := lab.Check{File: &lab.FileCheck{Path: "/x"}}
	if RoundTimeout([]lab.Check{file, reach}) <= RoundTimeout([]lab.Check{file, file}) {
		t.Error("a round with a reach check is bounded as one without")
	}
}

// TestReachPodDeadline: the kubelet stops a check's Pod only after the
// check has stopped waiting for it, however long the check may wait.
func TestReachPodDeadline(t *testing.T) {
	for _, timeout := range []time.Duration{5 * time.Second, lab.DefaultReachTimeout, 10 * time.Minute} {
		ctx, cancel := context.WithTimeout(t.Context(), timeout)
		got := time.Duration(podDeadline(ctx)) * time.Second
		cancel()
		if got <= timeout || got > timeout+2*time.Minute {
			t.Errorf("a check with %s gives its Pod an active deadline of %s, want a little more than %s", timeout, got, timeout)
		}
	}
}
