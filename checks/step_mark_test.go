package checks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/labctl/labctl/lab"
)

// reviewLine is a SelfSubjectAccessReview as the API server's audit log
// records it at level Request: a mark when it asks "start
// steps.labctl.dev/STEP", else a learner's kubectl auth can-i.
func reviewLine(t *testing.T, at time.Time, group, resource, verb, name string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "metadata": map[string]any{},
		"spec":   map[string]any{"resourceAttributes": map[string]any{"group": group, "resource": resource, "verb": verb, "name": name}},
		"status": map[string]any{"allowed": false},
	})
	if err != nil {
		t.Fatal(err)
	}
	line := auditLine(t, at, "create", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", selfReviewResource, "", "", 201, string(body))
	return strings.Replace(line, `"namespace":"gitops-lab",`, "", 1)
}

// An invited learner's step begins at its earliest mark at or after the
// window the instructor's record gives; a request before it is not the
// step's, one after it is. Other steps' marks, marks before the window and
// questions that are not marks move nothing, and are no writes.
func TestAuditWindowBeginsAtTheStepsEarliestMark(t *testing.T) {
	begun := t0.Add(-time.Hour)
	dir := auditDir(t, map[string][]string{"audit.log": {
		reviewLine(t, begun.Add(-time.Minute), markGroup, markResource, markVerb, "fix"), // before the last reset
		auditLine(t, t0, "patch", scaleURI, "deployments", "scale", "web", 200, `{"spec":{"replicas":5}}`),
		reviewLine(t, t0.Add(30*time.Second), "", "pods", "delete", ""),                   // kubectl auth can-i
		reviewLine(t, t0.Add(40*time.Second), markGroup, markResource, markVerb, "other"), // another step
		reviewLine(t, t0.Add(time.Minute), markGroup, markResource, markVerb, "fix"),      // the step begins
		auditLine(t, t0.Add(2*time.Minute), "patch", applyURI, "deployments", "", "web", 200, `{"spec":{"replicas":3}}`),
		reviewLine(t, t0.Add(3*time.Minute), markGroup, markResource, markVerb, "fix"), // a later session
		reviewLine(t, t0.Add(4*time.Minute), markGroup, "steps", "get", "fix"),         // not a mark
	}})
	noScale := &lab.AuditCheck{AuditSelector: scaleSel, Absent: true}
	applied := &lab.AuditCheck{AuditSelector: applySel}
	noWrite := &lab.AuditCheck{AuditSelector: lab.AuditSelector{Namespace: "gitops-lab", Resource: "deployments"}, Absent: true}
	for _, tc := range []struct {
		name  string
		check *lab.AuditCheck
		step  string
		want  Status
		since time.Time
	}{
		{"the scale came before the step's mark", noScale, "fix", Pass, t0.Add(time.Minute)},
		{"the apply came after it", applied, "fix", Pass, t0.Add(time.Minute)},
		{"without a step to mark, the whole window", noScale, "", Fail, begun},
		{"a step never marked keeps the window", noScale, "unmarked", Fail, begun},
		{"each step begins at its own mark", noScale, "other", Pass, t0.Add(40 * time.Second)},
		{"the writes after the mark are writes", noWrite, "fix", Fail, t0.Add(time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &AuditSource{Dir: dir, Since: map[*lab.AuditCheck]time.Time{tc.check: begun}, Steps: map[*lab.AuditCheck]string{tc.check: tc.step}}
			if tc.step == "" {
				src.Steps = nil
			}
			s, text := outcome(checkAudit(context.Background(), Env{Root: "/", Audit: src}, tc.check))
			if s != tc.want {
				t.Errorf("got %s %q, want %s", s, text, tc.want)
			}
			if got := src.since(tc.check); !got.Equal(tc.since.Add(3*time.Millisecond)) && !got.Equal(tc.since) {
				t.Errorf("window from %v, want %v", got, tc.since)
			}
		})
	}
	// Questions are no writes: an absent check of any write in the whole
	// log sees only the two patches.
	src := &AuditSource{Dir: dir}
	recs, err := src.load()
	if err != nil || len(recs) != 2 {
		t.Errorf("records %d (%v), want the two patches", len(recs), err)
	}
}

// The request carries each audit check's step to mark by position.
func TestRequestGivesAuditChecksTheirStepsToMark(t *testing.T) {
	a, b := &lab.AuditCheck{AuditSelector: scaleSel}, &lab.AuditCheck{AuditSelector: applySel}
	req := Request{
		AuditDir:  "/var/log/labctl-audit",
		Checks:    []lab.Check{{Name: "f", File: &lab.FileCheck{Path: "/x"}}, {Name: "a", Audit: a}, {Name: "b", Audit: b}},
		MarkSteps: []string{"", "fix", ""},
	}
	env, err := req.env()
	if err != nil {
		t.Fatal(err)
	}
	if env.Audit.Steps[a] != "fix" || env.Audit.Steps[b] != "" || len(env.Audit.Steps) != 1 {
		t.Errorf("steps to mark: %v", env.Audit.Steps)
	}
}

// The mark is a SelfSubjectAccessReview of "start steps.labctl.dev/STEP"
// sent with the round's credentials, and the check passes once the API
// server took it; a refusal is the check's error.
func TestMarkStepAsksTheAPIServer(t *testing.T) {
	client := dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
	var sent *unstructured.Unstructured
	client.PrependReactor("create", selfReviewResource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		sent = a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured)
		return true, sent, nil
	})
	env := Env{Root: "/", Kube: newKubeReader(nil, client)}
	c := MarkStep("fix-rollout")
	if s, text := outcome(evaluate(context.Background(), env, c)); s != Pass {
		t.Fatalf("mark: %s %q", s, text)
	}
	b, _ := json.Marshal(sent.Object)
	if step, ok := markedStep(b); !ok || step != "fix-rollout" || sent.GetKind() != "SelfSubjectAccessReview" {
		t.Errorf("sent %s", b)
	}
	client.PrependReactor("create", selfReviewResource, func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(selfAccessReviews.GroupResource(), "", errors.New("refused"))
	})
	if s, _ := outcome(evaluate(context.Background(), env, c)); s != Error {
		t.Errorf("a refused mark: %s, want error", s)
	}
	if s, _ := outcome(evaluate(context.Background(), Env{Root: "/"}, c)); s != Error {
		t.Errorf("a mark without credentials: %s, want error", s)
	}
}
