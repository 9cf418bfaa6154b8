package importer

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
		"1.md": "Run the web pod.\n<details><summary>Solution</summary>\n\n```\nsudo kubectl -n default get pods\nkubectl -n default-app get pods\n" +
			"kubectl create ns extra\nhelm install web ./chart -n charts\nkubectl get pods -A\nssh node01 systemctl restart kubelet\ndocker ps\n```\n</details>\n",
		"1/verify.sh": "#!/bin/bash\nopenssl x509 -in /root/cert.pem -noout -subject | grep -q web\nhead -n1 /root/a | grep -q x\n" +
			"[ $? -ne 0 ] && exit 1\necho -n ok | grep -q odes\nkubectl -n shop get pod web\n",
		"1/background.sh": "NS=team\nkubectl create namespace \"$NS\"\nkubectl apply -f /root/ns.yaml\n" +
			"until kubectl get nodes | grep -q Ready; do sleep 1; done\nkubectl apply -f - <<EOF\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: heredoc\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: heredoc\nEOF\n",
		"assets/ns.yaml":    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: store\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: store\n",
		"assets/cache.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cache\n  namespace: cache\nspec:\n  template:\n    spec:\n      containers:\n      - name: redis\n        image: redis\n",
	})
	want := []string{"lab", "shop", "team", "extra", "charts", "store", "heredoc", "cache", "default-app"}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(l.Cluster.Namespaces))
	if !slices.Equal(got, want) {
		t.Errorf("namespaces = %q, want %q", got, want)
	}
	st := l.Steps[0]
	for _, gone := range []string{"sudo", "-n default get", "name: heredoc"} {
		if strings.Contains(st.Setup+st.Solve, gone) {
			t.Errorf("setup or solve still holds %q:\n%s\n%s", gone, st.Setup, st.Solve)
		}
	}
	for _, want := range []string{": labctl creates the namespace: kubectl create namespace \"NS\"", "namespace: heredoc", "kind: ConfigMap"} {
		if !strings.Contains(st.Setup, want) {
			t.Errorf("setup lacks %q:\n%s", want, st.Setup)
		}
	}
	if !strings.Contains(st.Solve, "kubectl -n lab get pods\nkubectl -n default-app get pods") {
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

// A solution's manifest is applied, not run as bash; what waits for a person
// or never ends, and the other side of an "or", stay out of the solve; a
// verify script runs with its interpreter, in /root, for as long as its
// waits; an unclosed <details> hides the solution still; a lab with
// placeholders is a draft.
func TestKillercodaSolvesAndChecks(t *testing.T) {
	_, l, out := importTree(t, Killercoda, "solves", map[string]string{
		"index.json": `{"title": "Solves", "details": {"steps": [
  {"title": "Pod", "text": "1.md", "verify": "1.sh"},
  {"title": "Scale", "text": "2.md", "verify": "2.py"},
  {"title": "Look", "text": "3.md", "verify": "3.sh"}]}, "backend": {"imageid": "kubernetes-kubeadm-1node"}}`,
		"1.md": "Run pod web.\n<details><summary>Solution</summary>\n\nWrite pod.yaml:<br>\n\n```yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx:1.27\n```\n\n" +
			"```\nkubectl apply -f pod.yaml\nkubectl get pods -w\n```\n\nOR\n\n```\nkubectl run web --image=nginx:1.27\n```\n\n```\nkubectl edit pod web\nkubectl exec -it web -- sh\n```\n</details>\n",
		"1.sh": "#!/bin/bash\nkubectl wait --for=condition=Ready pod/web --timeout=120s\nIP=$(kubectl get pod web -o json | jq -r '.status.podIP // \"none\"')\n" +
			"kubectl exec web -- cat /etc/nginx/nginx.conf | grep -q worker\n[ \"$IP\" != none ]\n",
		"2.md": "Look with `kubectl get deploy`{{exec}}, then scale.\n<details><summary>Solution</summary>\n\n```\nkubectl scale deploy web --replicas=2\n```\n",
		"2.py": "#!/usr/bin/env python3\nimport subprocess\nout = subprocess.run(['kubectl', 'get', 'deploy', 'web', '-o', 'name'], capture_output=True)\nassert out.returncode == 0\n",
		"3.md": "Look around.",
		"3.sh": "kubectl get pod web\n",
	})
	s1, s2, s3 := l.Steps[0], l.Steps[1], l.Steps[2]
	if want := "cat > 'pod.yaml' <<'EOF'\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: web\n    image: nginx:1.27\nEOF\nkubectl apply -f pod.yaml"; s1.Solve != want {
		t.Errorf("step 1's solve =\n%s\nwant\n%s", s1.Solve, want)
	}
	if strings.Contains(s1.Solution, "<br>") || !strings.Contains(s1.Solution, "kubectl edit pod web") {
		t.Errorf("step 1's solution (the learner's to read, whole, without <br>) = %q", s1.Solution)
	}
	c := s1.Checks[0]
	if c.Command == nil || c.Command.Dir != "/root" || c.Timeout.Duration != 130*time.Second {
		t.Errorf("step 1's check = %+v, want a command in /root with a timeout of 130s", c)
	}
	if c := s2.Checks[0].Command; c == nil || c.Run[0] != "python3" || c.Run[1] != "-c" || !strings.Contains(c.Run[2], "import subprocess") {
		t.Errorf("step 2's check = %+v, want python3 -c SCRIPT", c)
	}
	if s2.Solve != "kubectl scale deploy web --replicas=2" || strings.Contains(s2.Instructions, "kubectl scale") {
		t.Errorf("step 2: solve %q, instructions %q; want the solution's command in the solve only", s2.Solve, s2.Instructions)
	}
	if !lab.PlaceholderScript(s3.Solve) || !l.Metadata.Draft {
		t.Errorf("step 3's solve %q, draft %v; want a placeholder and a draft", s3.Solve, l.Metadata.Draft)
	}
	todo := todoOf(t, out)
	for _, want := range []string{`"kubectl get pods -w"`, `"kubectl edit pod web"`, `"kubectl exec -it web -- sh"`, `gives another way after "or"`,
		"<details> block is not closed", "metadata.draft: true"} {
		if !strings.Contains(todo, want) {
			t.Errorf("TODO.md lacks %q:\n%s", want, todo)
		}
	}
	for _, wrong := range []string{"outside the learner's home"} {
		if strings.Contains(todo, wrong) {
			t.Errorf("TODO.md holds %q (jq's // and a path inside a Pod are no paths of the sandbox):\n%s", wrong, todo)
		}
	}
}

// An import reads each verify script line by line and says in TODO.md
// which lines became which check and which stay in the command check; the
// lab asks for the add-ons of the kinds and commands the scenario uses. A step that deletes (or sets
// otherwise) what an earlier step's checks require is said: the lab cannot grade 100 % at its
// end.
func TestKillercodaLineByLineAndAddons(t *testing.T) {
	r, l, out := importTree(t, Killercoda, "pv", map[string]string{
		"index.json": `{"title": "Volumes", "details": {"steps": [
  {"title": "Claim", "text": "1.md", "verify": "1.sh"},
  {"title": "Scale", "text": "2.md", "verify": "2.sh"},
  {"title": "Clean", "text": "3.md", "verify": "3.sh"},
  {"title": "Shrink", "text": "4.md", "verify": "4.sh"}],
  "assets": {"host01": [{"file": "policy.yaml", "target": "/root"}, {"file": "pv.yaml", "target": "/root"}]}}, "backend": {"imageid": "kubernetes-kubeadm-1node"}}`,
		"1.md": "Claim it: `kubectl apply -f claim.yaml`{{exec}}",
		// killercoda/scenarios-kubernetes persistentVolumes step2's verify script.
		"1.sh": "#!/bin/bash\n\nif ! kubectl get pvc my-claim; then exit 1; fi\n\nSTATE=$(kubectl get pvc my-claim -o json | jq -r .status.phase)\n\n" +
			"if [[ \"$STATE\" -eq \"Bound\" ]]; then\n    exit 0\nelse\n    exit 1\nfi\n",
		"2.md": "Scale, then look: `kubectl scale deploy web --replicas=3 && kubectl top pods`{{exec}}, then `k set image deploy/web web=httpd:2.4-alpine --record`{{exec}}",
		// killercoda/scenarios-kubernetes deployment-basics step2's verify script.
		"2.sh":               "#!/bin/bash\n\nNUM_REP=$(kubectl get deployment web -o json | jq .spec.replicas)\n\nif [ \"$NUM_REP\" -eq \"3\" ]; then\n    exit 0\nelse\n    exit 1\nfi\n",
		"3.md":               "Delete the claim: `kubectl delete pvc my-claim`{{exec}}",
		"3.sh":               "#!/bin/bash\nif kubectl get pvc my-claim; then exit 1; fi\n",
		"4.md":               "Scale down: `kubectl scale deploy web --replicas=1`{{exec}}",
		"4.sh":               "#!/bin/bash\n[ \"$(kubectl get deploy web -o jsonpath='{.spec.replicas}')\" = 1 ]\n",
		"assets/pv.yaml":     "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: cool\nspec:\n  hostPath:\n    path: /tmp/cool\n",
		"assets/policy.yaml": "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny\nspec:\n  podSelector: {}\n",
	})
	if r.Checks != 5 || r.Typed != 4 {
		t.Errorf("result = %+v, want 5 checks, 4 typed", r)
	}
	if c := l.Steps[1].Checks; len(c) != 1 || c[0].Kube == nil || c[0].Kube.Field == nil || c[0].Kube.Field.Equals.Literal != 3 {
		t.Errorf("step 2's checks = %+v, want spec.replicas equals the integer 3", c)
	}
	if !slices.ContainsFunc(l.Cluster.Images, func(i lab.Image) bool { return i.Name == "httpd:2.4-alpine" }) {
		t.Errorf("images = %+v, want httpd:2.4-alpine, which kubectl set image names", l.Cluster.Images)
	}
	want := []string{"metrics", "networkPolicy", "storage"}
	if got := slices.Sorted(slices.Values(l.Cluster.Addons)); !slices.Equal(got, want) {
		t.Errorf("addons = %q, want %q", got, want)
	}
	todo := todoOf(t, out)
	for _, want := range []string{
		"line 3 became check persistentvolumeclaim-my-claim",
		`reads "Bound" as arithmetic`,
		"lines 7-11 stay in command check verify-script",
		"lines 5-9 (with line 3) became check deployment-web-spec-replicas",
		"the lab asks for the metrics add-on",
		"the source creates a cluster-wide PersistentVolume",
		`step "Clean" requires PersistentVolumeClaim my-claim gone, which step "Claim"'s checks require`,
		`step "Shrink" requires Deployment web's spec.replicas to be 1, and step "Scale"'s checks require 3`,
	} {
		if !strings.Contains(todo, want) {
			t.Errorf("TODO.md lacks %q:\n%s", want, todo)
		}
	}
}

// A verify script's kubectl wait (the line of killercoda/scenario-examples
// network-traffic-kubernetes/step1.md) and jq -e tests are written as
// kube checks that load: the condition read by a filter, read until it
// holds for as long as the script waited; a list's count; an integer's
// bound. TODO.md says which jq test stays, and why.
func TestKillercodaWaitAndJQ(t *testing.T) {
	_, l, out := importTree(t, Killercoda, "wait", map[string]string{
		"index.json": `{"title": "Wait", "details": {"steps": [{"title": "Pod", "text": "1.md", "verify": "1.sh"}]}, "backend": {"imageid": "kubernetes-kubeadm-1node"}}`,
		"1.md":       "Run Pod nginx and Deployment web with three replicas, labelled app=web.\n\n```\nkubectl run nginx --image=nginx:1.27\nkubectl create deploy web --image=nginx:1.27 --replicas=3\n```\n",
		"1.sh": "#!/bin/bash\nset -e\nkubectl wait --for=condition=ready pod nginx --timeout=90s\n" +
			"kubectl get deploy web -o json | jq -e '.spec.replicas >= 2'\n" +
			"kubectl get pods -l app=web -o json | jq -e '.items | length == 3'\n" +
			"kubectl get deploy web -o json | jq -e '.metadata.labels.app != \"db\"'\n",
	})
	cs := l.Steps[0].Checks
	if len(cs) != 4 {
		t.Fatalf("checks = %+v, want 3 kube checks and the rest", cs)
	}
	if k := cs[0].Kube; k == nil || !k.Wait || k.Name != "nginx" || k.Field == nil || k.Field.Path != `status.conditions[?(@.type=="Ready")].status` ||
		k.Field.Equals == nil || k.Field.Equals.Literal != "True" || cs[0].Timeout.Duration != 93*time.Second {
		t.Errorf("kubectl wait became %+v (timeout %s), want Pod nginx's Ready condition True, waited for 93s", k, cs[0].Timeout)
	}
	if k := cs[1].Kube; k == nil || k.Field == nil || k.Field.Path != "spec.replicas" || k.Field.GTE == nil || k.Field.GTE.Literal != 2 {
		t.Errorf("jq -e '.spec.replicas >= 2' became %+v, want spec.replicas gte 2", k)
	}
	if k := cs[2].Kube; k == nil || k.Selector == nil || *k.Selector != "app=web" || k.Count == nil || *k.Count.Min != 3 || *k.Count.Max != 3 {
		t.Errorf("jq -e '.items | length == 3' became %+v, want three Pods matching app=web", k)
	}
	if c := cs[3]; c.Command == nil || !strings.Contains(c.Command.Run[2], `!= "db"`) {
		t.Errorf("the last check = %+v, want the jq != test left in the command check", c)
	}
	todo, err := os.ReadFile(filepath.Join(out, "TODO.md"))
	if err != nil || !strings.Contains(string(todo), "jq's != holds for a field that is missing") {
		t.Errorf("TODO.md does not say why the != test stays: %s %v", todo, err)
	}
}
