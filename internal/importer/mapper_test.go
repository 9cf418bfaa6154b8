package importer

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/labctl/labctl/lab"
)

// todoOf reads the TODO.md an import wrote.
func todoOf(t *testing.T, out string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "TODO.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A scenario's namespaces are those kubectl and helm name (-n, --namespace,
// through a variable), create, and its manifests name; -n of other tools
// names none, default becomes the lab's own, and the Namespace objects
// setup applies are left to labctl.
func TestKillercodaNamespaces(t *testing.T) {
	_, l, out := importTree(t, Killercoda, "spaces", map[string]string{
		"index.json": `{"title": "Spaces", "details": {
  "steps": [{"title": "One", "text": "1.md", "verify": "1/verify.sh", "background": "1/background.sh"}],
  "assets": {"host01": [{"file": "ns.yaml", "target": "/root"}, {"file": "cache.yaml", "target": "/root"}]}},
  "backend": {"imageid": "kubernetes-kubeadm-1node"}}`,
		"1.md": "Run the web pod.\n<details><summary>Solution</summary>\n\n```\nsudo kubectl -n default get pods\n" +
			"kubectl create ns extra\nhelm install web ./chart -n charts\nkubectl get pods -A\nssh node01 systemctl restart kubelet\ndocker ps\n```\n</details>\n",
		"1/verify.sh": "#!/bin/bash\nopenssl x509 -in /root/cert.pem -noout -subject | grep -q web\nhead -n1 /root/a | grep -q x\n" +
			"[ $? -ne 0 ] && exit 1\necho -n ok | grep -q odes\nkubectl -n shop get pod web\n",
		"1/background.sh": "NS=team\nkubectl create namespace \"$NS\"\nkubectl apply -f /root/ns.yaml\n" +
			"until kubectl get nodes | grep -q Ready; do sleep 1; done\nkubectl apply -f - <<EOF\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: heredoc\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: heredoc\nEOF\n",
		"assets/ns.yaml":    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: store\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: store\n",
		"assets/cache.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cache\n  namespace: cache\nspec:\n  template:\n    spec:\n      containers:\n      - name: redis\n        image: redis\n",
	})
	want := []string{"lab", "shop", "team", "extra", "charts", "store", "heredoc", "cache"}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(l.Cluster.Namespaces))
	if !slices.Equal(got, want) {
		t.Errorf("namespaces = %q, want %q", got, want)
	}
	st := l.Steps[0]
	for _, gone := range []string{"sudo", "-n default", "name: heredoc"} {
		if strings.Contains(st.Setup+st.Solve, gone) {
			t.Errorf("setup or solve still holds %q:\n%s\n%s", gone, st.Setup, st.Solve)
		}
	}
	for _, want := range []string{": labctl creates the namespace: kubectl create namespace \"NS\"", "namespace: heredoc", "kind: ConfigMap"} {
		if !strings.Contains(st.Setup, want) {
			t.Errorf("setup lacks %q:\n%s", want, st.Setup)
		}
	}
	if !strings.Contains(st.Solve, "kubectl -n lab get pods") {
		t.Errorf("solve does not name the lab's namespace for default:\n%s", st.Solve)
	}
	ns, err := os.ReadFile(filepath.Join(out, "fixtures/assets/ns.yaml"))
	if err != nil || strings.Contains(string(ns), "kind: Namespace") || !strings.Contains(string(ns), "kind: ConfigMap") {
		t.Errorf("fixtures/assets/ns.yaml = %q, %v; want its ConfigMap only", ns, err)
	}
	todo := todoOf(t, out)
	for _, want := range []string{"namespace default", "sudo", "-A", "ssh node01", "systemctl restart kubelet", "docker ps", "helm install",
		"image redis (named in assets/cache.yaml) has no fixed tag", "waits for the cluster's nodes"} {
		if !strings.Contains(todo, want) {
			t.Errorf("TODO.md lacks %q:\n%s", want, todo)
		}
	}
}

// A typed check is exactly what its verify line asserts, or the line stays
// in a command check: ConfigMap data is a string, grep finds a pattern
// (anchored by line, -w at word bounds), and a number or a boolean of a
// field of unknown type is not guessed.
func TestKillercodaTypedChecksAreExact(t *testing.T) {
	files := map[string]string{}
	verify := []string{
		`[ "$(kubectl get cm app -o jsonpath='{.data.port}')" = "8080" ]`,
		`kubectl get cm app -o jsonpath='{.data.debug}' | grep -q true`,
		`kubectl get pod web -o jsonpath='{.metadata.labels.app}' | grep -q '^web$'`,
		`kubectl get pod web -o jsonpath='{.metadata.labels.tier}' | grep -qw ap`,
		`[ "$(kubectl get deploy web -o jsonpath='{.spec.replicas}')" = "3" ]`,
		`[ "$(kubectl get pod web -o jsonpath='{.spec.priority}')" = "8080" ]`,
		`kubectl get deploy web -o jsonpath='{.spec.template.spec.hostNetwork}' | grep -q true`,
	}
	var steps []string
	for i, v := range verify {
		n := strconv.Itoa(i + 1)
		steps = append(steps, `{"title": "S`+n+`", "text": "s.md", "verify": "`+n+`.sh"}`)
		files[n+".sh"] = "#!/bin/bash\n" + v + "\n"
	}
	files["s.md"] = "Do it: `true`{{exec}}"
	files["index.json"] = `{"title": "Typed", "details": {"steps": [` + strings.Join(steps, ",") + `]}, "backend": {"imageid": "kubernetes-kubeadm-1node"}}`
	_, l, _ := importTree(t, Killercoda, "typed", files)
	field := func(i int) *lab.FieldAssert {
		if k := l.Steps[i].Checks[0].Kube; k != nil && k.Field != nil {
			return k.Field
		}
		return nil
	}
	if f := field(0); f == nil || f.Equals == nil || f.Equals.Literal != "8080" {
		t.Errorf("data.port = \"8080\": %+v, want equals the string 8080", f)
	}
	if f := field(1); f == nil || f.Equals != nil || f.Matches != "true" {
		t.Errorf("data.debug | grep -q true: %+v, want matches true", f)
	}
	if f := field(2); f == nil || !regexp.MustCompile(f.Matches).MatchString("web") || regexp.MustCompile(f.Matches).MatchString("webs") {
		t.Errorf("grep -q '^web$': %+v, want a match of web alone", f)
	}
	if f := field(3); f == nil || !regexp.MustCompile(f.Matches).MatchString("ap") || !regexp.MustCompile(f.Matches).MatchString("x-ap") ||
		regexp.MustCompile(f.Matches).MatchString("app") {
		t.Errorf("grep -qw ap: %+v, want a match of the word ap, not app", f)
	}
	if f := field(4); f == nil || f.Equals == nil || f.Equals.Literal != 3 {
		t.Errorf("spec.replicas = 3: %+v, want equals the integer 3", f)
	}
	for _, i := range []int{5, 6} {
		if c := l.Steps[i].Checks[0]; c.Command == nil {
			t.Errorf("%s: %+v, want it left a command check (the field's type is not known)", verify[i], c)
		}
	}
}
