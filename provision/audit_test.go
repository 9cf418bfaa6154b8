package provision

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/lab"
)

// auditPolicy is the part of an audit.k8s.io/v1 Policy the tests read.
type auditPolicy struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	OmitStages []string `json:"omitStages"`
	Rules      []struct {
		Level      string   `json:"level"`
		Users      []string `json:"users"`
		Verbs      []string `json:"verbs"`
		Namespaces []string `json:"namespaces"`
		Resources  []struct {
			Group     string   `json:"group"`
			Resources []string `json:"resources"`
		} `json:"resources"`
	} `json:"rules"`
}

func TestAuditPolicyRecordsOnlyTheLearnersWrites(t *testing.T) {
	l := &lab.Lab{Cluster: lab.Cluster{Namespaces: []string{"gitops-lab", "other"}}}
	var policy auditPolicy
	if err := yaml.UnmarshalStrict(AuditPolicy(l, false), &policy); err != nil {
		t.Fatalf("the policy is not valid YAML: %v\n%s", err, AuditPolicy(l, false))
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
	if p := string(AuditPolicy(&lab.Lab{}, false)); strings.Contains(p, "level: Request") {
		t.Errorf("policy without namespaces:\n%s", p)
	}
}

// A class's policy also records the learner's SelfSubjectAccessReviews (the
// marks of their steps' starts), before the rule that drops everything
// else; a local lab's records none.
func TestClassAuditPolicyRecordsTheLearnersStepMarks(t *testing.T) {
	l := &lab.Lab{Cluster: lab.Cluster{Namespaces: []string{"gitops-lab"}}}
	var policy auditPolicy
	if err := yaml.UnmarshalStrict(AuditPolicy(l, true), &policy); err != nil {
		t.Fatalf("the policy is not valid YAML: %v\n%s", err, AuditPolicy(l, true))
	}
	if len(policy.Rules) != 3 || policy.Rules[2].Level != "None" {
		t.Fatalf("rules: %+v", policy.Rules)
	}
	r := policy.Rules[1]
	if r.Level != "Request" || strings.Join(r.Users, ",") != "system:serviceaccount:labctl-system:learner" ||
		strings.Join(r.Verbs, ",") != "create" || len(r.Namespaces) != 0 ||
		len(r.Resources) != 1 || r.Resources[0].Group != "authorization.k8s.io" || strings.Join(r.Resources[0].Resources, ",") != "selfsubjectaccessreviews" {
		t.Errorf("the marks' rule: %+v", r)
	}
	if strings.Contains(string(AuditPolicy(l, false)), "selfsubjectaccessreviews") {
		t.Errorf("a local lab's policy records marks:\n%s", AuditPolicy(l, false))
	}
}
