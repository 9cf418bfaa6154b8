package class

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
