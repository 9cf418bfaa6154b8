package class

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labctl/labctl/internal/textsafe"
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

// owns says whether ns is learner's namespace in this class and lab.
func (c *Class) owns(ns *corev1.Namespace, learner string) bool {
	return ns.Labels[LabelClassLearner] == learner && ns.Labels[LabelClassPrefix] == prefixLabel(c.cfg.Prefix) &&
		ns.Labels[LabelClassLab] == c.cfg.Lab.Metadata.Name
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
