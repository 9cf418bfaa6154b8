package provision

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/internal/progress"
	"github.com/labctl/labctl/lab"
)

func TestAuditPolicyRecordsOnlyTheLearnersWrites(t *testing.T) {
	l := &lab.Lab{Cluster: lab.Cluster{Namespaces: []string{"gitops-lab", "other"}}}
	var policy struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		OmitStages []string `json:"omitStages"`
		Rules      []struct {
			Level      string   `json:"level"`
			Users      []string `json:"users"`
			Verbs      []string `json:"verbs"`
			Namespaces []string `json:"namespaces"`
		} `json:"rules"`
	}
	if err := yaml.UnmarshalStrict(AuditPolicy(l), &policy); err != nil {
		t.Fatalf("the policy is not valid YAML: %v\n%s", err, AuditPolicy(l))
	}
	if policy.APIVersion != "audit.k8s.io/v1" || policy.Kind != "Policy" || strings.Join(policy.OmitStages, ",") != "RequestReceived" {
		t.Errorf("policy header: %+v", policy)
	}
	if len(policy.Rules) != 2 {
		t.Fatalf("rules: %+v", policy.Rules)
	}
	r := policy.Rules[0]
	if r.Level != "Request" || strings.Join(r.Users, ",") != "system:serviceaccount:labctl-system:learner" ||
		strings.Join(r.Verbs, ",") != "create,update,patch,delete,deletecollection" || strings.Join(r.Namespaces, ",") != "gitops-lab,other" {
		t.Errorf("first rule: %+v", r)
	}
	if last := policy.Rules[1]; last.Level != "None" || len(last.Users)+len(last.Verbs)+len(last.Namespaces) != 0 {
		t.Errorf("the last rule must drop everything else: %+v", last)
	}
	// A lab without namespaces records nothing.
	if p := string(AuditPolicy(&lab.Lab{})); strings.Contains(p, "level: Request") {
		t.Errorf("policy without namespaces:\n%s", p)
	}
}

func TestAuditWindowsFollowTheSteps(t *testing.T) {
	scale := lab.Check{Name: "scaled", Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Resource: "deployments", Subresource: "scale"}}}
	apply := lab.Check{Name: "applied", Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Verbs: []string{"apply"}, Resource: "deployments"}}}
	file := lab.Check{Name: "note", File: &lab.FileCheck{Path: "/root/n"}}
	l := &lab.Lab{Steps: []lab.Step{
		{ID: "one", Checks: []lab.Check{file, apply}},
		{ID: "two", Checks: []lab.Check{scale}},
		{ID: "three", Checks: []lab.Check{apply}},
	}}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	p := progress.New("l")
	if got := auditWindows(l, p, []lab.Check{file, apply, scale}); got != nil {
		t.Errorf("a new progress gives windows %v; want the whole log", got)
	}
	p.Record(l, "one", true, t0)
	p.Record(l, "two", true, t0.Add(time.Minute))
	all := append(append(append([]lab.Check(nil), l.Steps[0].Checks...), l.Steps[1].Checks...), l.Steps[2].Checks...)
	got := auditWindows(l, p, all)
	// apply is in steps one and three: the current step three's window.
	want := []time.Time{{}, t0.Add(time.Minute), t0, t0.Add(time.Minute)}
	if len(got) != len(want) {
		t.Fatalf("windows %v", got)
	}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("check %d (%s): window %v, want %v", i, all[i].Name, got[i], want[i])
		}
	}
}
