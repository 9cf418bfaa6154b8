package class

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"

	"github.com/labctl/labctl/provision"
)

// Up creates or repairs one learner's lab and waits until it is ready. It
// is idempotent: what is there and healthy is kept.
func (c *Class) Up(ctx context.Context, learner string) error {
	if err := ValidLearnerName(c.cfg.Prefix, learner); err != nil {
		return err
	}
	o := c.objects(learner)
	if o.node() {
		if err := checkNodeRanges(ctx, c.cs); err != nil {
			return err
		}
	}
	if !o.nodeAccessOn.IsZero() {
		if err := checkDedicatedNodes(ctx, c.cs, o.nodeAccessOn); err != nil {
			return err
		}
	}
	if err := c.ensureNamespace(ctx, o); err != nil {
		return err
	}
	if err := c.ensureObjects(ctx, o); err != nil {
		return err
	}
	if err := c.waitControlPlane(ctx, o.namespace); err != nil {
		return err
	}
	e, err := c.connect(ctx, learner)
	if err != nil {
		return err
	}
	defer e.Close()
	return e.setUp(ctx)
}

func (c *Class) ensureNamespace(ctx context.Context, o classObjects) error {
	want := o.namespaceObject()
	ns, err := c.cs.CoreV1().Namespaces().Get(ctx, o.namespace, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		c.logf("%s: creating namespace %s", o.learner, o.namespace)
		_, err = c.cs.CoreV1().Namespaces().Create(ctx, want, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", o.namespace, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading namespace %s: %w", o.namespace, err)
	case ns.DeletionTimestamp != nil:
		return fmt.Errorf("namespace %s is being removed: run the command again once it is gone", o.namespace)
	case ns.Labels[LabelClassLearner] != o.learner || ns.Labels[LabelClassLab] != o.lab.Metadata.Name:
		return fmt.Errorf("namespace %s exists and is not this class's (lab %q, learner %q): choose another --prefix or learner name", o.namespace, ns.Labels[LabelClassLab], ns.Labels[LabelClassLearner])
	}
	if on := want.Annotations[annotationNodeAccessOn]; on != "" && ns.Annotations[annotationNodeAccessOn] != on {
		if had := ns.Annotations[annotationNodeAccessOn]; had != "" {
			return fmt.Errorf("namespace %s was made with --node-access-on %s, not %s: give the same label, or bring the learner down first", o.namespace, had, on)
		}
		patch := []byte(`{"metadata":{"annotations":{"` + annotationNodeAccessOn + `":"` + on + `"}}}`)
		if _, err := c.cs.CoreV1().Namespaces().Patch(ctx, o.namespace, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("recording --node-access-on on namespace %s: %w", o.namespace, err)
		}
	}
	if level := want.Labels[provision.PodSecurityEnforce]; ns.Labels[provision.PodSecurityEnforce] != level {
		patch := []byte(`{"metadata":{"labels":{"` + provision.PodSecurityEnforce + `":"` + level + `"}}}`)
		if _, err := c.cs.CoreV1().Namespaces().Patch(ctx, o.namespace, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("setting Pod Security %s on namespace %s: %w", level, o.namespace, err)
		}
	}
	return nil
}

