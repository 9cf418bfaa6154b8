package checks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/labctl/labctl/lab"
)

// A step's mark: a learner who works through an invite advances on their
// own machine, where the instructor's labctl cannot see when each step
// began. Their labctl marks each step as it begins with a question to the
// learner's API server that stores nothing, a SelfSubjectAccessReview of
// "start steps.labctl.dev/STEP", and the class's audit policy records the
// learner's questions (provision.AuditPolicy). The instructor's grade
// then begins a step's audit window at its earliest mark
// (Request.MarkSteps). The learner, root in their sandbox, can ask the
// same question; the earliest mark counts, and labctl's shell places it as
// the step begins.
const (
	markGroup    = "labctl.dev"
	markResource = "steps"
	markVerb     = "start"
	// selfReviewResource is the resource of the review, as the audit log
	// names it.
	selfReviewResource = "selfsubjectaccessreviews"
)

var selfAccessReviews = schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: selfReviewResource}

// MarkStep is the check by which the learner's labctl marks that step
// began: it passes once the API server took the mark.
func MarkStep(step string) lab.Check {
	return lab.Check{Name: "mark", Access: &lab.AccessCheck{Mark: step}}
}

// StepMarker marks that a step began (MarkStep): in the checker, the
// cluster client with the round's credentials; on the host, a live lab
// that marks steps where the instructor cannot see them begin (an invite:
// provision's Live.MarkStep).
type StepMarker interface {
	MarkStep(ctx context.Context, step string) error
}

// MarkStep asks the API server the question that marks step's start.
func (k *kubeReader) MarkStep(ctx context.Context, step string) error {
	review := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "authorization.k8s.io/v1",
		"kind":       "SelfSubjectAccessReview",
		"spec": map[string]any{"resourceAttributes": map[string]any{
			"group": markGroup, "resource": markResource, "verb": markVerb, "name": step,
		}},
	}}
	if _, err := k.client.Resource(selfAccessReviews).Create(ctx, review, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("marking the start of step %s: %w", step, err)
	}
	return nil
}

// checkMark places a's mark: pass once the API server took it.
func checkMark(ctx context.Context, env Env, a *lab.AccessCheck) error {
	marker, ok := env.Kube.(StepMarker)
	if env.Kube == nil || !ok {
		return errNoCluster
	}
	return marker.MarkStep(ctx, a.Mark)
}

// stepMark is one mark in the log: the step, and when the API server
// took it.
type stepMark struct {
	step string
	at   time.Time
}

// markedStep is the step a review's body marks, if it is a mark.
func markedStep(body json.RawMessage) (string, bool) {
	var review struct {
		Spec struct {
			ResourceAttributes *struct {
				Group    string `json:"group"`
				Resource string `json:"resource"`
				Verb     string `json:"verb"`
				Name     string `json:"name"`
			} `json:"resourceAttributes"`
		} `json:"spec"`
	}
	if json.Unmarshal(body, &review) != nil {
		return "", false
	}
	a := review.Spec.ResourceAttributes
	if a == nil || a.Group != markGroup || a.Resource != markResource || a.Verb != markVerb || a.Name == "" {
		return "", false
	}
	return a.Name, true
}
