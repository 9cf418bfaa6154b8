package provision

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
)

// TestNamespacesRecordSeesEveryWrite: the record a checkpoint keeps is the
// same while nothing in the lab's namespaces changes, and differs after an
// object is added, written (a new resource version), replaced (a new
// identity under the same name) or removed, or a namespace is relabelled or
// gone. A Pod's status, a Service's endpoints and events, which
// Kubernetes' components write as time goes by, do not change it. A cluster whose discovery is incomplete
// gives no record.
func TestNamespacesRecordSeesEveryWrite(t *testing.T) {
	r, cs, _ := resetFixture(t)
	cs.Fake.Resources[0].APIResources = append(cs.Fake.Resources[0].APIResources, resource("events", listDelete...))
	cs.Fake.Resources = append(cs.Fake.Resources, &metav1.APIResourceList{GroupVersion: "discovery.k8s.io/v1",
		APIResources: []metav1.APIResource{resource("endpointslices", listDelete...)}})
	ctx := context.Background()
	record := func() [32]byte {
		t.Helper()
		rec, err := r.record(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	cm := func(rv, uid string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "argo", ResourceVersion: rv, UID: types.UID(uid)}}
	}
	base := record()
	if again := record(); again != base {
		t.Fatal("two records of an unchanged lab differ")
	}
	// What Kubernetes' components write as time goes by changes nothing:
	// a Pod's status (a new resource version, the same generation) and
	// events.
	if err := cs.Tracker().Add(pod("api", "1", 1, nil)); err != nil {
		t.Fatal(err)
	}
	base = record()
	if err := cs.Tracker().Update(pods, pod("api", "2", 1, nil), "argo"); err != nil {
		t.Fatal(err)
	}
	if err := cs.Tracker().Add(&corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "api.1", Namespace: "argo", ResourceVersion: "3"}}); err != nil {
		t.Fatal(err)
	}
	if now := record(); now != base {
		t.Error("a Pod's new status or an event changed the record")
	}
	// A Service's endpoints follow its Pods' statuses: made, they count;
	// changed, they do not.
	slice := func(rv string, gen int64) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "api-x", Namespace: "argo", UID: "s", ResourceVersion: rv, Generation: gen}}
	}
	if err := cs.Tracker().Add(slice("4", 1)); err != nil {
		t.Fatal(err)
	}
	if now := record(); now == base {
		t.Error("a new EndpointSlice did not change the record")
	}
	base = record()
	if err := cs.Tracker().Update(discoveryv1.SchemeGroupVersion.WithResource("endpointslices"), slice("5", 2), "argo"); err != nil {
		t.Fatal(err)
	}
	if now := record(); now != base {
		t.Error("an EndpointSlice's new endpoints changed the record")
	}
	for _, c := range []struct {
		name   string
		change func() error
	}{
		{"an object added", func() error { return cs.Tracker().Add(cm("1", "a")) }},
		{"an object written", func() error { return cs.Tracker().Update(configMaps, cm("2", "a"), "argo") }},
		{"an object made anew", func() error { return cs.Tracker().Update(configMaps, cm("2", "b"), "argo") }},
		{"an object removed", func() error { return cs.Tracker().Delete(configMaps, "argo", "app") }},
		{"a namespace relabelled", func() error {
			ns, err := cs.CoreV1().Namespaces().Get(ctx, "argo", metav1.GetOptions{})
			if err != nil {
				return err
			}
			ns.ResourceVersion = "9"
			_, err = cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
			return err
		}},
		{"a Pod made", func() error { return cs.Tracker().Add(pod("web", "1", 1, nil)) }},
		{"a Pod's spec changed (its generation)", func() error { return cs.Tracker().Update(pods, pod("web", "3", 2, nil), "argo") }},
		{"a Pod relabelled", func() error {
			return cs.Tracker().Update(pods, pod("web", "4", 2, map[string]string{"x": "y"}), "argo")
		}},
		{"a namespace gone", func() error { return cs.CoreV1().Namespaces().Delete(ctx, "argo", metav1.DeleteOptions{}) }},
	} {
		if err := c.change(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		now := record()
		if now == base {
			t.Errorf("%s: the record did not change", c.name)
		}
		base = now
	}
	r.disc = failingGroup{FakeDiscovery: r.disc.(*fakediscovery.FakeDiscovery), group: "rbac.authorization.k8s.io"}
	if _, err := r.record(ctx); err == nil {
		t.Error("a record was made although discovery missed a group: a type it cannot list would go unseen")
	}
}

