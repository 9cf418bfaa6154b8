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
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/retry"

	"github.com/labctl/labctl/internal/homebound"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
)

// Learners lists the class's learners, sorted by name.
func (c *Class) Learners(ctx context.Context) ([]LearnerInfo, error) {
	sel := LabelClassPrefix + "=" + prefixLabel(c.cfg.Prefix) + "," + LabelClassLab + "=" + c.cfg.Lab.Metadata.Name
	list, err := c.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing the class's namespaces: %w", err)
	}
	out := make([]LearnerInfo, 0, len(list.Items))
	for _, ns := range list.Items {
		info := LearnerInfo{Name: ns.Labels[LabelClassLearner], Namespace: ns.Name}
		if ns.Name != c.Namespace(info.Name) {
			continue // another prefix with the same label value
		}
		switch {
		case ns.DeletionTimestamp != nil:
			info.Problem = "being removed"
		case ns.Annotations[annotationDone] == "":
			info.Problem = "not set up yet: `labctl class up` finishes it"
		default:
			info.Problem, info.Settling = c.readiness(ctx, ns.Name)
		}
		info.Ready = info.Problem == ""
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// readiness says what keeps a learner's lab from being ready ("" when
// nothing does), and whether it is only that a Pod that runs is not
// ready at the moment (its probe failed a few times: an API server whose
// etcd answered slowly), which may pass by itself.
func (c *Class) readiness(ctx context.Context, ns string) (msg string, passing bool) {
	for _, pn := range podNames {
		name := pn.name
		p, err := c.cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) {
				if name == sandboxPod {
					if why := c.homeStopped(ctx, ns); why != "" {
						return "pod " + name + " is missing: " + why, false
					}
				}
				return "pod " + name + " is missing", false
			}
			return err.Error(), false
		}
		if msg := podProblem(p); msg != "" {
			return msg, false
		}
		if msg := podPending(p); msg != "" {
			return msg, false
		}
		if !podReady(p) {
			return "pod " + name + " is not ready", p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning
		}
	}
	return "", false
}

// readyGrace is how long Connect waits for a learner's Pods that run but
// are not ready at the moment to be ready again before it says the lab is
// not up: a control plane made anew by `class up` may fail its readiness
// probe for a few seconds under load right after it first passed.
const readyGrace = 30 * time.Second

// waitReady is "" once the learner's Pods are ready, waiting up to grace
// while the only problem is one that may pass by itself; else the problem.
func (c *Class) waitReady(ctx context.Context, ns string, grace time.Duration) string {
	msg, passing := c.readiness(ctx, ns)
	if msg == "" || !passing {
		return msg
	}
	c.logf("%s: %s; waiting up to %s for it", ns, msg, grace)
	deadline := time.Now().Add(grace)
	for passing && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return msg
		case <-time.After(time.Second):
		}
		msg, passing = c.readiness(ctx, ns)
	}
	return msg
}

// podReady says whether every container of p is ready.
func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podProblem says what keeps p from running that waiting will not mend: it
// has ended, an image cannot be had, a container keeps failing.
func podProblem(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return fmt.Sprintf("pod %s has ended (%s)", p.Name, p.Status.Phase)
	}
	statuses := append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, s := range statuses {
		w := s.State.Waiting
		if w == nil {
			continue
		}
		switch w.Reason {
		case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName":
			return fmt.Sprintf("pod %s: container %s cannot get image %s (%s): push it to a registry the cluster's nodes use, or load it into them, and pass --sandbox-image when it has another name", p.Name, s.Name, s.Image, w.Reason)
		case "CrashLoopBackOff", "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
			// The container writes its termination message, and what it
			// runs words the runtime's errors: in the sandbox, that is the
			// learner. Both are quoted escaped, on one line.
			last := ""
			if t := s.LastTerminationState.Terminated; t != nil {
				last = fmt.Sprintf(" (last exit %d: %s)", t.ExitCode, textsafe.EscapeLine(strings.TrimSpace(t.Message)))
			}
			return fmt.Sprintf("pod %s: container %s keeps failing: %s %s%s", p.Name, s.Name, w.Reason, textsafe.EscapeLine(w.Message), last)
		}
	}
	return ""
}

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
		case err != nil || cur.Spec.PublishNotReadyAddresses:
			return err
		}
		// A class made by an older labctl: its Service dropped the API
		// server while another container of the Pod restarted.
		cur.Spec.PublishNotReadyAddresses = true
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

