package provision

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/lab"
)

// Node access (cluster.nodeAccess): the learner reaches each node as root
// from the sandbox, by its name, through the API server. Each node runs a
// Pod of labctl's own, named like the node, in NodeAccessNamespace:
// privileged, in the node's PID namespace and network, running the image
// of the cluster's kube-proxy (already in every node: nothing is pulled
// or loaded). The learner may only get those Pods and exec into them
// (by name); the sandbox's `node NAME` execs there and enters the node's
// namespaces with nsenter -t 1. The sandbox never gets the Docker socket
// and no port of the host is opened.
const (
	// NodeAccessNamespace holds the node-access Pods.
	NodeAccessNamespace = "labctl-nodes"
	// NodeCommand is the sandbox's command that opens a root shell (or
	// runs a command) on a node: node NAME [COMMAND...].
	NodeCommand = "/usr/local/sbin/node"
	// nodeAccessContainer is the container of each node-access Pod.
	nodeAccessContainer = "node"
	// nodeAccessRole is the learner's Role in NodeAccessNamespace.
	nodeAccessRole = "labctl-node-access"
	// nodeAccessWait bounds how long up waits for the Pods to run.
	nodeAccessWait = 2 * time.Minute
)

// nodeCommand is the sandbox's node command. It finds the node's Pod
// first, so a name that is no node says so instead of kubectl's "forbidden".
const nodeCommand = `#!/bin/bash
# node NAME [COMMAND...]: a root shell, or COMMAND, on the lab's node NAME.
if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	echo "usage: node NAME [COMMAND ...]: a root login shell, or COMMAND, on the lab's node NAME (kubectl get nodes lists them)" >&2
	exit 2
fi
name=$1
shift
if ! kubectl get pod -n ` + NodeAccessNamespace + ` "$name" -o name >/dev/null 2>&1; then
	echo "node: $name is not a node of this lab: kubectl get nodes lists them" >&2
	exit 2
fi
tty=-i
if [ -t 0 ] && [ -t 1 ]; then tty=-it; fi
if [ $# -eq 0 ]; then set -- bash -l; fi
exec kubectl exec $tty -n ` + NodeAccessNamespace + ` "$name" -c ` + nodeAccessContainer + ` -- \
	nsenter -t 1 -a -- env -i HOME=/root TERM="${TERM:-xterm}" \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	bash -c 'cd /root 2>/dev/null; exec "$@"' node "$@"
`

// writeNodeCommand puts the node command in the sandbox.
func (e *Live) writeNodeCommand(ctx context.Context) error {
	var out bytes.Buffer
	code, err := e.rt.Exec(ctx, e.login([]string{"sh", "-c", `cat > "$1" && chmod 755 "$1"`, "sh", NodeCommand},
		bytes.NewReader([]byte(nodeCommand)), &out, &out))
	if err != nil {
		return fmt.Errorf("writing the sandbox's node command: %w", err)
	}
	if code != 0 {
		return fmt.Errorf("writing the sandbox's node command: exit %d: %s", code, LastLines(out.String(), 3))
	}
	return nil
}

// nodeAccessPod is the node-access Pod of node, running image.
func nodeAccessPod(node, image string, labels map[string]string) *corev1.Pod {
	yes, no := true, false
	var grace int64
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: NodeAccessNamespace, Labels: labels},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			HostPID:                       true,
			HostNetwork:                   true,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name:            nodeAccessContainer,
				Image:           image,
				ImagePullPolicy: corev1.PullNever,
				Command:         []string{"sleep", "infinity"},
				SecurityContext: &corev1.SecurityContext{Privileged: &yes},
			}},
		},
	}
}

// nodeAccessImage is the image of the cluster's kube-proxy, which every
// node has.
func nodeAccessImage(ctx context.Context, cs kubernetes.Interface) (string, error) {
	ds, err := cs.AppsV1().DaemonSets(metav1.NamespaceSystem).Get(ctx, "kube-proxy", metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading kube-proxy's image, which the node-access Pods run (cluster.nodeAccess): %w", err)
	}
	if cs := ds.Spec.Template.Spec.Containers; len(cs) > 0 && cs[0].Image != "" {
		return cs[0].Image, nil
	}
	return "", fmt.Errorf("kube-proxy's DaemonSet names no image, which the node-access Pods run (cluster.nodeAccess)")
}