var (
	configMaps = corev1.SchemeGroupVersion.WithResource("configmaps")
	pods       = corev1.SchemeGroupVersion.WithResource("pods")
)

// pod is Pod name in argo at resource version rv and generation gen.
func pod(name, rv string, gen int64, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "argo", UID: types.UID(name), ResourceVersion: rv, Generation: gen, Labels: labels}}
}

// settled waits for two looks in a row to agree, and gives up, keeping
// nothing, on namespaces that never settle.
func TestSettledWaitsForTwoLooksAlike(t *testing.T) {
	seq := func(sums ...byte) func(context.Context) ([32]byte, error) {
		i := 0
		return func(context.Context) ([32]byte, error) {
			s := [32]byte{sums[min(i, len(sums)-1)]}
			i++
			return s, nil
		}
	}
	got, err := settled(context.Background(), seq(1, 2, 3, 3, 4), 0, 6)
	if err != nil || got != [32]byte{3} {
		t.Errorf("settled on %v, %v; want the third look's, 3", got[0], err)
	}
	if _, err := settled(context.Background(), seq(1, 2, 3, 4, 5, 6, 7), 0, 6); err == nil {
		t.Error("namespaces that change at every look were taken as settled")
	}
}

// keepingRuntime is a fakeRuntime that keeps sandboxes; its restores pass
// its own conditions when back is set.
type keepingRuntime struct {
	fakeRuntime
	back         bool
	keeps, tries int
}

func (k *keepingRuntime) Features() Features                  { return Features{Keep: k.Keep, Sandbox: k} }
func (k *keepingRuntime) NotePristine(context.Context)        {}
func (k *keepingRuntime) RestoreSandbox(context.Context) bool { return false }
func (k *keepingRuntime) KeepSandbox(context.Context, string) { k.keeps++ }
func (k *keepingRuntime) RestoreKeptSandbox(_ context.Context, _ string, unchanged func() bool) bool {
	k.tries++
	return k.back && unchanged()
}

// Going back to a step's start needs the namespaces as recorded and the
// runtime's consent; after two misses in a row Checkpoint stops keeping
// that step's start, and a step whose restores work keeps being kept.
func TestCheckpointGoesBackOnlyToAnUnchangedLab(t *testing.T) {
	sum := [32]byte{1}
	recordOf = func(*Live, context.Context) ([32]byte, error) { return sum, nil }
	t.Cleanup(func() { recordOf = (*Live).namespacesRecord })
	rt := &keepingRuntime{back: true}
	e := NewLive(testLab(), rt, Identity{}, Identity{})
	ctx := context.Background()
	if e.RestoreCheckpoint(ctx, "one") {
		t.Fatal("went back to a start never kept")
	}
	e.Checkpoint(ctx, "one")
	if rt.keeps != 1 || !e.RestoreCheckpoint(ctx, "one") || !e.RestoreCheckpoint(ctx, "one") {
		t.Fatalf("kept %d, could not go back to an unchanged lab", rt.keeps)
	}
	sum = [32]byte{2} // the namespaces changed
	if e.RestoreCheckpoint(ctx, "one") {
		t.Fatal("went back although the namespaces changed")
	}
	sum = [32]byte{1}
	rt.back = false // the runtime refuses (the audit log grew)
	if e.RestoreCheckpoint(ctx, "one") {
		t.Fatal("went back although the runtime refused")
	}
	e.Checkpoint(ctx, "one")
	if rt.keeps != 1 || e.RestoreCheckpoint(ctx, "one") {
		t.Errorf("after two misses in a row the start was kept again (%d keeps)", rt.keeps)
	}
	e.Checkpoint(ctx, "two")
	if rt.keeps != 2 {
		t.Errorf("another step's start was not kept: %d keeps", rt.keeps)
	}
}
