package provision

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/images"
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
	if err := yaml.UnmarshalStrict(auditPolicy(l), &policy); err != nil {
		t.Fatalf("the policy is not valid YAML: %v\n%s", err, auditPolicy(l))
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
	if p := string(auditPolicy(&lab.Lab{})); strings.Contains(p, "level: Request") {
		t.Errorf("policy without namespaces:\n%s", p)
	}
}

func TestKindConfigMountsTheAuditDirectory(t *testing.T) {
	cfg := kindConfig(ClusterConfig{NodeImage: "n", AuditDir: "/state/audit"})
	mounts := cfg.Nodes[0].ExtraMounts
	if len(mounts) != 1 || mounts[0].HostPath != "/state/audit" || mounts[0].ContainerPath != NodeAuditDir || mounts[0].Readonly {
		t.Errorf("extra mounts %+v", mounts)
	}
	patch := cfg.KubeadmConfigPatches[len(cfg.KubeadmConfigPatches)-1]
	for _, want := range []string{
		"value: " + NodeAuditDir + "/policy.yaml", "value: " + NodeAuditDir + "/audit.log",
		"name: audit-log-format\n    value: json", "pathType: DirectoryOrCreate", "mountPath: " + NodeAuditDir,
	} {
		if !strings.Contains(patch, want) {
			t.Errorf("the audit patch lacks %q:\n%s", want, patch)
		}
	}
	var parsed map[string]any
	if err := yaml.Unmarshal([]byte(patch), &parsed); err != nil {
		t.Errorf("the audit patch is not YAML: %v", err)
	}
	if plain := kindConfig(ClusterConfig{NodeImage: "n"}); len(plain.Nodes[0].ExtraMounts) != 0 || len(plain.KubeadmConfigPatches) != 0 {
		t.Errorf("without an audit directory: %+v", plain)
	}
}

// TestKindConfigFileIsWhatUpUses renders `labctl images kind-config`'s file
// and compares it with the configuration up gives kind (ensureImages: the
// lab's state directory's audit directory, the node image's settings).
func TestKindConfigFileIsWhatUpUses(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	l := &lab.Lab{Metadata: lab.Metadata{Name: "audit-test"}, Cluster: lab.Cluster{Namespaces: []string{"ns"}}}
	for _, node := range []string{"labctl/node:v1.37.2-abc", images.UpstreamNodeImage} {
		out, err := KindConfigFile(l, node)
		if err != nil {
			t.Fatal(err)
		}
		var got v1alpha4.Cluster
		if err := yaml.UnmarshalStrict(out, &got); err != nil {
			t.Fatalf("not a kind cluster file: %v\n%s", err, out)
		}
		state, err := stateDir(l.Metadata.Name)
		if err != nil {
			t.Fatal(err)
		}
		up := clusterConfig(l, node, filepath.Join(state, "audit"))
		wantYAML, _ := yaml.Marshal(kindConfig(up))
		if string(out) != string(wantYAML) {
			t.Errorf("kind-config differs from up's configuration:\n%s\nwant\n%s", out, wantYAML)
		}
		if own := node != images.UpstreamNodeImage; got.Networking.DisableDefaultCNI != own {
			t.Errorf("%s: disableDefaultCNI %t; only labctl's node images bring no kindnetd", node, got.Networking.DisableDefaultCNI)
		}
		for _, want := range []string{"image: " + node, "failCgroupV1: false",
			"kind: ClusterConfiguration", "name: leader-elect", "audit-policy-file", "hostPath: " + up.AuditDir} {
			if !strings.Contains(string(out), want) {
				t.Errorf("the cluster file for %s lacks %q:\n%s", node, want, out)
			}
		}
		policy, err := os.ReadFile(filepath.Join(up.AuditDir, AuditPolicyFile))
		if err != nil || string(policy) != string(auditPolicy(l)) {
			t.Errorf("the policy the file names was not written: %v", err)
		}
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

func TestANewClusterStartsANewAuditLog(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"audit.log", "audit-2026-11-30T10-00-00.000.log", "keep.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := startAuditLog(dir, []byte("kind: Policy\n")); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 2 || filepath.Base(left[0]) != "keep.txt" || filepath.Base(left[1]) != AuditPolicyFile {
		t.Errorf("left %v; want the policy and nothing of the old log", left)
	}
}