// grantNodeAccess runs a node-access Pod on each node of the cluster and
// lets the learner get and exec into exactly those Pods. A Pod that does
// not run (its node restarted, or the learner's work stopped it) is made
// afresh. It waits, bounded, until every one runs.
func grantNodeAccess(ctx context.Context, cs kubernetes.Interface, l *lab.Lab, labels map[string]string) error {
	nsLabels := map[string]string{}
	maps.Copy(nsLabels, labels)
	nsLabels[PodSecurityEnforce] = lab.PodSecurityPrivileged
	if err := ensureNamespace(ctx, cs, NodeAccessNamespace, nsLabels); err != nil {
		return err
	}
	// A new namespace gets its default ServiceAccount from the controller
	// manager only some seconds later, and until then no Pod is admitted.
	if err := ensureDefaultServiceAccounts(ctx, cs, []string{NodeAccessNamespace}); err != nil {
		return err
	}
	image, err := nodeAccessImage(ctx, cs)
	if err != nil {
		return err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the cluster's nodes: %w", err)
	}
	var names []string
	pods := cs.CoreV1().Pods(NodeAccessNamespace)
	for _, n := range nodes.Items {
		names = append(names, n.Name)
		want := nodeAccessPod(n.Name, image, labels)
		cur, err := pods.Get(ctx, n.Name, metav1.GetOptions{})
		if err == nil && (cur.Status.Phase == corev1.PodFailed || cur.Status.Phase == corev1.PodSucceeded || cur.DeletionTimestamp != nil ||
			len(cur.Spec.Containers) != 1 || cur.Spec.Containers[0].Image != image) {
			if err := deletePodAndWait(ctx, cs, cur.Name); err != nil {
				return err
			}
			err = apierrors.NewNotFound(corev1.Resource("pods"), n.Name)
		}
		if apierrors.IsNotFound(err) {
			_, err = pods.Create(ctx, want, metav1.CreateOptions{FieldManager: fieldManager})
		}
		if err != nil {
			return fmt.Errorf("starting the node-access Pod of node %s: %w", n.Name, err)
		}
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: nodeAccessRole, Namespace: NodeAccessNamespace, Labels: labels},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}, ResourceNames: names},
			{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"get", "create"}, ResourceNames: names},
		},
	}
	if err := apply(ctx, cs.RbacV1().Roles(NodeAccessNamespace), role, func(cur *rbacv1.Role) { cur.Rules = role.Rules; cur.Labels = labels }); err != nil {
		return fmt.Errorf("granting the learner access to the nodes: %w", err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: nodeAccessRole, Namespace: NodeAccessNamespace, Labels: labels},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: LearnerAccount, Namespace: SystemNamespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: nodeAccessRole},
	}
	if err := ensureRoleBinding(ctx, cs, rb); err != nil {
		return fmt.Errorf("granting the learner access to the nodes: %w", err)
	}
	return waitNodeAccess(ctx, cs, names)
}

// deletePodAndWait deletes a node-access Pod and waits until it is gone.
func deletePodAndWait(ctx context.Context, cs kubernetes.Interface, name string) error {
	pods := cs.CoreV1().Pods(NodeAccessNamespace)
	var zero int64
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("replacing the node-access Pod of node %s: %w", name, err)
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, nodeAccessWait, true, func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// waitNodeAccess waits until the node-access Pod of each node runs.
func waitNodeAccess(ctx context.Context, cs kubernetes.Interface, names []string) error {
	var pending string
	err := wait.PollUntilContextTimeout(ctx, time.Second, nodeAccessWait, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			p, err := cs.CoreV1().Pods(NodeAccessNamespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Status.Phase != corev1.PodRunning {
				pending = name + " is " + string(p.Status.Phase)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && pending != "" {
		return fmt.Errorf("the node-access Pod of node %s after %s (kubectl -n %s describe pod as the cluster's admin says why): %w", pending, nodeAccessWait, NodeAccessNamespace, err)
	}
	return err
}
