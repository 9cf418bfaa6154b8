package class

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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