// Outdated names the learners of names whose Pods run from other settings
// than class up makes them from now (an earlier labctl's, another image):
// class up leaves a ready Pod as it is, so as not to end a session. A
// learner whose Pods cannot be read is not named.
func (c *Class) Outdated(ctx context.Context, names []string) []string {
	var out []string
	for _, name := range names {
		if ctx.Err() != nil {
			break
		}
		if old, err := c.outdatedPods(ctx, name); err == nil && len(old) > 0 {
			out = append(out, name)
		}
	}
	return out
}

// outdatedPods names the learner's Pods that run from other settings than
// class up makes them from now.
func (c *Class) outdatedPods(ctx context.Context, learner string) ([]string, error) {
	o := c.objects(learner)
	var out []string
	for _, want := range o.pods() {
		sum, err := settingsSum(want)
		if err != nil {
			return nil, err
		}
		cur, err := c.cs.CoreV1().Pods(o.namespace).Get(ctx, want.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading pod %s/%s: %w", o.namespace, want.Name, err)
		case cur.DeletionTimestamp == nil && cur.Annotations[annotationSpec] != sum:
			out = append(out, want.Name)
		}
	}
	return out, nil
}

// Renew stops those of the learner's Pods that run from other settings
// (Outdated), each within its own grace period, and waits until they are
// gone, so that Up makes them anew from these settings. The learner's
// shell ends; their /root and their cluster's data (the claims) are kept.
func (c *Class) Renew(ctx context.Context, learner string) error {
	if err := ValidLearnerName(c.cfg.Prefix, learner); err != nil {
		return err
	}
	old, err := c.outdatedPods(ctx, learner)
	if err != nil {
		return err
	}
	for _, name := range old {
		if err := c.stopPod(ctx, c.Namespace(learner), name); err != nil {
			return err
		}
	}
	return nil
}

// stopGrace is how long stopPod waits for a Pod's own graceful end.
var stopGrace = 2 * time.Minute

// stopPod deletes a pod within its own grace period and waits until it is
// gone: a control plane's etcd must have stopped before another starts on
// its data. A Pod whose node never says it ended (a node that is gone) is
// deleted at once after stopGrace.
func (c *Class) stopPod(ctx context.Context, ns, name string) error {
	err := c.removePod(ctx, ns, name, nil, stopGrace)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return err
	}
	c.logf("pod %s/%s did not end within %s; deleting it at once", ns, name, stopGrace)
	return c.deletePod(ctx, ns, name)
}

// deletePod deletes a pod at once and waits until it is gone.
func (c *Class) deletePod(ctx context.Context, ns, name string) error {
	zero := int64(0)
	return c.removePod(ctx, ns, name, &zero, time.Minute)
}

