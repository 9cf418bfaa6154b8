package importer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/lab"
)

func readObjects(t *testing.T, name string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "draft", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// describe writes a drafted check in one line: kind, name, and what it
// asserts.
func describe(c DraftCheck) string {
	k := c.Kube
	s := c.Name + ": " + k.Kind + " " + k.Namespace + "/" + k.Name
	switch {
	case k.Exists != nil && !*k.Exists:
		s += " gone"
	case k.Labels != nil:
		b, _ := json.Marshal(k.Labels)
		s += " labels " + string(b)
	case k.Field != nil:
		b, _ := json.Marshal(k.Field.Equals)
		s += " " + k.Field.Path + " = " + string(b)
	default:
		s += " exists"
	}
	return s
}

// The checks drafted of a solve (testdata/draft: the lab's objects before
// and after `kubectl run flower --image=nginx:alpine --port 80`, `kubectl
// expose pod flower --port 80`, `kubectl create role reader --verb=get,list
// --resource=pods`, `kubectl create configmap app-config …`, `kubectl scale
// deploy web --replicas=3`, `kubectl set image deploy/web httpd=httpd:2.4`,
// `kubectl label deploy web tier=front` and `kubectl delete cm old`) are
// what it created, changed and deleted, each field exactly: nothing of what
// Kubernetes writes (the ReplicaSet, the Service's address, the Pod's token
// volume, the revision), nothing the solve left as it was (the Deployment's
// selector, its label app).
func TestDraftChecks(t *testing.T) {
	got := DraftChecks(readObjects(t, "start.json"), readObjects(t, "end.json"))
	var lines []string
	for _, c := range got {
		if c.Kube == nil || c.Command != nil || c.File != nil {
			t.Fatalf("check %s is not a kube check: %+v", c.Name, c)
		}
		lines = append(lines, describe(c))
	}
	want := []string{
		`configmap-app-config: ConfigMap lab/app-config exists`,
		`configmap-app-config-data-app-properties: ConfigMap lab/app-config data["app.properties"] = "color=blue"`,
		`configmap-app-config-data-port: ConfigMap lab/app-config data.port = "8080"`,
		`pod-flower: Pod lab/flower exists`,
		`pod-flower-labels: Pod lab/flower labels {"run":"flower"}`,
		`pod-flower-container-flower-image: Pod lab/flower spec.containers[?(@.name=="flower")].image = "nginx:alpine"`,
		`pod-flower-container-flower-ports: Pod lab/flower spec.containers[?(@.name=="flower")].ports = [{"containerPort":80,"protocol":"TCP"}]`,
		`service-flower: Service lab/flower exists`,
		`service-flower-labels: Service lab/flower labels {"run":"flower"}`,
		`service-flower-type: Service lab/flower spec.type = "ClusterIP"`,
		`service-flower-selector: Service lab/flower spec.selector = {"run":"flower"}`,
		`service-flower-port-0-port: Service lab/flower spec.ports[0].port = 80`,
		`service-flower-port-0-targetport: Service lab/flower spec.ports[0].targetPort = 80`,
		`service-flower-port-0-protocol: Service lab/flower spec.ports[0].protocol = "TCP"`,
		`deployment-web-labels: Deployment lab/web labels {"tier":"front"}`,
		`deployment-web-replicas: Deployment lab/web spec.replicas = 3`,
		`deployment-web-container-httpd-image: Deployment lab/web spec.template.spec.containers[?(@.name=="httpd")].image = "httpd:2.4"`,
		`role-reader: Role lab/reader exists`,
		`role-reader-rules: Role lab/reader rules = [{"apiGroups":[""],"resources":["pods"],"verbs":["get","list"]}]`,
		`configmap-old-gone: ConfigMap lab/old gone`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("drafted:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range got {
		if c.Kube.Field != nil {
			if _, err := lab.ParsePath(c.Kube.Field.Path); err != nil {
				t.Errorf("check %s: path %q does not parse: %v", c.Name, c.Kube.Field.Path, err)
			}
		}
	}
	if again := DraftChecks(readObjects(t, "end.json"), readObjects(t, "end.json")); len(again) != 0 {
		t.Errorf("a solve that changes nothing drafted %d checks, want none", len(again))
	}
}

// WriteDrafts puts the drafted checks in place of a step's placeholders,
// marks the lab a draft, keeps the rest of lab.yaml (its other steps, its
// comments), and lists the step in TODO.md; the lab loads and lint holds
// it to nothing unfinished but the draft mark.
func TestWriteDrafts(t *testing.T) {
	_, _, out := importTree(t, Killercoda, "flower", map[string]string{
		"index.json": `{"title": "Flower", "details": {"steps": [{"title": "Run", "text": "1.md"}, {"title": "Look", "text": "2.md"}]}, "backend": {"imageid": "kubernetes-kubeadm-1node"}}`,
		"1.md":       "Make the config.\n\n```\nkubectl create configmap app-config --from-literal=port=8080\n```{{exec}}\n",
		"2.md":       "Look at it: `kubectl get cm`{{exec}}",
	})
	file := filepath.Join(out, "lab.yaml")
	before, err := lab.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if !before.Metadata.Draft || !lab.PlaceholderCheck(before.Steps[0].Checks[0]) {
		t.Fatalf("the import is not a draft with placeholder checks: %+v", before.Steps[0].Checks)
	}
	drafts := map[string][]DraftCheck{before.Steps[0].ID: DraftChecks(readObjects(t, "start.json"), readObjects(t, "end.json"))[:3]}
	if err := WriteDrafts(file, drafts); err != nil {
		t.Fatal(err)
	}
	after, err := lab.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if !after.Metadata.Draft {
		t.Error("the lab with drafted checks is not marked a draft")
	}
	cs := after.Steps[0].Checks
	if len(cs) != 3 || cs[0].Name != "configmap-app-config" || cs[1].Kube == nil || cs[1].Kube.Field == nil || cs[1].Kube.Field.Equals.Literal != "color=blue" {
		t.Errorf("step 1's checks = %+v, want the three drafted", cs)
	}
	if !lab.PlaceholderCheck(after.Steps[1].Checks[0]) {
		t.Errorf("step 2, not drafted, lost its placeholder: %+v", after.Steps[1].Checks)
	}
	raw, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(raw), "# Imported by labctl import") {
		t.Errorf("the file's head comment is gone:\n%.200s", raw)
	}
	var plain map[string]any
	if err := yaml.Unmarshal(raw, &plain); err != nil {
		t.Fatal(err)
	}
	if todo := todoOf(t, out); !strings.Contains(todo, "or have `labctl test --draft` draft them") {
		t.Errorf("TODO.md of the import does not name labctl test --draft:\n%s", todo)
	}
	if todo := todoOf(t, out); !strings.Contains(todo, "step "+before.Steps[0].ID+" (3) were drafted by labctl test --draft") {
		t.Errorf("TODO.md does not list the drafted step:\n%s", todo)
	}
	for _, u := range after.Unfinished() {
		if strings.Contains(u.String(), "steps[0]") {
			t.Errorf("lint finds step 1 unfinished: %s", u)
		}
	}
}
