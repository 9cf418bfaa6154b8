package class

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// TestNodeDNSObjects: the learner's cluster DNS is every object it needs,
// each of a kind labctl knows how to apply; its Service address is in the
// node's Service range (not its first address, the API server's) and the
// one the kubelet gives every Pod; CoreDNS runs the image given, as a
// non-root user without capabilities, so Pod Security restricted admits it.
func TestNodeDNSObjects(t *testing.T) {
	objs, err := nodeDNSObjects("example.test/coredns:1")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var dep appsv1.Deployment
	for _, o := range objs {
		kinds = append(kinds, o.GetKind())
		if nodeDNSResources[o.GetKind()] == "" {
			t.Errorf("no resource known for kind %s", o.GetKind())
		}
		if o.GetKind() == "Deployment" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &dep); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := strings.Join(kinds, " "); got != "ServiceAccount ClusterRole ClusterRoleBinding ConfigMap Deployment Service" {
		t.Errorf("objects %s", got)
	}
	a := netip.MustParseAddr(nodeDNSAddress)
	if !netip.MustParsePrefix(nodeServiceCIDR).Contains(a) || a == netip.MustParseAddr("10.97.0.1") {
		t.Errorf("DNS address %s: want one in %s other than its first", a, nodeServiceCIDR)
	}
	if !strings.Contains(nodeKubelet, "clusterDNS: ["+nodeDNSAddress+"]") {
		t.Errorf("the kubelet does not give Pods the DNS Service's address:\n%s", nodeKubelet)
	}
	c := dep.Spec.Template.Spec.Containers
	if len(c) != 1 || c[0].Image != "example.test/coredns:1" {
		t.Fatalf("CoreDNS containers %+v", c)
	}
	sc, psc := c[0].SecurityContext, dep.Spec.Template.Spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || len(sc.Capabilities.Add) != 0 || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("CoreDNS may run as root or with capabilities: %+v %+v", psc, sc)
	}
	if c[0].Resources.Limits.Memory().IsZero() {
		t.Error("CoreDNS has no memory limit")
	}
}

// A learner's DNS that never gets ready is named with what its Pod waits
// for, and the way to retry.
func TestWaitNodeDNSSaysWhy(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "coredns-1", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-dns"}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CreateContainerConfigError", Message: "secret \"x\" not found"}}}}},
	})
	err := waitNodeDNS(context.Background(), cs, 10*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), `(Pod coredns-1: CreateContainerConfigError: secret "x" not found); `+"`labctl class up` again waits for it anew") {
		t.Errorf("error %v", err)
	}
}

// TestWaitNodeDNSStopsAtAnImageTheNodeLacks: a node image without CoreDNS's
// image is said at once, with the fix, not as the whole wait's timeout.
func TestWaitNodeDNSStopsAtAnImageTheNodeLacks(t *testing.T) {
	cs := fake.NewClientset(&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "coredns-1", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-dns"}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{
			Image: "registry.k8s.io/coredns/coredns:v1.14.6",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImageNeverPull", Message: "image not present"}}}}},
	})
	err := waitNodeDNS(context.Background(), cs, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "has no image registry.k8s.io/coredns/coredns:v1.14.6 for its cluster DNS") ||
		!strings.Contains(err.Error(), "--node-image") {
		t.Errorf("error %v", err)
	}
}
