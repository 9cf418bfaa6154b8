package provision

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fakediscovery "k8s.io/client-go/discovery/fake"
)

// TestNamespacesRecordSeesEveryWrite: the record a checkpoint keeps is the
// same while nothing in the lab's namespaces changes, and differs after an
// object is added, written (a new resource version), replaced (a new
// identity under the same name) or removed, or a namespace is relabelled or
// gone. A Pod's status and events, which Kubernetes' components write as
// time goes by, do not change it. A cluster whose discovery is incomplete
// gives no record.
func TestNamespacesRecordSeesEveryWrite(t *testing.T) {
	r, cs, _ := resetFixture(t)
	cs.Fake.Resources[0].APIResources = append(cs.Fake.Resources[0].APIResources, resource("events", listDelete...))
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
