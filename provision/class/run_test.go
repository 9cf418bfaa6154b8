package class

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/labctl/labctl/internal/homebound"
)

func fakeClass(objs ...corev1.Pod) (*Class, *fake.Clientset) {
	o := testObjects()
	cs := fake.NewClientset(apiServerSlice())
	for i := range objs {
		_, _ = cs.CoreV1().Pods(objs[i].Namespace).Create(context.Background(), &objs[i], metav1.CreateOptions{})
	}
	return &Class{cfg: Config{Lab: o.lab, Prefix: "labctl-", SandboxImage: o.image}, cs: cs, cp: o.cp}, cs
}

// apiServerSlice is the class cluster's API server as a kind cluster
// publishes it.
func apiServerSlice() *discoveryv1.EndpointSlice {
	port, tcp := int32(6443), corev1.ProtocolTCP
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault, Labels: map[string]string{discoveryv1.LabelServiceName: "kubernetes"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"172.18.0.2"}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &[]string{"https"}[0], Port: &port, Protocol: &tcp}},
	}
}

// A Pod that is not ready and was made from other settings (an image that
// could not be pulled, then --sandbox-image) is made again; a ready one,
// and one from the same settings, are kept.
func TestEnsurePodReplacesStaleUnreadyPods(t *testing.T) {
	ctx := context.Background()
	o := testObjects()
	old := *o.sandboxPod()
	old.Annotations = map[string]string{annotationSpec: "other"}
	old.UID = "old"
	c, cs := fakeClass(old)
	if err := c.ensurePod(ctx, o.sandboxPod()); err != nil {
		t.Fatal(err)
	}
	got, err := cs.CoreV1().Pods(o.namespace).Get(ctx, sandboxPod, metav1.GetOptions{})
	if err != nil || got.Annotations[annotationSpec] == "other" {
		t.Fatalf("the stale Pod was kept: %+v, %v", got.Annotations, err)
	}
	same := got.Annotations[annotationSpec]
	if err := c.ensurePod(ctx, o.sandboxPod()); err != nil {
		t.Fatal(err)
	}
	if again, _ := cs.CoreV1().Pods(o.namespace).Get(ctx, sandboxPod, metav1.GetOptions{}); again.Annotations[annotationSpec] != same {
		t.Error("a Pod from the same settings changed")
	}

	ready := *o.sandboxPod()
	ready.Annotations = map[string]string{annotationSpec: "other"}
	ready.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	c, cs = fakeClass(ready)
	if err := c.ensurePod(ctx, o.sandboxPod()); err != nil {
		t.Fatal(err)
	}
	if kept, _ := cs.CoreV1().Pods(o.namespace).Get(ctx, sandboxPod, metav1.GetOptions{}); kept.Annotations[annotationSpec] != "other" {
		t.Error("a ready Pod was replaced: the learner's session would end")
	}
}

// Down removes only a namespace of this class and lab.
func TestDownLeavesOtherLabsAlone(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	other := testObjects().namespaceObject()
	other.Labels[LabelClassLab] = "another-lab"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Down(ctx, "ada"); err == nil || !strings.Contains(err.Error(), "left alone") {
		t.Errorf("down of another lab's learner: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, other.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the namespace is gone: %v", err)
	}
	if _, _, err := c.Invite(ctx, "ada", time.Hour); !errors.Is(err, ErrNoLearner) {
		t.Errorf("an invite for another lab's learner: %v", err)
	}
	if err := c.RevokeInvites(ctx, "ada"); !errors.Is(err, ErrNoLearner) {
		t.Errorf("revoking the invites of another lab's learner: %v", err)
	}
}

