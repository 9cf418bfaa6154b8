package lab

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The cluster's, kind's and labctl's namespaces are never a lab's: the
// learner would be their admin and reset would empty them.
func TestSystemNamespacesAreNoLabs(t *testing.T) {
	for _, ns := range []string{"kube-system", "kube-public", "kube-node-lease", "default", "labctl-system", "labctl-probe", "local-path-storage", "kube-anything", "labctl-x"} {
		src := header + "      - {name: c, file: {path: /root/x}}\ncluster: {namespaces: [work, " + ns + "]}\n"
		got := problems(t, src)
		want := `cluster.namespaces[1]: "` + ns + `" is `
		if len(got) != 1 || !strings.Contains(got[0], want) || !strings.Contains(got[0], "give the lab a namespace of its own, such as lab") {
			t.Errorf("namespace %s: problems %q, want one with %q", ns, got, want)
		}
	}
	for _, ns := range []string{"work", "kubex", "system", "labctl"} {
		src := header + "      - {name: c, file: {path: /root/x}}\ncluster: {namespaces: [" + ns + "]}\n"
		if _, err := Parse("lab.yaml", []byte(src)); err != nil {
			t.Errorf("namespace %s refused: %v", ns, err)
		}
	}
}

func TestRisks(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string // risk keys
	}{
		{"none", "cluster: {namespaces: [work], podSecurity: restricted}\n", nil},
		{"privileged", "cluster: {podSecurity: privileged}\n", []string{"cluster.podSecurity: privileged"}},
		{"node image", "cluster: {nodeImage: 'evil/node:1'}\n", []string{"cluster.nodeImage: evil/node:1"}},
		{"sandbox image", "sandbox: {image: 'evil/sandbox:1'}\n", []string{"sandbox.image: evil/sandbox:1"}},
		{"node access", "cluster: {nodeAccess: true}\n", []string{"cluster.nodeAccess: true"}},
		// labctl's own images, which no bundle may bring, are no risk;
		// a look-alike elsewhere is.
		{"labctl's images", "cluster: {nodeImage: 'labctl/node:v1'}\nsandbox: {image: 'docker.io/labctl/sandbox:a1'}\n", nil},
		{"look-alike node image", "cluster: {nodeImage: 'ghcr.io/labctl/node:v1'}\n", []string{"cluster.nodeImage: ghcr.io/labctl/node:v1"}},
		{"cluster write", "access: {clusterRules: [{apiGroups: [''], resources: [pods], verbs: [get, create]}]}\n",
			[]string{"access.clusterRules[0]: get, create pods (core)"}},
		{"cluster star verb", "access: {clusterRules: [{apiGroups: [apps], resources: [deployments], verbs: ['*']}]}\n",
			[]string{"access.clusterRules[0]: * deployments (apps)"}},
		{"cluster star resource", "access: {clusterRules: [{apiGroups: ['*'], resources: ['*'], verbs: [list]}]}\n",
			[]string{"access.clusterRules[0]: list * (*)"}},
		{"cluster secrets", "access: {clusterRules: [{apiGroups: [''], resources: [secrets], verbs: [get]}]}\n",
			[]string{"access.clusterRules[0]: get secrets (core)"}},
		{"cluster node proxy", "access: {clusterRules: [{apiGroups: [''], resources: [nodes/proxy], verbs: [get]}]}\n",
			[]string{"access.clusterRules[0]: get nodes/proxy (core)"}},
		{"cluster read", "access: {clusterRules: [{apiGroups: [''], resources: [nodes, namespaces], verbs: [get, list, watch]}]}\n", nil},
		{"namespaced write", "cluster: {namespaces: [work]}\naccess: {rules: [{apiGroups: [''], resources: [pods], verbs: ['*']}]}\n", nil},
		{"namespaced namespaces write", "cluster: {namespaces: [work]}\naccess: {rules: [{apiGroups: [''], resources: [namespaces], verbs: [update]}]}\n",
			[]string{"access.rules[0]: update namespaces (core)"}},
		// A namespace's status and finalize carry its labels as well.
		{"namespaced namespaces status write", "cluster: {namespaces: [work]}\naccess: {rules: [{apiGroups: [''], resources: [namespaces/status], verbs: [patch]}]}\n",
			[]string{"access.rules[0]: patch namespaces/status (core)"}},
		{"namespaced namespaces finalize write", "cluster: {namespaces: [work]}\naccess: {rules: [{apiGroups: [''], resources: [namespaces/finalize], verbs: [update]}]}\n",
			[]string{"access.rules[0]: update namespaces/finalize (core)"}},
		{"namespaced every status write", "cluster: {namespaces: [work]}\naccess: {rules: [{apiGroups: [''], resources: ['*/status'], verbs: [update]}]}\n",
			[]string{"access.rules[0]: update */status (core)"}},
	}
	for _, tt := range tests {
		l, err := Parse("lab.yaml", []byte(header+"      - {name: c, file: {path: /root/x}}\n"+tt.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var got []string
		for _, r := range l.Risks() {
			got = append(got, r.Key())
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s: risks %q, want %q", tt.name, got, tt.want)
		}
		if p := l.Powers(); p.ClusterWrite != strings.HasPrefix(strings.Join(tt.want, ""), "access.clusterRules") {
			t.Errorf("%s: ClusterWrite %v", tt.name, p.ClusterWrite)
		}
	}
}

// The built-in labs ask for nothing that reaches the host.
func TestBuiltInLabsHaveNoRisks(t *testing.T) {
	for _, f := range []string{"../lab.yaml", "../labs/debug-rollout/lab.yaml"} {
		l, err := Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if rs := l.Risks(); len(rs) != 0 {
			t.Errorf("%s: risks %v", f, rs)
		}
	}
}

// Lint warns about every risk, each at its field.
func TestLintWarnsAboutRisks(t *testing.T) {
	src := header + "      - {name: c, file: {path: /root/x}}\n" +
		"cluster: {nodeImage: 'evil/node:1'}\n" +
		"sandbox: {image: 'evil/sandbox:1'}\n" +
		"access: {clusterRules: [{apiGroups: [''], resources: [pods], verbs: [create]}]}\n"
	l, err := Parse("lab.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range l.Lint() {
		if strings.Contains(w.Msg, "--allow-host-access") {
			got = append(got, w.Path)
		}
	}
	want := []string{"cluster.nodeImage", "sandbox.image", "access.clusterRules[0]"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("warnings at %q, want %q", got, want)
	}
}

// A node or sandbox image must be an image reference.
func TestOwnImagesAreReferences(t *testing.T) {
	for _, tt := range []struct{ yaml, want string }{
		{"sandbox: {image: \"evil\\e]52;c;cHduZWQ=\\a:1\"}\n", `sandbox.image: "evil\x1b]52;c;cHduZWQ=\a:1" is not an image reference`},
		{"cluster: {nodeImage: 'Node:1'}\n", `cluster.nodeImage: "Node:1" is not an image reference`},
		{"cluster: {nodeImage: 'kindest/node:v1@sha256:xyz'}\n", `the digest "sha256:xyz" is not`},
	} {
		got := problems(t, header+"      - {name: c, file: {path: /root/x}}\n"+tt.yaml)
		if len(got) != 1 || !strings.Contains(got[0], tt.want) {
			t.Errorf("%s: problems %q, want %q", tt.yaml, got, tt.want)
		}
	}
	src := header + "      - {name: c, file: {path: /root/x}}\ncluster: {nodeImage: 'kindest/node:v1.37.0@sha256:" + strings.Repeat("a", 64) + "'}\nsandbox: {image: 'localhost:5000/sb:2'}\n"
	if _, err := Parse("lab.yaml", []byte(src)); err != nil {
		t.Error(err)
	}
}

// A lab's probe scripts are listed as what they are: the lab's, in a
// container of their own, admin of the lab's namespaces and no more.
func TestPowersListProbeScripts(t *testing.T) {
	src := header + "      - {name: c, file: {path: /root/x}}\n    probe: {setup: kubectl scale, run: /root/s.sh, restore: kubectl scale}\ncluster: {namespaces: [work]}\n"
	l, err := Parse("lab.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := l.Powers()
	if len(p.AdminScripts) != 1 || p.AdminScripts[0] != "step s1: probe setup, probe restore" {
		t.Fatalf("probe scripts %q", p.AdminScripts)
	}
	const want = "probe scripts in a container of the sandbox image, admin of the lab's namespaces, nothing cluster-wide: step s1: probe setup, probe restore"
	lines := strings.Join(p.Lines(), "\n")
	if !strings.Contains(lines, want) || strings.Contains(lines, "the cluster's admin identity") {
		t.Errorf("powers:\n%s\nwant the line %q", lines, want)
	}
	if len(l.Risks()) != 0 {
		t.Errorf("a probe is no risk to the host now: %v", l.Risks())
	}
}

// A lab's command checks are a power it asks for, listed with what they do.
func TestPowersListCommandChecks(t *testing.T) {
	src := header + "      - {name: c, file: {path: /root/x}}\n      - {name: runs, command: {run: [python3, /root/app.py]}}\n"
	l, err := Parse("lab.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if p := l.Powers(); !slices.Equal(p.CommandChecks, []string{"step s1: runs"}) {
		t.Fatalf("command checks %q", p.CommandChecks)
	}
	lines := strings.Join(l.Powers().Lines(), "\n")
	if !strings.Contains(lines, "command checks in the grader (programs of the sandbox image, as a user of their own, that read every file of the learner's home, run what the learner wrote when they run it, and reach the cluster's network): step s1: runs") || !strings.Contains(lines, ": step s1: runs") {
		t.Errorf("powers do not list the command check:\n%s", lines)
	}
	none, err := Parse("lab.yaml", []byte(header+"      - {name: c, file: {path: /root/x}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(none.Powers().Lines(), "\n"), "command checks in the grader (programs of the sandbox image, as a user of their own, that read every file of the learner's home, run what the learner wrote when they run it, and reach the cluster's network): none") {
		t.Error("a lab without command checks does not say so")
	}
}

// A file check reads a node only in a lab that gives the learner its
// nodes, and only one of its cluster's nodes; such a path is no path of
// the sandbox, so the grader need not see it.
func TestFileCheckOnANode(t *testing.T) {
	check := "      - {name: c, file: {node: %s, path: /etc/kubernetes/manifests/web.yaml}}\n"
	for _, tt := range []struct{ node, cluster, want string }{
		{"control-plane", "cluster: {nodeAccess: true}\n", ""},
		{"worker", "cluster: {nodeAccess: true, workers: [{}]}\n", ""},
		{"control-plane", "cluster: {namespaces: [work]}\n", "set cluster.nodeAccess: true"},
		{"worker2", "cluster: {nodeAccess: true, workers: [{}]}\n", `"worker2" is not a node of the lab's cluster; use one of control-plane, worker`},
	} {
		_, err := Parse("lab.yaml", []byte(header+fmt.Sprintf(check, tt.node)+tt.cluster))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s in %s: %v", tt.node, tt.cluster, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s in %s: %v, want %q", tt.node, tt.cluster, err, tt.want)
		}
	}
}

// A service check looks at a node only in a lab that gives the learner its
// nodes, at one of its cluster's nodes, and names a systemd service in
// full.
func TestServiceCheckOnANode(t *testing.T) {
	check := "      - {name: c, service: {node: %s, unit: %s}}\n"
	for _, tt := range []struct{ node, unit, cluster, want string }{
		{"control-plane", "kubelet.service", "cluster: {nodeAccess: true}\n", ""},
		{"worker", "containerd.service", "cluster: {nodeAccess: true, workers: [{}]}\n", ""},
		{"control-plane", "kubelet.service", "cluster: {namespaces: [work]}\n", "set cluster.nodeAccess: true"},
		{"worker2", "kubelet.service", "cluster: {nodeAccess: true, workers: [{}]}\n", `"worker2" is not a node of the lab's cluster; use one of control-plane, worker`},
		{"control-plane", "kubelet", "cluster: {nodeAccess: true}\n", `"kubelet" is not a systemd service's name; name it in full, e.g. kubelet.service`},
		{"control-plane", "'kubelet.service; rm -rf /'", "cluster: {nodeAccess: true}\n", "is not a systemd service's name"},
		{"''", "kubelet.service", "cluster: {nodeAccess: true}\n", "a service check names the node it looks at"},
	} {
		_, err := Parse("lab.yaml", []byte(header+fmt.Sprintf(check, tt.node, tt.unit)+tt.cluster))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %s in %s: %v", tt.node, tt.unit, tt.cluster, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %s in %s: %v, want %q", tt.node, tt.unit, tt.cluster, err, tt.want)
		}
	}
}