// ensureObjects creates what is missing of the learner's objects.
func (c *Class) ensureObjects(ctx context.Context, o classObjects) error {
	core := c.cs.CoreV1()
	ns := o.namespace
	if _, err := core.Secrets(ns).Get(ctx, certsSecret, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		data, err := makeControlPlaneCerts(ns, time.Now())
		if err != nil {
			return fmt.Errorf("making the certificates of %s: %w", ns, err)
		}
		if _, err := core.Secrets(ns).Create(ctx, o.certsSecret(data), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the certificates of %s: %w", ns, err)
		}
	} else if err != nil {
		return fmt.Errorf("reading the certificates of %s: %w", ns, err)
	} else if err := c.ensureCerts(ctx, ns, o.node()); err != nil {
		return err
	}
	if o.node() {
		cm := o.nodeConfigMap()
		err := ensureSpec(ctx, func(ctx context.Context) error {
			_, err := core.ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			return err
		}, func(ctx context.Context) error {
			cur, err := core.ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{})
			if err != nil || maps.Equal(cur.Data, cm.Data) {
				return err
			}
			cur.Data = cm.Data
			_, err = core.ConfigMaps(ns).Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("making the node's configuration in %s: %w", ns, err)
		}
	}
	cm := o.labConfigMap(c.fixtures)
	if old, err := core.ConfigMaps(ns).Get(ctx, labConfigMap, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		if _, err := core.ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the lab's files in %s: %w", ns, err)
		}
	} else if err != nil {
		return fmt.Errorf("reading the lab's files in %s: %w", ns, err)
	} else if !maps.Equal(old.Data, cm.Data) || !bytes.Equal(old.BinaryData["fixtures.tar"], cm.BinaryData["fixtures.tar"]) {
		old.Data, old.BinaryData = cm.Data, cm.BinaryData
		if _, err := core.ConfigMaps(ns).Update(ctx, old, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating the lab's files in %s: %w", ns, err)
		}
	}
	for _, claim := range []struct{ name, size string }{{dataClaim, claimSize}, {homeClaim, claimSize}} {
		// Read first: the quota refuses a second claim before the API
		// server would say it exists.
		if _, err := core.PersistentVolumeClaims(ns).Get(ctx, claim.name, metav1.GetOptions{}); err == nil {
			continue
		}
		if err := createIfMissing(ctx, func(ctx context.Context) error {
			_, err := core.PersistentVolumeClaims(ns).Create(ctx, o.claim(claim.name, claim.size), metav1.CreateOptions{})
			return err
		}); err != nil {
			return fmt.Errorf("creating volume claim %s/%s: %w", ns, claim.name, err)
		}
	}
	if err := createIfMissing(ctx, func(ctx context.Context) error {
		// Read first: the quota refuses a second Service before the API
		// server would say it exists.
		cur, err := core.Services(ns).Get(ctx, vcpService, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = core.Services(ns).Create(ctx, o.service(), metav1.CreateOptions{})
			return err
		case err != nil:
			return err
		case cur.Spec.PublishNotReadyAddresses && (!o.nodeAccess() || hasServicePort(cur.Spec.Ports, nodeAccessPortName)):
			return nil
		}
		// A class made by an older labctl: its Service dropped the API
		// server while another container of the Pod restarted. A class
		// made before node access: its Service lacks the listener's port.
		cur.Spec.PublishNotReadyAddresses = true
		if o.nodeAccess() && !hasServicePort(cur.Spec.Ports, nodeAccessPortName) {
			cur.Spec.Ports = append(cur.Spec.Ports, nodeAccessServicePort())
		}
		_, err = core.Services(ns).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	}); err != nil {
		return fmt.Errorf("making service %s/%s: %w", ns, vcpService, err)
	}
	for _, id := range []func() (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding){o.inviteObjects, o.homeboundObjects} {
		sa, role, rb := id()
		if err := c.ensureIdentity(ctx, sa, role, rb); err != nil {
			return err
		}
	}
	if err := c.ensurePolicy(ctx, o.networkPolicy()); err != nil {
		return fmt.Errorf("making network policy %s in %s: %w", isolatePolicy, ns, err)
	}
	peers, ports, err := c.apiServerEndpoints(ctx)
	if err != nil {
		return err
	}
	if err := c.ensurePolicy(ctx, o.homeboundPolicy(peers, ports)); err != nil {
		return fmt.Errorf("making network policy %s in %s: %w", homeboundPod, ns, err)
	}
	if err := c.ensureBox(ctx, o); err != nil {
		return err
	}
	// An invite of an older labctl was a token Secret that never expired.
	if err := core.Secrets(ns).Delete(ctx, legacyInviteSecret, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the old invite token %s/%s: %w", ns, legacyInviteSecret, err)
	}
	for _, pod := range o.pods() {
		if err := c.ensurePod(ctx, pod); err != nil {
			return err
		}
	}
	return nil
}

