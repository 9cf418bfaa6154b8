package class

import (
	"errors"
	"strings"
	"testing"

	"github.com/labctl/labctl/lab"
)

func TestCheckLab(t *testing.T) {
	runs := []string{"Pods must run", "no nodes", "Pending", "--learner-nodes", "privileged", "labctl up", "cluster.workloads: declare"}
	for _, tc := range []struct {
		file string
		says []string // nil: the lab is accepted
	}{
		{"../../lab.yaml", nil},                     // workloads: declare
		{"../../labs/debug-rollout/lab.yaml", runs}, // workloads: run
		{"../../labs/rbac-ci/lab.yaml", nil},        // workloads: declare, access checks
		{"../../labs/netpol-shop/lab.yaml", []string{"worker nodes or add-ons", "labctl up on their own machines"}},
		{"../../labs/nightly-job/lab.yaml", []string{"it has no cluster (cluster.provider: none)", "labctl up on their own machines"}},
	} {
		l, err := lab.Load(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		err = CheckLab(l, Consent{})
		var le *LabError
		switch {
		case tc.says == nil && err != nil:
			t.Errorf("%s: %v, want the lab accepted", tc.file, err)
		case tc.says != nil && !errors.As(err, &le):
			t.Errorf("%s: %v, want a *LabError", tc.file, err)
		case tc.says != nil:
			msg := err.Error()
			for _, want := range append([]string{"lab " + l.Metadata.Name + " cannot run as a class"}, tc.says...) {
				if !strings.Contains(msg, want) {
					t.Errorf("%s: %q does not say %q", tc.file, msg, want)
				}
			}
		}
	}
}

func TestCheckLabDefault(t *testing.T) {
	l, err := lab.Parse("lab.yaml", []byte(`apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata: {name: plain}
steps:
  - id: one
    title: One
    instructions: Write /root/x.
    checks: [{name: x, file: {path: /root/x}}]
    solve: touch /root/x
`))
	if err != nil {
		t.Fatal(err)
	}
	var le *LabError
	if err := CheckLab(l, Consent{}); !errors.As(err, &le) || le.Lab != "plain" {
		t.Errorf("a lab without cluster.workloads: %v, want a *LabError for lab plain", err)
	}
	if err := CheckLab(l, Consent{LearnerNodes: true}); err != nil {
		t.Errorf("the same lab with learner nodes: %v, want it accepted", err)
	}
	if !NeedsNodes(l) {
		t.Error("NeedsNodes of a lab whose Pods must run is false")
	}
	l.Cluster.PodSecurity = lab.PodSecurityPrivileged
	if err := CheckLab(l, Consent{LearnerNodes: true}); !errors.As(err, &le) || !strings.Contains(err.Error(), "privileged") {
		t.Errorf("a privileged lab with learner nodes: %v, want it refused", err)
	}
	l.Cluster.PodSecurity = ""
	l.Cluster.Workloads = lab.WorkloadsDeclare
	if err := CheckLab(l, Consent{}); err != nil {
		t.Errorf("the same lab with workloads: declare: %v, want it accepted", err)
	}
	if NeedsNodes(l) {
		t.Error("NeedsNodes of a lab with workloads: declare is true")
	}
}

// TestCheckLabRefusesNodesAndAddons: a declare lab that asks for workers or
// add-ons is refused too; a class's control planes have neither.
func TestCheckLabRefusesNodesAndAddons(t *testing.T) {
	for _, c := range []lab.Cluster{
		{Workloads: lab.WorkloadsDeclare, Workers: []lab.Node{{}}},
		{Workloads: lab.WorkloadsDeclare, Addons: []string{lab.AddonStorage}},
	} {
		l := &lab.Lab{Metadata: lab.Metadata{Name: "x"}, Cluster: c}
		var le *LabError
		if err := CheckLab(l, Consent{}); !errors.As(err, &le) || !strings.Contains(err.Error(), "cluster.workers, cluster.addons") {
			t.Errorf("%+v: %v, want a *LabError naming cluster.workers and cluster.addons", c, err)
		}
	}
}

// TestCheckLabRefusesSandboxPathsOutside: a class's grader mounts only the
// learner's home and the fixtures, so a lab whose file check reads another
// path of the sandbox is refused, naming the path; one under /root is not.
func TestCheckLabRefusesSandboxPathsOutside(t *testing.T) {
	step := func(p string) lab.Step {
		return lab.Step{ID: "s", Checks: []lab.Check{{Name: "c", File: &lab.FileCheck{Path: p}}}}
	}
	l := &lab.Lab{Metadata: lab.Metadata{Name: "x"}, Cluster: lab.Cluster{Workloads: lab.WorkloadsDeclare},
		Sandbox: lab.Sandbox{Fixtures: "/opt/lab/fixtures"}, Steps: []lab.Step{step("/root/a"), step("/opt/lab/fixtures/b")}}
	if err := CheckLab(l, Consent{}); err != nil {
		t.Fatalf("a lab reading /root and the fixtures: %v", err)
	}
	l.Steps = append(l.Steps, step("/etc/nginx/nginx.conf"))
	var le *LabError
	if err := CheckLab(l, Consent{}); !errors.As(err, &le) || !strings.Contains(err.Error(), "/etc/nginx/nginx.conf") || !strings.Contains(err.Error(), "labctl up") {
		t.Fatalf("a lab reading /etc: %v, want a *LabError naming the path and labctl up", err)
	}

	// A git check (or a git: reference) of a repository outside /root
	// is refused the same way.
	for _, c := range []lab.Check{
		{Name: "c", Git: &lab.GitCheck{Repo: "/srv/app"}},
		{Name: "c", File: &lab.FileCheck{Path: "/root/a", Equals: &lab.Value{Ref: "git:/srv/app@HEAD"}}},
	} {
		l.Steps = []lab.Step{step("/root/a"), {ID: "g", Checks: []lab.Check{{Name: "ok", Git: &lab.GitCheck{Repo: "/root/repo"}}, c}}}
		if err := CheckLab(l, Consent{}); !errors.As(err, &le) || !strings.Contains(err.Error(), "the repository /srv/app") || !strings.Contains(err.Error(), "keep the repository under /root") {
			t.Errorf("a lab reading the repository /srv/app: %v, want a *LabError naming it", err)
		}
	}
}

// A lab that makes the learner root on its nodes is refused without the
// instructor's consent by name, and the message names the flags; with the
// consent node-admin is refused still, since its checks read the node's
// files from outside it, and the message says that rather than asking for
// the flags.
func TestCheckLabRefusesNodeAccess(t *testing.T) {
	l, err := lab.Load("../../labs/node-admin/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	on := NodeLabel{Key: "labctl.dev/node-access", Value: "yes"}
	for _, tc := range []struct {
		consent Consent
		says    []string
	}{
		{Consent{}, []string{"cluster.nodeAccess", "--learner-nodes --node-access-on KEY=VALUE", "kubectl", "Node access"}},
		{Consent{LearnerNodes: true}, []string{"cluster.nodeAccess", "--node-access-on KEY=VALUE"}},
		{Consent{NodeAccessOn: on}, []string{"cluster.nodeAccess", "--learner-nodes --node-access-on"}},
		{Consent{LearnerNodes: true, NodeAccessOn: on}, []string{"manifest-on-node", "through the API server", "labctl up"}},
	} {
		var le *LabError
		err := CheckLab(l, tc.consent)
		if !errors.As(err, &le) || le.Lab != "node-admin" {
			t.Errorf("%+v: %v, want a *LabError for lab node-admin", tc.consent, err)
			continue
		}
		for _, want := range tc.says {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%+v: %q does not say %q", tc.consent, err, want)
			}
		}
	}
}