// The learners' Pods run the checker, so capacity counts only the nodes of
// its architecture, and says how many nodes of others it left out.
func TestCapacityCountsNodesOfTheCheckersArch(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	node := func(name, label, reported string, unschedulable bool) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if label != "" {
			n.Labels[corev1.LabelArchStable] = label
		}
		n.Spec.Unschedulable = unschedulable
		n.Status.NodeInfo.Architecture = reported
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceMemory: kresource.MustParse("8Gi"), corev1.ResourceCPU: kresource.MustParse("4")}
		return n
	}
	for _, n := range []*corev1.Node{
		node("amd-1", "amd64", "amd64", false),
		node("arm-1", "arm64", "arm64", false),
		node("arm-2", "", "arm64", false), // no label: the kubelet's report
		node("amd-off", "amd64", "amd64", true),
	} {
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []struct{ name, node string }{{"on-amd", "amd-1"}, {"on-arm", "arm-1"}} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: "other"}, Spec: corev1.PodSpec{NodeName: p.node,
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceMemory: kresource.MustParse("1Gi"), corev1.ResourceCPU: kresource.MustParse("1")}}}}}}
		if _, err := cs.CoreV1().Pods("other").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	c.arch = "amd64"
	got, err := c.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Nodes != 1 || got.FreeMemory != 7<<30 || got.FreeMilliCPU != 3000 || got.Arch != "amd64" || !maps.Equal(got.OtherArch, map[string]int{"arm64": 2}) {
		t.Errorf("capacity for an amd64 checker: %+v, want the one schedulable amd64 node less its Pod, and 2 arm64 nodes left out", got)
	}

	c.arch = "" // a checker that could not be read: every node counts
	if got, err := c.Capacity(ctx); err != nil || got.Nodes != 3 || got.OtherArch != nil {
		t.Errorf("capacity without an architecture: %+v, %v", got, err)
	}
}

// A node just made (not Ready, or tainted not-ready by the kubelet or a
// network add-on) gives no room yet, and is named; a cordoned one is not.
func TestCapacityNamesNodesNotReady(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	c.arch = "amd64"
	node := func(name string, ready, cordoned bool, taint string) {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelArchStable: "amd64"}}}
		status := corev1.ConditionFalse
		if ready {
			status = corev1.ConditionTrue
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status}}
		n.Spec.Unschedulable = cordoned
		if taint != "" {
			n.Spec.Taints = []corev1.Taint{{Key: taint, Effect: corev1.TaintEffectNoSchedule}}
		}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceMemory: kresource.MustParse("8Gi"), corev1.ResourceCPU: kresource.MustParse("4")}
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	node("new", false, false, corev1.TaintNodeNotReady)
	node("network", true, false, "labctl.dev/network-unready")
	node("cordoned", false, true, "")
	node("ok", true, false, "")
	got, err := c.Capacity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Nodes != 1 || !slices.Equal(got.NotReady, []string{"network", "new"}) {
		t.Errorf("capacity %+v: want 1 node, and network and new not Ready", got)
	}
}

// With a placement, the room is that of the chosen nodes: those with the
// selector's labels, tainted ones only when the learners tolerate the
// taint; and every Pod carries the placement.
func TestCapacityCountsThePlacementsNodes(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	node := func(name string, labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: corev1.NodeSpec{Taints: taints}}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceMemory: kresource.MustParse("8Gi"), corev1.ResourceCPU: kresource.MustParse("4")}
		return n
	}
	dedicated := corev1.Taint{Key: "labctl.dev/class", Value: "yes", Effect: corev1.TaintEffectNoSchedule}
	for _, n := range []*corev1.Node{
		node("class-1", map[string]string{"pool": "class"}, dedicated),
		node("class-2", map[string]string{"pool": "class"}),
		node("other", map[string]string{"pool": "web"}),
		node("other-tainted", map[string]string{"pool": "class"}, corev1.Taint{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}),
	} {
		if _, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := c.Capacity(ctx); err != nil || got.Nodes != 2 {
		t.Errorf("capacity without a placement: %+v, %v, want class-2 and other", got, err)
	}
	p, err := ParsePlacement("pool=class", "labctl.dev/class=yes:NoSchedule")
	if err != nil {
		t.Fatal(err)
	}
	c.cfg.Placement = p
	if got, err := c.Capacity(ctx); err != nil || got.Nodes != 2 || got.FreeMemory != 16<<30 {
		t.Errorf("capacity with pool=class tolerating labctl.dev/class: %+v, %v, want class-1 and class-2", got, err)
	}
	o := c.objects("ada")
	for _, pod := range o.pods() {
		if pod.Spec.NodeSelector["pool"] != "class" || len(pod.Spec.Tolerations) != 1 || pod.Spec.Tolerations[0].Key != "labctl.dev/class" {
			t.Errorf("pod %s: node selector %v, tolerations %v", pod.Name, pod.Spec.NodeSelector, pod.Spec.Tolerations)
		}
	}
}