// ensureIdentity makes a service account, its role and the binding
// between them where they are missing.
func (c *Class) ensureIdentity(ctx context.Context, sa *corev1.ServiceAccount, role *rbacv1.Role, rb *rbacv1.RoleBinding) error {
	ns := sa.Namespace
	for _, obj := range []struct {
		what   string
		create func(context.Context) error
	}{
		{"service account " + sa.Name, func(ctx context.Context) error {
			_, err := c.cs.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
			return err
		}},
		{"role " + role.Name, func(ctx context.Context) error {
			_, err := c.cs.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{})
			return err
		}},
		{"role binding " + rb.Name, func(ctx context.Context) error {
			_, err := c.cs.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{})
			return err
		}},
	} {
		if err := createIfMissing(ctx, obj.create); err != nil {
			return fmt.Errorf("creating %s in %s: %w", obj.what, ns, err)
		}
	}
	return nil
}

// apiServerEndpoints are the addresses and ports the class cluster's API
// server serves on, as its default/kubernetes Service's endpoints say.
func (c *Class) apiServerEndpoints(ctx context.Context) ([]networkingv1.NetworkPolicyPeer, []networkingv1.NetworkPolicyPort, error) {
	list, err := c.cs.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kubernetes"})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the class cluster's API server endpoints (default/kubernetes): %w", err)
	}
	var peers []networkingv1.NetworkPolicyPeer
	var ports []networkingv1.NetworkPolicyPort
	seen := map[string]bool{}
	for _, sl := range list.Items {
		bits := "/32"
		if sl.AddressType == discoveryv1.AddressTypeIPv6 {
			bits = "/128"
		}
		for _, ep := range sl.Endpoints {
			for _, a := range ep.Addresses {
				if !seen[a] {
					seen[a] = true
					peers = append(peers, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: a + bits}})
				}
			}
		}
		for _, p := range sl.Ports {
			if p.Port == nil {
				continue
			}
			port := intstr.FromInt32(*p.Port)
			np := networkingv1.NetworkPolicyPort{Protocol: p.Protocol, Port: &port}
			if !slices.ContainsFunc(ports, func(q networkingv1.NetworkPolicyPort) bool { return equality.Semantic.DeepEqual(q, np) }) {
				ports = append(ports, np)
			}
		}
	}
	if len(peers) == 0 || len(ports) == 0 {
		return nil, nil, errors.New("the class cluster's API server has no endpoints in default/kubernetes: is the cluster up?")
	}
	return peers, ports, nil
}