// removePod deletes a pod within grace (nil: its own grace period) and
// waits up to limit until it is gone.
func (c *Class) removePod(ctx context.Context, ns, name string, grace *int64, limit time.Duration) error {
	pods := c.cs.CoreV1().Pods(ns)
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: grace}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting pod %s/%s: %w", ns, name, err)
	}
	return c.poll(ctx, limit, "pod "+ns+"/"+name+" to go", func() (bool, error) {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// poll calls done every 300 ms until it says true, fails, or limit passes.
func (c *Class) poll(ctx context.Context, limit time.Duration, what string, done func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		ok, err := done()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waited %s for %s: %w", limit, what, ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// waitControlPlane places the checker in each of the learner's Pods whose
// prepare container waits for it, and waits until the API server is ready
// and the sandbox and the warden of /root run. A problem that waiting will
// not mend ends it early.
func (c *Class) waitControlPlane(ctx context.Context, ns string) error {
	pods := c.cs.CoreV1().Pods(ns)
	placed := map[string]bool{}
	pending := ""
	err := c.poll(ctx, classWait, "the control plane and the sandbox of "+ns, func() (bool, error) {
		pending = ""
		ready := true
		for _, pn := range podNames {
			p, err := pods.Get(ctx, pn.name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) && pn.name == sandboxPod {
				if why := c.homeStopped(ctx, ns); why != "" {
					return false, fmt.Errorf("pod %s/%s is gone: %s", ns, pn.name, why)
				}
			}
			if err != nil {
				return false, fmt.Errorf("reading pod %s/%s: %w", ns, pn.name, err)
			}
			if msg := podProblem(p); msg != "" {
				return false, errors.New(msg)
			}
			if !placed[p.Name] && initRunning(p, containerPrepare) {
				if err := c.placeChecker(ctx, ns, p.Name, pn.checker); err != nil {
					return false, err
				}
				placed[p.Name] = true
			}
			pending += podPending(p)
			ready = ready && podReady(p)
		}
		return ready, nil
	})
	if err != nil && pending != "" {
		if strings.Contains(pending, "PersistentVolumeClaim") {
			pending += " (the learner's volume claims are not bound: name a StorageClass of the cluster with --storage-class, or give it a default one)"
		}
		return fmt.Errorf("%w: %s", err, pending)
	}
	return err
}

// homeStopped is why the warden of the learner's /root last stopped their
// sandbox, escaped, or "" if it has not (within the Events the class
// cluster keeps, an hour unless its API server says otherwise).
func (c *Class) homeStopped(ctx context.Context, ns string) string {
	evs, err := c.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + sandboxPod + ",reason=" + homebound.EventReason})
	if err != nil || len(evs.Items) == 0 {
		return ""
	}
	last := slices.MaxFunc(evs.Items, func(a, b corev1.Event) int { return a.LastTimestamp.Compare(b.LastTimestamp.Time) })
	return textsafe.EscapeLine(last.Message)
}

// initRunning says whether p's init container name runs.
func initRunning(p *corev1.Pod, name string) bool {
	for _, s := range p.Status.InitContainerStatuses {
		if s.Name == name {
			return s.State.Running != nil
		}
	}
	return false
}

// placeChecker streams the static checker into dir of pod's prepare
// container, which ends once it is there: the Pod's other containers have
// it read-only.
func (c *Class) placeChecker(ctx context.Context, ns, pod, dir string) error {
	bin, err := docker.CheckerBinary(c.cfg.CheckerBinary)
	if err != nil {
		return err
	}
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	bin = dir + "/labctl"
	script := `set -e; cat > ` + bin + `.new; chmod 0555 ` + bin + `.new; mv ` + bin + `.new ` + bin + `; : > ` + dir + `/ready`
	code, out, err := c.pods(ns).run(ctx, podCommand{pod: pod, container: containerPrepare, cmd: []string{"sh", "-c", script}, stdin: f, wait: copyWait})
	if err != nil {
		return fmt.Errorf("placing the checker in %s: %w", ns, err)
	}
	if code != 0 {
		return fmt.Errorf("placing the checker in %s: exit %d: %s", ns, code, out.FirstLine("(it printed nothing)"))
	}
	return nil
}

// Down removes one learner's namespace and everything in it, and waits
// until it is gone.
func (c *Class) Down(ctx context.Context, learner string) error {
	ns := c.Namespace(learner)
	existing, err := c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading namespace %s: %w", ns, err)
	}
	if !c.owns(existing, learner) {
		return fmt.Errorf("namespace %s is not a learner's of this class (lab %s): left alone", ns, c.cfg.Lab.Metadata.Name)
	}
	// The Pods go first and at once: nothing in them is kept, and the
	// namespace would otherwise wait for their grace periods.
	zero := int64(0)
	if err := c.cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the pods of %s: %w", ns, err)
	}
	if err := c.cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	return c.poll(ctx, 3*time.Minute, "namespace "+ns+" to go", func() (bool, error) {
		_, err := c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// Capacity reads what the cluster can still schedule: the allocatable
// memory and CPU of its Ready, schedulable nodes less what the Pods there
// request.
func (c *Class) Capacity(ctx context.Context) (Capacity, error) {
	var cap Capacity
	cap.LearnerMemory, cap.LearnerMilliCPU = learnerRequests()
	if c.nodeImage() != "" {
		m, cpu := nodeLearnerRequests()
		cap.LearnerMemory += m
		cap.LearnerMilliCPU += cpu
	}
	cap.Arch = c.arch
	nodes, err := c.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return cap, fmt.Errorf("listing the class cluster's nodes: %w", err)
	}
	usable := map[string]bool{}
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable || !c.cfg.Placement.fits(&n) {
			continue
		}
		if arch := nodeArch(&n); c.arch == "" || arch == c.arch {
			if !nodeReady(&n) || notReadyTaint(&n) {
				cap.NotReady = append(cap.NotReady, n.Name)
				continue
			}
		}
		if !nodeReady(&n) || c.noSchedule(&n) {
			continue
		}
		if arch := nodeArch(&n); c.arch != "" && arch != c.arch {
			if cap.OtherArch == nil {
				cap.OtherArch = map[string]int{}
			}
			cap.OtherArch[arch]++
			continue
		}
		usable[n.Name] = true
		cap.Nodes++
		cap.FreeMemory += n.Status.Allocatable.Memory().Value()
		cap.FreeMilliCPU += n.Status.Allocatable.Cpu().MilliValue()
	}
	pods, err := c.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"})
	if err != nil {
		return cap, fmt.Errorf("listing the class cluster's pods: %w", err)
	}
	for _, p := range pods.Items {
		if !usable[p.Spec.NodeName] {
			continue
		}
		for _, ct := range p.Spec.Containers {
			cap.FreeMemory -= ct.Resources.Requests.Memory().Value()
			cap.FreeMilliCPU -= ct.Resources.Requests.Cpu().MilliValue()
		}
	}
	return cap, nil
}

