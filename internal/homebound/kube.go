package homebound

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// EventReason is the reason of the Event a stop records on the sandbox
// Pod; the instructor's labctl reads it back.
const EventReason = "HomeOverBound"

// PodSandbox is a sandbox Pod on a Kubernetes cluster, stopped by an
// eviction, which the API server answers only for a Pod that exists.
type PodSandbox struct {
	Client         kubernetes.Interface
	Namespace, Pod string
	// Component names the warden in the Events it records.
	Component string
}

// Running says whether the Pod exists and has not ended: one that is
// ending may still write.
func (s PodSandbox) Running(ctx context.Context) (bool, error) {
	p, err := s.Client.CoreV1().Pods(s.Namespace).Get(ctx, s.Pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading pod %s/%s: %w", s.Namespace, s.Pod, err)
	}
	return p.Status.Phase != corev1.PodFailed && p.Status.Phase != corev1.PodSucceeded, nil
}

// Stop evicts the Pod and records why in an Event on it.
func (s PodSandbox) Stop(ctx context.Context, why string) error {
	pods := s.Client.CoreV1().Pods(s.Namespace)
	p, err := pods.Get(ctx, s.Pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading pod %s/%s: %w", s.Namespace, s.Pod, err)
	}
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: s.Pod, Namespace: s.Namespace},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}}}
	if err := pods.EvictV1(ctx, ev); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("evicting pod %s/%s: %w", s.Namespace, s.Pod, err)
	}
	now := metav1.NewTime(time.Now())
	event := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: s.Pod + "-", Namespace: s.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: s.Namespace, Name: s.Pod, UID: p.UID},
		Reason:         EventReason, Message: why, Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: s.Component},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := s.Client.CoreV1().Events(s.Namespace).Create(ctx, event, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("the sandbox was evicted, but recording why failed: %w", err)
	}
	return s.waitGone(ctx, p.UID)
}

// goneWait bounds how long Stop waits for the evicted Pod to be gone (its
// grace period is a few seconds).
var goneWait = 2 * time.Minute

// waitGone waits until the Pod uid is gone (another of the same name may
// already be there).
func (s PodSandbox) waitGone(ctx context.Context, uid types.UID) error {
	ctx, cancel := context.WithTimeout(ctx, goneWait)
	defer cancel()
	for {
		p, err := s.Client.CoreV1().Pods(s.Namespace).Get(ctx, s.Pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && p.UID != uid) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the evicted pod %s/%s is not gone after %s", s.Namespace, s.Pod, goneWait)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
