package kind

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

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
		policy, err := os.ReadFile(filepath.Join(up.AuditDir, provision.AuditPolicyFile))
		if err != nil || string(policy) != string(provision.AuditPolicy(l, false)) {
			t.Errorf("the policy the file names was not written: %v", err)
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
	if len(left) != 2 || filepath.Base(left[0]) != "keep.txt" || filepath.Base(left[1]) != provision.AuditPolicyFile {
		t.Errorf("left %v; want the policy and nothing of the old log", left)
	}
}