// nodeArch is the node's architecture, by its label, else as its kubelet
// reports it.
func nodeArch(n *corev1.Node) string {
	if a := n.Labels[corev1.LabelArchStable]; a != "" {
		return a
	}
	return n.Status.NodeInfo.Architecture
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// notReadyTaint says whether n carries a taint of a node that is not ready
// yet: the kubelet's and the node controller's, or a network add-on's.
func notReadyTaint(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		switch t.Key {
		case corev1.TaintNodeNotReady, corev1.TaintNodeUnreachable, corev1.TaintNodeNetworkUnavailable, "labctl.dev/network-unready":
			return true
		}
	}
	return false
}

func (c *Class) noSchedule(n *corev1.Node) bool {
	for _, t := range n.Spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !c.cfg.Placement.tolerates(&t) {
			return true
		}
	}
	return false
}

// owns says whether ns is learner's namespace in this class and lab.
func (c *Class) owns(ns *corev1.Namespace, learner string) bool {
	return ns.Labels[LabelClassLearner] == learner && ns.Labels[LabelClassPrefix] == prefixLabel(c.cfg.Prefix) &&
		ns.Labels[LabelClassLab] == c.cfg.Lab.Metadata.Name
}

// inviteContext names the context of an invite kubeconfig: the lab and
// the learner, which `labctl shell --invite` reads back.
func inviteContext(labName, learner string) string { return "labctl:" + labName + ":" + learner }

// Invite bounds: a token lives at least MinInviteTTL and at most
// MaxInviteTTL (the class cluster may cut it shorter).
const (
	MinInviteTTL = 10 * time.Minute
	MaxInviteTTL = 7 * 24 * time.Hour
)

// Invite returns a kubeconfig for the class cluster that may only exec into
// and port-forward to the learner's sandbox Pod, with a token that expires
// after ttl, and when it expires as the class cluster says.
func (c *Class) Invite(ctx context.Context, learner string, ttl time.Duration) ([]byte, time.Time, error) {
	if ttl < MinInviteTTL || ttl > MaxInviteTTL {
		return nil, time.Time{}, fmt.Errorf("an invite lasts from %v to %v, not %v", MinInviteTTL, MaxInviteTTL, ttl)
	}
	ns, err := c.learnerNamespace(ctx, learner)
	if err != nil {
		return nil, time.Time{}, err
	}
	secs := int64(ttl / time.Second)
	tr, err := c.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, inviteAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) {
		return nil, time.Time{}, fmt.Errorf("learner %s has no invite identity: run `labctl class up` again", learner)
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("making the invite token of %s: %w", learner, err)
	}
	ca := c.rest.CAData
	if len(ca) == 0 && c.rest.CAFile != "" {
		if ca, err = os.ReadFile(c.rest.CAFile); err != nil {
			return nil, time.Time{}, err
		}
	}
	name := inviteContext(c.cfg.Lab.Metadata.Name, learner)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: c.rest.Host, CertificateAuthorityData: ca, TLSServerName: c.rest.ServerName}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: ns}
	cfg.CurrentContext = name
	out, err := clientcmd.Write(*cfg)
	return out, tr.Status.ExpirationTimestamp.Time, err
}