func TestParsePlacement(t *testing.T) {
	p, err := ParsePlacement(" pool=class, zone=a ", "dedicated:NoSchedule,labctl.dev/class=yes:NoExecute")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(p.NodeSelector, map[string]string{"pool": "class", "zone": "a"}) || len(p.Tolerations) != 2 ||
		p.Tolerations[0] != (corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}) ||
		p.Tolerations[1] != (corev1.Toleration{Key: "labctl.dev/class", Operator: corev1.TolerationOpEqual, Value: "yes", Effect: corev1.TaintEffectNoExecute}) {
		t.Errorf("placement %+v", p)
	}
	if p, err := ParsePlacement("", ""); err != nil || p.NodeSelector != nil || p.Tolerations != nil {
		t.Errorf("no placement: %+v, %v", p, err)
	}
	for _, bad := range [][2]string{{"pool", ""}, {"=class", ""}, {"", "dedicated"}, {"", "dedicated:Never"}, {"", "=x:NoSchedule"}} {
		if _, err := ParsePlacement(bad[0], bad[1]); err == nil {
			t.Errorf("ParsePlacement(%q, %q) accepted", bad[0], bad[1])
		}
	}
	// A toleration is checked as a lab's taint is: its key and value too.
	for _, tc := range []struct{ toleration, want string }{
		{"dedicated", `toleration "dedicated": write KEY[=VALUE]:EFFECT, the effect NoSchedule, PreferNoSchedule or NoExecute, e.g. labctl.dev/class=yes:NoSchedule`},
		{"dedicated:Never", `toleration "dedicated:Never": write KEY[=VALUE]:EFFECT`},
		{"=x:NoSchedule", `toleration "=x:NoSchedule": the taint's key is missing`},
		{"dedi cated:NoSchedule", `toleration "dedi cated:NoSchedule": "dedi cated" is not a taint key: `},
		{"dedicated=a b:NoSchedule", `toleration "dedicated=a b:NoSchedule": "a b" is not a taint value: `},
	} {
		_, err := ParsePlacement("", tc.toleration)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("toleration %q: %v, want %s", tc.toleration, err, tc.want)
		}
	}
	if p, err := ParsePlacement("", "dedicated=:NoSchedule"); err != nil ||
		p.Tolerations[0] != (corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Effect: corev1.TaintEffectNoSchedule}) {
		t.Errorf("toleration of the empty value: %+v, %v", p, err)
	}
}

// A lab whose learner could relabel namespaces, change admission or reach
// the kubelet's API is refused learner nodes; one whose learner can do
// none of it is not. The learner's API server answers, as
// SubjectAccessReviews of the learner's identity.
func TestCheckNodeSafe(t *testing.T) {
	l := testObjects().lab
	for _, tc := range []struct {
		allow string // verb resource[/subresource] the learner may; "" none
		says  string
	}{
		{"", ""},
		{"patch namespaces", "lets the learner patch namespaces"},
		{"get nodes/proxy", "lets the learner get nodes/proxy"},
		{"create validatingadmissionpolicies", "create validatingadmissionpolicies"},
		// RBAC authorizes a write on namespace N, and on its status and
		// finalize, against the roles bound in N too: access.rules that
		// write namespaces relabel the lab's own.
		{"update namespaces in gitops-lab", "lets the learner update namespaces in gitops-lab"},
		{"patch namespaces/status", "lets the learner patch namespaces/status"},
		{"update namespaces/finalize in gitops-lab", "lets the learner update namespaces/finalize in gitops-lab"},
		// Rights that grant themselves the rest: a role of any rules, a
		// binding to any role, anyone's identity.
		{"escalate roles in gitops-lab", "lets the learner escalate roles in gitops-lab"},
		{"bind clusterroles in gitops-lab", "lets the learner bind clusterroles in gitops-lab"},
		{"escalate clusterroles", "lets the learner escalate clusterroles"},
		{"impersonate groups", "lets the learner impersonate groups"},
	} {
		cs := fake.NewClientset()
		var asked []string
		cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
			sar := a.(k8stesting.CreateAction).GetObject().(*authorizationv1.SubjectAccessReview)
			ra := sar.Spec.ResourceAttributes
			what := ra.Verb + " " + ra.Resource
			if ra.Subresource != "" {
				what += "/" + ra.Subresource
			}
			if ra.Namespace != "" {
				what += " in " + ra.Namespace
			}
			asked = append(asked, sar.Spec.User+" "+what)
			sar.Status.Allowed = what == tc.allow
			return true, sar, nil
		})
		err := checkNodeSafe(context.Background(), cs, l)
		var le *LabError
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("a learner who may do none of it: %v", err)
		case tc.says != "" && (!errors.As(err, &le) || !strings.Contains(err.Error(), tc.says)):
			t.Errorf("a learner who may %s: %v, want a *LabError saying %q", tc.allow, err, tc.says)
		}
		if len(asked) == 0 || !strings.HasPrefix(asked[0], "system:serviceaccount:labctl-system:learner ") {
			t.Errorf("asked %v, want the learner's identity", asked)
		}
	}
}

