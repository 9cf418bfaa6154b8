package provision

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// nodeCluster is a fake cluster with two nodes and kube-proxy, whose Pods
// run as soon as they are created.
func nodeCluster() *fake.Clientset {
	cs := fake.NewClientset(
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "lab-control-plane"}},
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "lab-worker"}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.37.2"}}}}}},
	)
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod).DeepCopy()
		p.Status.Phase = corev1.PodRunning
		return true, p, cs.Tracker().Create(corev1.SchemeGroupVersion.WithResource("pods"), p, p.Namespace)
	})
	return cs
}

// A lab with node access gets one privileged Pod per node, named like the
// node, in a namespace of labctl's own that allows them; the learner may
// get and exec into exactly those Pods and create nothing there. A lab
// without it gets none of this.
func TestNodeAccess(t *testing.T) {
	ctx := context.Background()
	l := testLab()
	cs := nodeCluster()
	if err := grantNodeAccess(ctx, cs, l, map[string]string{"dev.labctl.lab": l.Metadata.Name}, true); err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Get(ctx, NodeAccessNamespace, metav1.GetOptions{})
	if err != nil || ns.Labels[PodSecurityEnforce] != "privileged" {
		t.Fatalf("namespace %s: %v, labels %v", NodeAccessNamespace, err, ns.Labels)
	}
	// The API server admits no Pod in a namespace without its default
	// ServiceAccount, which a new one gets only later.
	if _, err := cs.CoreV1().ServiceAccounts(NodeAccessNamespace).Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("the node-access Pods' namespace has no default ServiceAccount: %v", err)
	}
	nodes := []string{"lab-control-plane", "lab-worker"}
	for _, n := range nodes {
		p, err := cs.CoreV1().Pods(NodeAccessNamespace).Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("node %s has no node-access Pod: %v", n, err)
		}
		c := p.Spec.Containers[0]
		if p.Spec.NodeName != n || !p.Spec.HostPID || c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged ||
			c.Image != "registry.k8s.io/kube-proxy:v1.37.2" || c.ImagePullPolicy != corev1.PullNever || *p.Spec.AutomountServiceAccountToken {
			t.Errorf("node-access Pod of %s: %+v", n, p.Spec)
		}
		// Its listener asks for a client certificate of the lab's CA, on
		// the node's address only, and publishes no port.
		cmd := strings.Join(c.Command, " ")
		for _, want := range []string{"verify=1", "cafile=", `bind="$NODE_IP"`, "OPENSSL-LISTEN:10290,"} {
			if !strings.Contains(cmd, want) {
				t.Errorf("node-access Pod of %s runs %q, without %s", n, cmd, want)
			}
		}
		if len(c.Ports) != 0 || len(c.Env) != 1 || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef.FieldPath != "status.hostIP" {
			t.Errorf("node-access Pod of %s: ports %v, env %v; want no port and NODE_IP from status.hostIP", n, c.Ports, c.Env)
		}
	}
	role, err := cs.RbacV1().Roles(NodeAccessNamespace).Get(ctx, nodeAccessRole, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The learner gets the Pods (for a node's address) and nothing else:
	// no exec, which would go through the kubelet.
	if len(role.Rules) != 1 {
		t.Errorf("the learner's rules %+v: want one, get on the node-access Pods", role.Rules)
	}
	for _, r := range role.Rules {
		if !slices.Equal(r.ResourceNames, nodes) || slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") ||
			(r.Resources[0] == "pods" && !slices.Equal(r.Verbs, []string{"get"})) {
			t.Errorf("the learner's rule %+v reaches beyond getting the node-access Pods", r)
		}
	}
	rb, err := cs.RbacV1().RoleBindings(NodeAccessNamespace).Get(ctx, nodeAccessRole, metav1.GetOptions{})
	if err != nil || len(rb.Subjects) != 1 || rb.Subjects[0].Name != LearnerAccount {
		t.Errorf("binding: %v %+v", err, rb)
	}
	// A Pod that stopped is made afresh.
	p, _ := cs.CoreV1().Pods(NodeAccessNamespace).Get(ctx, "lab-worker", metav1.GetOptions{})
	p.Status.Phase = corev1.PodFailed
	p.UID = "old"
	if _, err := cs.CoreV1().Pods(NodeAccessNamespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := grantNodeAccess(ctx, cs, l, nil, false); err != nil {
		t.Fatal(err)
	}
	if p, _ := cs.CoreV1().Pods(NodeAccessNamespace).Get(ctx, "lab-worker", metav1.GetOptions{}); p.Status.Phase != corev1.PodRunning {
		t.Errorf("a failed node-access Pod was left %s", p.Status.Phase)
	}
	// A reset keeps the certificates (the sandbox holds the client's) and
	// the Pods; up makes new ones, and replaces the Pods that serve the old.
	before := podCert(t, cs, "lab-control-plane")
	if err := grantNodeAccess(ctx, cs, l, nil, false); err != nil {
		t.Fatal(err)
	}
	if got := podCert(t, cs, "lab-control-plane"); got != before {
		t.Errorf("a reset changed the node-access certificate: %s, was %s", got, before)
	}
	if err := grantNodeAccess(ctx, cs, l, nil, true); err != nil {
		t.Fatal(err)
	}
	srv, err := cs.CoreV1().Secrets(NodeAccessNamespace).Get(ctx, nodeAccessServerSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if got := podCert(t, cs, n); got == before || got != fingerprint(srv.Data[tlsCert]) {
			t.Errorf("after up, node %s's Pod serves certificate %s; the Secret's is %s, the old one %s", n, got, fingerprint(srv.Data[tlsCert]), before)
		}
	}
}

// podCert is the certificate the node-access Pod of node serves.
func podCert(t *testing.T, cs *fake.Clientset, node string) string {
	t.Helper()
	p, err := cs.CoreV1().Pods(NodeAccessNamespace).Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p.Annotations[nodeAccessCertAnnotation]
}