// RevokeInvites makes the learner's invite identity anew: every invite
// written for them before stops working at once (their tokens are bound to
// the old account).
func (c *Class) RevokeInvites(ctx context.Context, learner string) error {
	ns, err := c.learnerNamespace(ctx, learner)
	if err != nil {
		return err
	}
	accounts := c.cs.CoreV1().ServiceAccounts(ns)
	if err := accounts.Delete(ctx, inviteAccount, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("revoking the invites of %s: %w", learner, err)
	}
	sa, _, _ := c.objects(learner).inviteObjects()
	return c.poll(ctx, time.Minute, "the new invite identity of "+ns, func() (bool, error) {
		_, err := accounts.Create(ctx, sa, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return false, nil // the old one is still being deleted
		}
		return err == nil, err
	})
}

// learnerNamespace is the namespace of learner in this class, or
// ErrNoLearner.
func (c *Class) learnerNamespace(ctx context.Context, learner string) (string, error) {
	ns := c.Namespace(learner)
	n, err := c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || (err == nil && !c.owns(n, learner)) {
		return "", fmt.Errorf("learner %s: %w", learner, ErrNoLearner)
	}
	if err != nil {
		return "", fmt.Errorf("reading namespace %s: %w", ns, err)
	}
	return ns, nil
}

// podPending says why p is not scheduled yet (waiting may mend it), or "".
func podPending(p *corev1.Pod) string {
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
			return fmt.Sprintf("pod %s is not scheduled: %s", p.Name, cond.Message)
		}
	}
	return ""
}

// ErrOpenNetwork: the class cluster does not enforce the learners'
// NetworkPolicy.
var ErrOpenNetwork = errors.New("the class cluster does not enforce NetworkPolicy")

// CheckIsolation tries the learner's wall from inside it: the admin
// container of their control-plane Pod (out of the learner's reach, under
// the same policy as their sandbox) connects to the class cluster's own API
// server, which the isolate policy forbids. A connection means the
// cluster's network plugin ignores the policy (ErrOpenNetwork).
func (c *Class) CheckIsolation(ctx context.Context, learner string) error {
	ns, err := c.learnerNamespace(ctx, learner)
	if err != nil {
		return err
	}
	svc, err := c.cs.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the class cluster's kubernetes Service: %w", err)
	}
	if svc.Spec.ClusterIP == "" || len(svc.Spec.Ports) == 0 {
		return fmt.Errorf("the class cluster's kubernetes Service has no address to try the learners' walls with")
	}
	target := fmt.Sprintf("%s/%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	script := "if timeout 3 bash -c 'exec 3<>/dev/tcp/" + target + "' 2>/dev/null; then echo open; else echo walled; fi"
	code, out, err := c.pods(ns).run(ctx, podCommand{pod: vcpPod, container: containerAdmin, cmd: []string{"sh", "-c", script}, wait: 30 * time.Second})
	if err != nil {
		return fmt.Errorf("trying the network wall of %s: %w", learner, err)
	}
	switch answer := strings.TrimSpace(out.Text()); {
	case code == 0 && answer == "walled":
		return nil
	case code == 0 && answer == "open":
		return fmt.Errorf("%w: from the Pods of %s labctl reached the class cluster's own API server (%s), which their "+
			"policy %s forbids, so each learner's sandbox also reaches the other learners' API servers and sandboxes, "+
			"the nodes and their kubelets. Use a network plugin that enforces NetworkPolicy (Calico, Cilium, kube-router: "+
			"see docs/classroom.md)", ErrOpenNetwork, learner, strings.ReplaceAll(target, "/", ":"), isolatePolicy)
	default:
		return fmt.Errorf("trying the network wall of %s: exit %d: %s", learner, code, out.LastLines(3))
	}
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