// Outdated names the learners whose Pods run from other settings than class
// up makes now, a learner node's configuration among them (its kubelet
// reads it only when the Pod starts): class up keeps their ready Pods, so
// it must say so.
func TestOutdatedNamesLearnersOnOtherSettings(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	c.cfg.LearnerNodes, c.cfg.NodeImage = true, "labctl/node:x"
	for _, name := range []string{"ada", "bob"} {
		o := c.objects(name)
		for _, p := range o.pods() {
			if err := c.ensurePod(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := c.Outdated(ctx, []string{"ada", "bob", "cy"}); len(got) != 0 {
		t.Fatalf("Outdated = %v right after class up made them, want none", got)
	}

	// bob's node was made with an earlier configuration: same spec.
	earlier := c.objects("bob").controlPlanePod()
	earlier.Annotations[annotationConfig] = "earlier"
	sum, err := settingsSum(earlier)
	if err != nil {
		t.Fatal(err)
	}
	vcp, err := cs.CoreV1().Pods(c.Namespace("bob")).Get(ctx, vcpPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vcp.Annotations[annotationSpec] = sum
	if _, err := cs.CoreV1().Pods(vcp.Namespace).Update(ctx, vcp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := c.Outdated(ctx, []string{"ada", "bob", "cy"}); !slices.Equal(got, []string{"bob"}) {
		t.Errorf("Outdated = %v, want [bob] (its node's configuration changed)", got)
	}
}

// A control plane that runs but failed its readiness probe a moment ago is
// waited for; one that stays unready past the grace, and one that does not
// run, are said at once (the latter without waiting).
func TestWaitReadyOutwaitsAMomentNotReady(t *testing.T) {
	ctx := context.Background()
	o := testObjects()
	running := func(p *corev1.Pod, ready bool) corev1.Pod {
		st := corev1.ConditionFalse
		if ready {
			st = corev1.ConditionTrue
		}
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}
		return *p
	}
	c, cs := fakeClass(running(o.controlPlanePod(), false), running(o.sandboxPod(), true), running(o.homeboundPod(), true))
	go func() {
		time.Sleep(1500 * time.Millisecond)
		p := running(o.controlPlanePod(), true)
		_, _ = cs.CoreV1().Pods(o.namespace).UpdateStatus(ctx, &p, metav1.UpdateOptions{})
	}()
	if msg := c.waitReady(ctx, o.namespace, 20*time.Second); msg != "" {
		t.Errorf("waitReady = %q, want the control plane ready again", msg)
	}

	c, _ = fakeClass(running(o.controlPlanePod(), false), running(o.sandboxPod(), true), running(o.homeboundPod(), true))
	began := time.Now()
	if msg := c.waitReady(ctx, o.namespace, 1500*time.Millisecond); msg != "pod vcp is not ready" {
		t.Errorf("waitReady = %q, want the control plane not ready", msg)
	}
	if waited := time.Since(began); waited < 1500*time.Millisecond {
		t.Errorf("waitReady gave up after %s, before its grace", waited)
	}

	pending := o.controlPlanePod()
	pending.Status.Phase = corev1.PodPending
	c, _ = fakeClass(*pending, running(o.sandboxPod(), true))
	began = time.Now()
	if msg := c.waitReady(ctx, o.namespace, time.Minute); msg == "" || time.Since(began) > 30*time.Second {
		t.Errorf("a Pod that does not run: waitReady = %q after %s, want its problem at once", msg, time.Since(began))
	}
}

// Renew stops only the learner's Pods made from other settings, ready or
// not, and leaves current ones (and a learner with none) alone.
func TestRenewStopsOnlyOutdatedPods(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	o := c.objects("ada")
	for _, p := range o.pods() {
		if err := c.ensurePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	vcp, err := cs.CoreV1().Pods(o.namespace).Get(ctx, vcpPod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vcp.Annotations[annotationSpec] = "earlier"
	vcp.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	if _, err := cs.CoreV1().Pods(o.namespace).Update(ctx, vcp, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Renew(ctx, "ada"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(o.namespace).Get(ctx, vcpPod, metav1.GetOptions{}); err == nil {
		t.Error("the outdated control plane is still there")
	}
	if _, err := cs.CoreV1().Pods(o.namespace).Get(ctx, sandboxPod, metav1.GetOptions{}); err != nil {
		t.Errorf("the current sandbox was stopped: %v", err)
	}
	var graces []*int64
	for _, a := range cs.Actions() {
		if d, ok := a.(k8stesting.DeleteAction); ok {
			graces = append(graces, d.GetDeleteOptions().GracePeriodSeconds)
		}
	}
	if len(graces) != 1 || graces[0] != nil {
		t.Errorf("deletes with grace %v, want one within the Pod's own grace period (etcd stops before another starts)", graces)
	}
	if err := c.Renew(ctx, "bob"); err != nil {
		t.Errorf("a learner with no Pods: %v", err)
	}
}

// A Pod whose node never says it ended (graceful deletes leave it there)
// is deleted at once after stopGrace.
func TestStopPodForcesAPodItsNodeNeverEnds(t *testing.T) {
	ctx := context.Background()
	o := testObjects()
	c, cs := fakeClass(*o.controlPlanePod())
	defer func(g time.Duration) { stopGrace = g }(stopGrace)
	stopGrace = time.Second
	var graces []string
	cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		g := a.(k8stesting.DeleteAction).GetDeleteOptions().GracePeriodSeconds
		if g == nil {
			graces = append(graces, "own")
			return true, nil, nil // the node never confirms
		}
		graces = append(graces, "0")
		return false, nil, nil
	})
	if err := c.stopPod(ctx, o.namespace, vcpPod); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(o.namespace).Get(ctx, vcpPod, metav1.GetOptions{}); err == nil {
		t.Error("the Pod is still there")
	}
	if !slices.Equal(graces, []string{"own", "0"}) {
		t.Errorf("deletes %v, want its own grace, then at once", graces)
	}
}

// The learner's API server stays reachable through its Service while the
// control-plane Pod is not ready (another container restarts); a class
// made by an older labctl gets the same Service at its next class up.
func TestServiceReachesAnAPIServerWhosePodIsNotReady(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	o := c.objects("ada")
	old := o.service()
	old.Spec.PublishNotReadyAddresses = false
	if _, err := cs.CoreV1().Services(o.namespace).Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The learner's quota (services: 1) refuses a second Service before
	// the API server would say it exists.
	cs.PrependReactor("create", "services", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("services"), vcpService, errors.New("exceeded quota: learner"))
	})
	if err := c.ensureObjects(ctx, o); err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(o.namespace).Get(ctx, vcpService, metav1.GetOptions{})
	if err != nil || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("the Service of an older class after class up: %+v, %v", svc.Spec, err)
	}
}

// A sandbox the warden of /root stopped is named with the warden's reason,
// escaped, where class status and class up say what keeps a learner from
// being ready.
func TestReadinessSaysWhyTheWardenStoppedTheSandbox(t *testing.T) {
	ctx := context.Background()
	o := testObjects()
	ready := func(p *corev1.Pod) corev1.Pod {
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		return *p
	}
	c, cs := fakeClass(ready(o.controlPlanePod()), ready(o.homeboundPod()))
	if msg, _ := c.readiness(ctx, o.namespace); msg != "pod sandbox is missing" {
		t.Errorf("readiness = %q", msg)
	}
	for i, m := range []string{"earlier", "/root holds 3.0 GiB\x1b]52;c;eA==\x07"} {
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e" + strconv.Itoa(i), Namespace: o.namespace},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: sandboxPod}, Reason: homebound.EventReason, Message: m,
			LastTimestamp: metav1.NewTime(time.Now().Add(time.Duration(i) * time.Minute))}
		if _, err := cs.CoreV1().Events(o.namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	msg, _ := c.readiness(ctx, o.namespace)
	if !strings.HasPrefix(msg, "pod sandbox is missing: /root holds 3.0 GiB") || strings.ContainsRune(msg, '\x1b') {
		t.Errorf("readiness = %q, want the last reason, escaped", msg)
	}
}
