package checks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/lab"
)

// samFile is a file of two policies as a learner writes them: db's with
// its port's protocol left out and no policyTypes, both of which the API
// server defaults.
const samFile = `# The shop's policies.
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: shop}
spec:
  podSelector: {}
  policyTypes: [Ingress]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db-ingress}
spec:
  podSelector: {matchLabels: {tier: db}}
  ingress:
    - from: [{podSelector: {matchLabels: {tier: api}}}]
      ports: [{port: 5432}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: not-a-policy, namespace: shop}
`

// livePolicy is a NetworkPolicy as the API server returns it: defaults
// filled in, empty lists left out.
func livePolicy(t *testing.T, text string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(text), &obj); err != nil {
		t.Fatal(err)
	}
	return normalize(obj).(map[string]any)
}

const liveDeny = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: shop, resourceVersion: "7", generation: 1}
spec: {podSelector: {}, policyTypes: [Ingress]}`

const liveDB = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db-ingress, namespace: shop, annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}}
spec:
  podSelector: {matchLabels: {tier: db}}
  policyTypes: [Ingress]
  ingress:
    - from: [{podSelector: {matchLabels: {tier: api}}}]
      ports: [{protocol: TCP, port: 5432}]`

func TestKubeMatchesFile(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "root/shop"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, "root/shop/policies.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	all := ""
	kc := &lab.KubeCheck{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy", Namespace: "shop", Selector: &all,
		MatchesFile: "/root/shop/policies.yaml"}
	env := Env{Root: root}
	for _, tc := range []struct {
		name string
		file string
		live []string
		want string // "" passes; else a part of the failure
	}{
		{"the file is what is live, defaults aside", samFile, []string{liveDeny, liveDB}, ""},
		// The cluster fixed by hand, the file left broken.
		{"a selector differs", strings.Replace(samFile, "{tier: api}", "{role: api}", 1), []string{liveDeny, liveDB},
			`at spec.ingress[0].from[0].podSelector.matchLabels.role the cluster has nothing, the file "api"`},
		{"a port differs", strings.Replace(samFile, "{port: 5432}", "{port: 80}", 1), []string{liveDeny, liveDB},
			"at spec.ingress[0].ports[0].port the cluster has 5432, the file 80"},
		// A rule without from opens the Pod to every source: not the same
		// policy as one whose from is set, though the rest is.
		{"the file drops a from", strings.Replace(samFile, "    - from: [{podSelector: {matchLabels: {tier: api}}}]\n      ports", "    - ports", 1), []string{liveDeny, liveDB},
			"at spec.ingress[0].from the cluster has"},
		{"a policy applied by hand only", samFile, []string{liveDeny, liveDB, strings.ReplaceAll(liveDeny, "name: deny", "name: extra")},
			"NetworkPolicy shop/extra is in the cluster, but /root/shop/policies.yaml does not hold it"},
		{"a policy of the file deleted from the cluster", samFile, []string{liveDB},
			"/root/shop/policies.yaml holds networking.k8s.io/v1 NetworkPolicy shop/deny, which the cluster does not"},
		// namespaceSelector {} (every namespace) is not an absent one (the
		// policy's own namespace).
		{"an empty selector is not an absent one", strings.Replace(samFile, "from: [{podSelector: {matchLabels: {tier: api}}}]", "from: [{namespaceSelector: {}, podSelector: {matchLabels: {tier: api}}}]", 1), []string{liveDeny, liveDB},
			"namespaceSelector the cluster has nothing"},
		{"no file", "", []string{liveDeny, liveDB}, "/root/shop/policies.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.file == "" {
				os.Remove(filepath.Join(root, "root/shop/policies.yaml"))
			} else {
				write(tc.file)
			}
			var objs []map[string]any
			for _, l := range tc.live {
				objs = append(objs, livePolicy(t, l))
			}
			err := checkKubeMatchesFile(env, kc, objs)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want a pass, got %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("want a failure naming %q, got a pass", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("failure %q, want it to name %q", err, tc.want)
			}
			if f := (*failure)(nil); tc.want != "" && !errors.As(err, &f) {
				t.Fatalf("%v is an error, want a failure", err)
			}
		})
	}
}

// A matchesFile check lints only with a selector, of NetworkPolicies.
func TestKubeMatchesFileLint(t *testing.T) {
	all := ""
	for _, tc := range []struct {
		kc   lab.KubeCheck
		want string
	}{
		{lab.KubeCheck{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy", Namespace: "shop", Name: "db", MatchesFile: "/root/p.yaml"}, "add selector"},
		{lab.KubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Selector: &all, MatchesFile: "/root/d.yaml"}, "compares NetworkPolicies only"},
		{lab.KubeCheck{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy", Namespace: "shop", Selector: &all, MatchesFile: "p.yaml"}, "absolute path"},
	} {
		l := &lab.Lab{APIVersion: lab.APIVersion, Kind: "Lab", Metadata: lab.Metadata{Name: "x", Title: "x"},
			Steps: []lab.Step{{ID: "one", Title: "one", Checks: []lab.Check{{Name: "c", Kube: &tc.kc}}}}}
		err := l.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: validate = %v, want a problem naming %q", tc.kc, err, tc.want)
		}
	}
}