// ensureBox makes the learner's LimitRange and ResourceQuota, or makes them
// say what labctl's say now.
func (c *Class) ensureBox(ctx context.Context, o classObjects) error {
	core := c.cs.CoreV1()
	lr := o.limitRange()
	err := ensureSpec(ctx, func(ctx context.Context) error {
		_, err := core.LimitRanges(o.namespace).Create(ctx, lr, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context) error {
		cur, err := core.LimitRanges(o.namespace).Get(ctx, lr.Name, metav1.GetOptions{})
		if err != nil || equality.Semantic.DeepEqual(cur.Spec, lr.Spec) {
			return err
		}
		cur.Spec = lr.Spec
		_, err = core.LimitRanges(o.namespace).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("making limit range %s in %s: %w", lr.Name, o.namespace, err)
	}
	q := o.quota()
	err = ensureSpec(ctx, func(ctx context.Context) error {
		_, err := core.ResourceQuotas(o.namespace).Create(ctx, q, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context) error {
		cur, err := core.ResourceQuotas(o.namespace).Get(ctx, q.Name, metav1.GetOptions{})
		if err != nil || equality.Semantic.DeepEqual(cur.Spec.Hard, q.Spec.Hard) {
			return err
		}
		cur.Spec = q.Spec
		_, err = core.ResourceQuotas(o.namespace).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("making resource quota %s in %s: %w", q.Name, o.namespace, err)
	}
	return nil
}

// ensureSpec creates an object, or, when it exists, brings it up to date
// with update (retried on a conflict).
func ensureSpec(ctx context.Context, create, update func(context.Context) error) error {
	err := create(ctx)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return update(ctx) })
}

// ensurePolicy creates np, or makes the policy of that name say what np
// says (a class made by an older labctl walled in less).
func (c *Class) ensurePolicy(ctx context.Context, np *networkingv1.NetworkPolicy) error {
	policies := c.cs.NetworkingV1().NetworkPolicies(np.Namespace)
	return ensureSpec(ctx, func(ctx context.Context) error {
		_, err := policies.Create(ctx, np, metav1.CreateOptions{})
		return err
	}, func(ctx context.Context) error {
		cur, err := policies.Get(ctx, np.Name, metav1.GetOptions{})
		if err != nil || equality.Semantic.DeepEqual(cur.Spec, np.Spec) {
			return err
		}
		cur.Spec = np.Spec
		_, err = policies.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

func createIfMissing(ctx context.Context, create func(context.Context) error) error {
	if err := create(ctx); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// ensurePod creates pod, replacing one that has ended, and one that is not
// ready and was made from other settings (another sandbox image, say, after
// an image that could not be pulled).
func (c *Class) ensurePod(ctx context.Context, pod *corev1.Pod) error {
	pods := c.cs.CoreV1().Pods(pod.Namespace)
	sum, err := settingsSum(pod)
	if err != nil {
		return err
	}
	pod.Annotations = map[string]string{annotationSpec: sum}
	old, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	stale := err == nil && !podReady(old) && old.Annotations[annotationSpec] != pod.Annotations[annotationSpec]
	if err == nil && (stale || old.Status.Phase == corev1.PodFailed || old.Status.Phase == corev1.PodSucceeded) {
		// Within the Pod's grace: a control plane that is not ready may
		// still run etcd, which must stop before another starts on its data.
		if err := c.stopPod(ctx, pod.Namespace, pod.Name); err != nil {
			return err
		}
		err = nil
		old = nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("reading pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if old != nil && err == nil {
		return nil
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// settingsSum is the sum of the settings pod is made from: its spec, and
// the sum of the configuration it reads when it starts (annotationConfig),
// if any.
func settingsSum(pod *corev1.Pod) (string, error) {
	spec, err := json.Marshal(pod.Spec)
	if err != nil {
		return "", err
	}
	if config := pod.Annotations[annotationConfig]; config != "" {
		spec = append(spec, config...)
	}
	return shortSum(spec), nil
}

// shortSum is the first 12 bytes of data's SHA-256, in hex: a settings sum.
func shortSum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:12])
}

// ensureCerts adds what a control plane made by an earlier labctl lacks:
// etcd's credentials (its etcd took connections without TLS) and, with
// node, the node's (made before learner nodes).
func (c *Class) ensureCerts(ctx context.Context, ns string, node bool) error {
	secrets := c.cs.CoreV1().Secrets(ns)
	sec, err := secrets.Get(ctx, certsSecret, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the certificates of %s: %w", ns, err)
	}
	data, changed, err := withEtcdCerts(sec.Data, time.Now())
	if err != nil {
		return fmt.Errorf("making etcd's certificates of %s: %w", ns, err)
	}
	if node {
		var nodeChanged bool
		data, nodeChanged, err = withNodeCerts(ns, data, time.Now())
		if err != nil {
			return fmt.Errorf("making the node's certificates of %s: %w", ns, err)
		}
		changed = changed || nodeChanged
	}
	if !changed {
		return nil
	}
	sec.Data = data
	if _, err := secrets.Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("adding certificates to %s: %w", ns, err)
	}
	return nil
}
