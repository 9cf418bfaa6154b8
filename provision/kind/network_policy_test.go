package kind

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/checks"
)

func TestNetworkPolicyAddonManifest(t *testing.T) {
	const image = "labctl/addons:test"
	raw, err := os.ReadFile("addons/network-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.New("network-policy").Option("missingkey=error").Parse(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, struct{ Image, Namespace string }{image, "labctl-system"}); err != nil {
		t.Fatal(err)
	}

	kinds := map[string]int{}
	var daemonSet, clusterRole map[string]any
	for i, doc := range strings.Split(out.String(), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("document %d: %v", i, err)
		}
		kind, _ := obj["kind"].(string)
		meta, _ := obj["metadata"].(map[string]any)
		if obj["apiVersion"] == nil || kind == "" || meta == nil || meta["name"] == nil {
			t.Fatalf("document %d lacks apiVersion, kind or metadata.name: %v", i, obj)
		}
		if labels, _ := meta["labels"].(map[string]any); labels["app.kubernetes.io/part-of"] != "labctl-addons" {
			t.Errorf("%s %v is not labelled part of labctl-addons", kind, meta["name"])
		}
		kinds[kind]++
		switch kind {
		case "DaemonSet":
			daemonSet = obj
		case "ClusterRole":
			clusterRole = obj
		}
		for _, img := range manifestImages(obj) {
			if img != image {
				t.Errorf("%s %v uses image %q", kind, meta["name"], img)
			}
		}
	}
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"} {
		if kinds[k] != 1 {
			t.Errorf("%d %s objects, want 1", kinds[k], k)
		}
	}
	if daemonSet == nil || clusterRole == nil {
		t.FailNow()
	}

	if ns := daemonSet["metadata"].(map[string]any)["namespace"]; ns != "labctl-system" {
		t.Errorf("DaemonSet namespace = %v", ns)
	}
	pod := daemonSet["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	if pod["hostNetwork"] != true {
		t.Errorf("hostNetwork = %v", pod["hostNetwork"])
	}
	containers, _ := pod["containers"].([]any)
	if len(containers) != 1 {
		t.Fatalf("%d containers", len(containers))
	}
	c := containers[0].(map[string]any)
	if c["image"] != image || c["imagePullPolicy"] != "Never" {
		t.Errorf("image %v pull policy %v", c["image"], c["imagePullPolicy"])
	}
	// A reach check finds the agent and reads its syncs where checks says.
	if ns := daemonSet["metadata"].(map[string]any)["namespace"]; ns != checks.PolicyAgentNamespace {
		t.Errorf("the agent runs in %v, reach checks look in %s", ns, checks.PolicyAgentNamespace)
	}
	podLabels := daemonSet["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)
	key, value, _ := strings.Cut(checks.PolicyAgentSelector, "=")
	if podLabels[key] != value {
		t.Errorf("the agent's Pods are labelled %v, reach checks select %s", podLabels, checks.PolicyAgentSelector)
	}
	if args := fmt.Sprint(c["args"]); !slices.Contains(c["args"].([]any), any(fmt.Sprintf("--metrics-port=%d", checks.PolicyAgentMetricsPort))) {
		t.Errorf("the agent's arguments %s serve no metrics on port %d", args, checks.PolicyAgentMetricsPort)
	}

	// An agent that hangs is restarted: its liveness probe asks the port
	// its health is served on.
	probe, _ := c["livenessProbe"].(map[string]any)
	get, _ := probe["httpGet"].(map[string]any)
	if get == nil || get["path"] != "/healthz" || !slices.Contains(c["args"].([]any), any(fmt.Sprintf("--health-port=%v", get["port"]))) {
		t.Errorf("the agent's liveness probe %v does not ask the health port its arguments %v serve", probe, c["args"])
	}

	rules, _ := clusterRole["rules"].([]any)
	if len(rules) == 0 {
		t.Fatal("ClusterRole has no rules")
	}
	for _, r := range rules {
		for _, v := range r.(map[string]any)["verbs"].([]any) {
			if v != "get" && v != "list" && v != "watch" {
				t.Errorf("ClusterRole grants %q", v)
			}
		}
	}
}
