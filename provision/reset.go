package provision

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// namespaceDeleteWait bounds the wait for the lab's namespaces to go away.
const namespaceDeleteWait = 2 * time.Minute

// StuckNamespacesError names namespaces that did not finish terminating.
type StuckNamespacesError struct {
	Namespaces []string
	Wait       time.Duration
}

func (e *StuckNamespacesError) Error() string {
	return fmt.Sprintf("namespaces still terminating after %s: %s (look for finalizers: `kubectl get ns %s -o yaml`)",
		e.Wait, strings.Join(e.Namespaces, ", "), e.Namespaces[0])
}

// ResetNamespaces deletes the lab's namespaces, waits (bounded) for them to
// go, and recreates them with the learner's access. A namespace that does
// not go away in time is reported in a *StuckNamespacesError, not waited on.
func ResetNamespaces(ctx context.Context, env *Env) error {
	cs, err := kubernetes.NewForConfig(env.Admin)
	if err != nil {
		return fmt.Errorf("connecting to cluster %s: %w", env.Cluster, err)
	}
	return resetNamespaces(ctx, cs, env.Lab, namespaceDeleteWait)
}

func resetNamespaces(ctx context.Context, cs kubernetes.Interface, l *lab.Lab, wait time.Duration) error {
	nss := l.Cluster.Namespaces
	for _, ns := range nss {
		err := cs.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting namespace %s: %w", ns, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	remaining := append([]string(nil), nss...)
	for len(remaining) > 0 {
		var still []string
		for _, ns := range remaining {
			_, err := cs.CoreV1().Namespaces().Get(wctx, ns, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
			case err != nil && wctx.Err() == nil:
				return fmt.Errorf("waiting for namespace %s to go: %w", ns, err)
			default:
				still = append(still, ns)
			}
		}
		remaining = still
		if len(remaining) == 0 {
			break
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &StuckNamespacesError{Namespaces: remaining, Wait: wait}
		case <-time.After(time.Second):
		}
	}
	labels := map[string]string{sandbox.LabelLab: l.Metadata.Name}
	for _, ns := range nss {
		if err := ensureNamespace(ctx, cs, ns, labels); err != nil {
			return err
		}
	}
	return grantLearner(ctx, cs, l, labels)
}

// RecreateSandbox replaces the sandbox container and its home volume with
// new, empty ones made with the same settings, and writes the learner's
// kubeconfig in. Back up /root first (Engine.CopyOut) if it matters.
func RecreateSandbox(ctx context.Context, env *Env) error {
	name := env.Lab.Metadata.Name
	spec, err := sandbox.BuildSpec(env.settings)
	if err != nil {
		return err
	}
	if err := env.Engine.Remove(ctx, env.Container); err != nil {
		return err
	}
	vol := sandbox.VolumeName(name)
	if err := env.Engine.RemoveVolume(ctx, vol); err != nil {
		return err
	}
	if _, err := env.Engine.EnsureVolume(ctx, vol, sandbox.Labels(name, sandbox.RoleHome)); err != nil {
		return err
	}
	if _, err := env.Engine.EnsureSandbox(ctx, spec); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(env.Admin)
	if err != nil {
		return fmt.Errorf("connecting to cluster %s: %w", env.Cluster, err)
	}
	learner, err := readToken(ctx, cs, LearnerAccount)
	if err != nil {
		return err
	}
	if err := env.writeKubeconfig(ctx, learner); err != nil {
		return err
	}
	return nil
}
