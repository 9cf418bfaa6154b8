package importer

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/lab"
)

func TestMapPage(t *testing.T) {
	md := "Create a file:\n\n```\ntouch /tmp/x\n```{{exec}}\n\nCopy `ls -l`{{copy}} or run `date`{{exec}}.<br>\n" +
		"<details><summary>Tip</summary>\n\n```plain\nkubectl create -h\n```{{exec}}\n\n</details>\n" +
		"<details><summary>Solution</summary>\n\n```plain\nkubectl create namespace flower\n```{{exec}}\n\n</details>\n" +
		"<details><summary>Why</summary>Because.</details>\nOpen {{TRAFFIC_HOST1_80}} ![map](./map.png)\n"
	p := mapPage(md)
	if want := []string{"touch /tmp/x", "date"}; !reflect.DeepEqual(p.execs, want) {
		t.Errorf("execs = %q, want %q", p.execs, want)
	}
	if want := []string{"kubectl create namespace flower"}; !reflect.DeepEqual(p.solution, want) {
		t.Errorf("solution = %q, want %q", p.solution, want)
	}
	// The block stays the learner's to read, closed: the step's solution.
	if len(p.solutionText) != 1 || !strings.Contains(p.solutionText[0], "```plain\nkubectl create namespace flower\n```") || strings.Contains(p.solutionText[0], "{{") {
		t.Errorf("solutionText = %q", p.solutionText)
	}
	if len(p.hints) != 1 || !strings.Contains(p.hints[0], "kubectl create -h") || strings.Contains(p.hints[0], "{{") {
		t.Errorf("hints = %q", p.hints)
	}
	for _, gone := range []string{"{{exec}}", "{{copy}}", "<br>", "flower", "kubectl create -h", "<details>"} {
		if strings.Contains(p.text, gone) {
			t.Errorf("text still holds %q:\n%s", gone, p.text)
		}
	}
	for _, kept := range []string{"touch /tmp/x", "`ls -l`", "**Why**", "Because."} {
		if !strings.Contains(p.text, kept) {
			t.Errorf("text lost %q:\n%s", kept, p.text)
		}
	}
	if len(p.todo) != 2 || !strings.Contains(p.todo[0], "TRAFFIC") || !strings.Contains(p.todo[1], "./map.png") {
		t.Errorf("todo = %q", p.todo)
	}
}

func TestMapPageSolutionWithoutFence(t *testing.T) {
	p := mapPage("Do it.\n<details><summary>Solution</summary>\n<br>\n\nkubectl -n shop scale deploy web --replicas=3\n</details>\n")
	if want := []string{"kubectl -n shop scale deploy web --replicas=3"}; !reflect.DeepEqual(p.solution, want) {
		t.Errorf("solution = %q, want %q", p.solution, want)
	}
	if len(p.todo) != 1 || strings.Contains(p.text, "scale") {
		t.Errorf("todo = %q, text = %q", p.todo, p.text)
	}
}

func TestMapVerify(t *testing.T) {
	no := false
	for _, tc := range []struct {
		name   string
		script string
		typed  bool
		checks []check
	}{
		{"an object that exists", "#!/bin/bash\n\nkubectl get pod my-pod\n", true, []check{{Name: "pod-my-pod", Description: "Pod my-pod exists",
			Kube: &kubeCheck{APIVersion: "v1", Kind: "Pod", Namespace: "lab", Name: "my-pod"}}}},
		{"kind/name in a namespace", "set -e\nkubectl get deploy/web -n shop >/dev/null 2>&1", true, []check{{Name: "deployment-web", Description: "Deployment web exists",
			Kube: &kubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}}}},
		{"cluster-scoped", "kubectl get ns flower", true, []check{{Name: "namespace-flower", Description: "Namespace flower exists",
			Kube: &kubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "flower"}}}},
		{"an object that is gone", "if kubectl get pod my-pod; then exit 1; fi", true, []check{{Name: "pod-my-pod-gone", Description: "Pod my-pod does not exist",
			Kube: &kubeCheck{APIVersion: "v1", Kind: "Pod", Namespace: "lab", Name: "my-pod", Exists: &no}}}},
		{"a file", "stat /root/panda", true, []check{{Name: "file-root-panda", Description: "/root/panda exists", File: &fileCheck{Path: "/root/panda"}}}},
		// A file check reads any path of the sandbox (from the host's
		// side outside /root): lines reading /etc, /tmp, /var and /opt
		// become file checks; /proc, /sys and /dev, which no check reads,
		// stay in the command check.
		{"a file outside the home", "stat /etc/panda", true, []check{{Name: "file-etc-panda", Description: "/etc/panda exists", File: &fileCheck{Path: "/etc/panda"}}}},
		{"a file outside the home that is gone", "if stat /var/dont-need-this.png; then exit 1; fi", true, []check{{Name: "file-var-dont-need-this-png-gone",
			Description: "/var/dont-need-this.png does not exist", File: &fileCheck{Path: "/var/dont-need-this.png", Exists: &no}}}},
		{"a file's content outside the home", "cat /etc/my-second-file | grep amazing", true, []check{{Name: "file-etc-my-second-file",
			Description: "/etc/my-second-file holds amazing", File: &fileCheck{Path: "/etc/my-second-file", Matches: []string{"amazing"}}}}},
		{"a path that climbs out of the home", "stat /root/../etc/panda", true, []check{{Name: "file-etc-panda", Description: "/etc/panda exists", File: &fileCheck{Path: "/etc/panda"}}}},
		{"nginx's configuration grepped", `grep -q "worker_processes 4" /etc/nginx/nginx.conf`, true, []check{{Name: "file-etc-nginx-nginx-conf",
			Description: "/etc/nginx/nginx.conf holds worker_processes 4", File: &fileCheck{Path: "/etc/nginx/nginx.conf", Matches: []string{"worker_processes 4"}}}}},
		{"a course's answer file", "test -f /opt/course/1/contexts", true, []check{{Name: "file-opt-course-1-contexts",
			Description: "/opt/course/1/contexts exists", File: &fileCheck{Path: "/opt/course/1/contexts", Type: "file"}}}},
		{"an output in /tmp, cat and grep", "cat /tmp/out.txt | grep -q finished", true, []check{{Name: "file-tmp-out-txt",
			Description: "/tmp/out.txt holds finished", File: &fileCheck{Path: "/tmp/out.txt", Matches: []string{"finished"}}}}},
		{"a log directory", "[ -d /var/log/app ]", true, []check{{Name: "file-var-log-app", Description: "/var/log/app exists", File: &fileCheck{Path: "/var/log/app", Type: "dir"}}}},
		{"a course's answer, grep -i", "grep -qi running /opt/course/5/pod-status.txt", true, []check{{Name: "file-opt-course-5-pod-status-txt",
			Description: "/opt/course/5/pod-status.txt holds running", File: &fileCheck{Path: "/opt/course/5/pod-status.txt", Matches: []string{"(?i)running"}}}}},
		{"a file in /proc", "grep -q 1 /proc/sys/net/ipv4/ip_forward", false, nil},
		{"a file in /sys", "test -f /sys/kernel/mm/transparent_hugepage/enabled", false, nil},
		{"a device", "test -e /dev/kmsg", false, nil},
		{"a directory", "[ -d /root/app ]", true, []check{{Name: "file-root-app", Description: "/root/app exists", File: &fileCheck{Path: "/root/app", Type: "dir"}}}},
		{"a number compared", `[ "$(kubectl get deploy web -n default -o jsonpath='{.spec.replicas}')" = "3" ]`, true, []check{{Name: "deployment-web-spec-replicas",
			Description: "Deployment web: spec.replicas", Kube: &kubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "lab", Name: "web",
				Field: &fieldCheck{Path: "spec.replicas", Equals: int64(3)}}}}},
		{"the namespace first, inside $()", `[ "$(kubectl -n web get cm app -o jsonpath={.data.port})" = "8080" ]`, true, []check{{Name: "configmap-app-data-port",
			Description: "ConfigMap app: data.port", Kube: &kubeCheck{APIVersion: "v1", Kind: "ConfigMap", Namespace: "web", Name: "app",
				Field: &fieldCheck{Path: "data.port", Equals: "8080"}}}}},
		{"a string grepped", `kubectl get pod web -o jsonpath='{.spec.containers[0].image}' | grep -q nginx`, false, nil},
		{"a label grepped", `kubectl get pod web -o jsonpath='{.metadata.labels.tier}' | grep -q 'front.end'`, true, []check{{Name: "pod-web-metadata-labels-tier",
			Description: "Pod web: metadata.labels.tier", Kube: &kubeCheck{APIVersion: "v1", Kind: "Pod", Namespace: "lab", Name: "web",
				Field: &fieldCheck{Path: "metadata.labels.tier", Matches: `front.end`}}}}},
		{"two lines under set -e", "set -e\nkubectl get pod a\nkubectl get pod b", true, []check{
			{Name: "pod-a", Description: "Pod a exists", Kube: &kubeCheck{APIVersion: "v1", Kind: "Pod", Namespace: "lab", Name: "a"}},
			{Name: "pod-b", Description: "Pod b exists", Kube: &kubeCheck{APIVersion: "v1", Kind: "Pod", Namespace: "lab", Name: "b"}}}},
		// Without set -e only the last line's status is the script's.
		{"two lines", "kubectl get pod a\nkubectl get pod b", true, []check{
			{Name: "pod-b", Description: "Pod b exists", Kube: &kubeCheck{APIVersion: "v1", Kind: "Pod", Namespace: "lab", Name: "b"}}}},
		{"the k alias, the namespace first", "k -n shop get cm redis-config", true, []check{{Name: "configmap-redis-config", Description: "ConfigMap redis-config exists",
			Kube: &kubeCheck{APIVersion: "v1", Kind: "ConfigMap", Namespace: "shop", Name: "redis-config"}}}},
		{"a file that is gone", "if stat /root/dont-need-this.png; then exit 1; fi", true, []check{{Name: "file-root-dont-need-this-png-gone",
			Description: "/root/dont-need-this.png does not exist", File: &fileCheck{Path: "/root/dont-need-this.png", Exists: &no}}}},
		{"a file's content, cat and grep", "cat /root/my-second-file | grep amazing", true, []check{{Name: "file-root-my-second-file",
			Description: "/root/my-second-file holds amazing", File: &fileCheck{Path: "/root/my-second-file", Matches: []string{"amazing"}}}}},
		{"a file's content, grep -qi", "grep -qi 'hello world' /root/a.txt", true, []check{{Name: "file-root-a-txt",
			Description: "/root/a.txt holds hello world", File: &fileCheck{Path: "/root/a.txt", Matches: []string{"(?i)hello world"}}}}},
		{"a grep with a regular expression", "grep -q 'a.*b' /root/a.txt", false, nil},
		{"a negated jsonpath", "if kubectl get pod web -o jsonpath='{.spec.nodeName}'; then exit 1; fi", false, nil},
		{"all namespaces", "kubectl get pods -A", false, nil},
		{"a selector", "kubectl get pods -l app=web", false, nil},
		{"an expansion", "kubectl get pod $POD", false, nil},
		{"a pipeline", "kubectl get pods | grep Running", false, nil},
		{"an unknown kind", "kubectl get widgets w1", false, nil},
		// The script runs in the learner's home: a relative path is there.
		{"a relative file", "stat panda", true, []check{{Name: "file-root-panda", Description: "/root/panda exists", File: &fileCheck{Path: "/root/panda"}}}},
		{"a relative path that climbs out", "stat ../etc/panda", true, []check{{Name: "file-etc-panda", Description: "/etc/panda exists", File: &fileCheck{Path: "/etc/panda"}}}},
		{"a relative path after cd", "cd /tmp\nstat out.txt", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vm := mapVerify(tc.script, "lab")
			if vm.typed != tc.typed {
				t.Fatalf("typed = %v, want %v (%+v)", vm.typed, tc.typed, vm.checks)
			}
			if !tc.typed {
				if len(vm.checks) != 1 || vm.checks[0].Command == nil || vm.checks[0].Command.Run[2] != strings.TrimSpace(tc.script) {
					t.Fatalf("checks = %+v, want the script as one command check", vm.checks)
				}
				return
			}
			if !reflect.DeepEqual(vm.checks, tc.checks) {
				t.Errorf("checks =\n%+v\nwant\n%+v", vm.checks, tc.checks)
			}
		})
	}
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"conf.yaml", "conf.yaml", true},
		{"*", "conf.yaml", true},
		{"*", "app1/readme.md", false},
		{"**", "app1/config/app.json", true},
		{"**/*.json", "app1/config/app.json", true},
		{"**/*.json", "top.json", true},
		{"app1/*/*.json", "app1/config/app.json", true},
		{"app1/*/*.json", "app1/etc/app/app.json", false},
		{"app*/**/*.*", "app2/cnf/cnf.yaml", true},
		{"app1/readme.md", "app2/readme.md", false},
	} {
		if got := globMatch(tc.pattern, tc.name); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}

// writeTree writes files (name → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// importTree writes files as a source directory named name, imports it
// with fn and loads the lab written.
func importTree(t *testing.T, fn func(src, out string) (*Result, error), name string, files map[string]string) (*Result, *lab.Lab, string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), name)
	writeTree(t, src, files)
	out := filepath.Join(t.TempDir(), "lab")
	r, err := fn(src, out)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lab.Load(filepath.Join(out, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return r, l, out
}

// assertNothingOf fails when a file under out holds secret.
func assertNothingOf(t *testing.T, out, secret string) {
	t.Helper()
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if strings.Contains(string(b), secret) {
			t.Errorf("%s holds the file from outside the source", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// scenario is a small Killercoda scenario with every part an import maps.
var scenario = map[string]string{
	"index.json": `{
  "title": "Pods and files",
  "description": "Create a pod, then a file.",
  "details": {
    "intro": {"text": "intro.md", "background": "intro/background.sh"},
    "steps": [
      {"title": "Read first", "text": "read.md"},
      {"title": "Create a pod", "text": "step1.md", "verify": "step1/verify.sh"},
      {"title": "Write a file", "text": "step2.md", "verify": "step2/verify.sh", "foreground": "step2/foreground.sh"}
    ],
    "finish": {"text": "finish.md"},
    "assets": {"host01": [{"file": "conf.yaml", "target": "~/", "chmod": "+w"}, {"file": "app/**", "target": "/srv"}]}
  },
  "backend": {"imageid": "kubernetes-kubeadm-2nodes"}
}`,
	"intro.md":            "Welcome.<br>",
	"intro/background.sh": "kubectl -n shop create configmap seed --from-literal=a=b\n",
	"read.md":             "Pods run containers. Try `kubectl get pods`{{exec}}.",
	"step1.md":            "Create pod `web` in namespace `shop`:\n\n```\nkubectl -n shop run web --image=nginx:1.27\n```{{exec}}\n",
	"step1/verify.sh":     "#!/bin/bash\nkubectl get pod web -n shop\n",
	"step2.md":            "Write `/root/done`.\n<details><summary>Solution</summary>\n\n```bash\necho ok > /root/done\n```{{exec}}\n</details>\n",
	"step2/verify.sh":     "#!/bin/bash\ngrep -q ok /root/done && kubectl get pod web -n shop -o name | grep -q web\n",
	"step2/foreground.sh": "echo ready\n",
	"finish.md":           "Well done!",
	"assets/conf.yaml":    "a: 1\n",
	"assets/app/x.json":   "{}\n",
}

func TestKillercoda(t *testing.T) {
	r, l, out := importTree(t, Killercoda, "pods-and-files", scenario)
	if r.Steps != 2 || r.Checks != 2 || r.Typed != 1 || r.Solved != 2 {
		t.Errorf("result = %+v, want 2 steps, 2 checks (1 typed), 2 solved", r)
	}
	if l.Metadata.Name != "pods-and-files" || l.Metadata.Title != "Pods and files" {
		t.Errorf("metadata = %+v", l.Metadata)
	}
	if want := []string{"lab", "shop"}; !reflect.DeepEqual(l.Cluster.Namespaces, want) {
		t.Errorf("namespaces = %q, want %q", l.Cluster.Namespaces, want)
	}
	if len(l.Cluster.Workers) != 1 || len(l.Cluster.Images) != 1 || l.Cluster.Images[0].Name != "nginx:1.27" {
		t.Errorf("cluster = %+v", l.Cluster)
	}
	s1, s2 := l.Steps[0], l.Steps[1]
	// The reading page and the intro join the first verified step.
	for _, want := range []string{"Welcome.", "## Read first", "Pods run containers", "## Create a pod", "Create pod `web`"} {
		if !strings.Contains(s1.Instructions, want) {
			t.Errorf("step 1's instructions lack %q:\n%s", want, s1.Instructions)
		}
	}
	if s1.ID != "create-a-pod" || s1.Solve != "kubectl get pods\nkubectl -n shop run web --image=nginx:1.27" {
		t.Errorf("step 1 = %s, solve %q", s1.ID, s1.Solve)
	}
	for _, want := range []string{"install -D -m 0644 '/opt/lab/fixtures/assets/conf.yaml' '/root/conf.yaml'", "chmod +w '/root/conf.yaml'",
		"'/opt/lab/fixtures/assets/app/x.json' '/srv/app/x.json'", "create configmap seed"} {
		if !strings.Contains(s1.Setup, want) {
			t.Errorf("step 1's setup lacks %q:\n%s", want, s1.Setup)
		}
	}
	if k := s1.Checks[0].Kube; k == nil || k.Namespace != "shop" || k.Name != "web" || k.Kind != "Pod" {
		t.Errorf("step 1's check = %+v", s1.Checks[0])
	}
	if s2.Solve != "echo ok > /root/done" || strings.Contains(s2.Instructions, "echo ok") || !strings.Contains(s2.Instructions, "Well done!") {
		t.Errorf("step 2: solve %q, instructions %q", s2.Solve, s2.Instructions)
	}
	if c := s2.Checks[0].Command; c == nil || c.Run[0] != "bash" || !strings.Contains(c.Run[2], "grep -q ok /root/done") {
		t.Errorf("step 2's check = %+v", s2.Checks[0])
	}
	if !strings.Contains(s2.Setup, "echo ready") {
		t.Errorf("step 2's setup = %q", s2.Setup)
	}
	for _, f := range []string{"fixtures/assets/conf.yaml", "fixtures/assets/app/x.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	todo, err := os.ReadFile(filepath.Join(out, "TODO.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`step 3 ("Write a file"): its verify script stays one command check`, "image nginx:1.27", "setup scripts run in the sandbox"} {
		if !strings.Contains(string(todo), want) {
			t.Errorf("TODO.md lacks %q:\n%s", want, todo)
		}
	}
	again := filepath.Join(t.TempDir(), "again")
	writeTree(t, again, scenario)
	if _, err := Killercoda(again, out); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("a second import into the same directory: %v", err)
	}
}

func TestKillercodaWithoutVerify(t *testing.T) {
	r, l, _ := importTree(t, Killercoda, "Tour 1", map[string]string{
		"index.json": `{"title": "Tour", "details": {"steps": [{"title": "One", "text": "1.md"}, {"title": "Two", "text": "2.md"}]}, "backend": {"imageid": "ubuntu"}}`,
		"1.md":       "one", "2.md": "two",
	})
	if l.Metadata.Name != "tour-1" || len(l.Steps) != 2 || r.Solved != 0 || r.Typed != 0 {
		t.Fatalf("lab %s with %d steps, result %+v", l.Metadata.Name, len(l.Steps), r)
	}
	for _, s := range l.Steps {
		if len(s.Checks) != 1 || s.Checks[0].Command == nil || s.Checks[0].Command.Run[0] != "false" || !strings.Contains(s.Solve, "exit 1") {
			t.Errorf("step %s: checks %+v, solve %q: want the failing placeholders", s.ID, s.Checks, s.Solve)
		}
	}
}

// The scenario is a stranger's: its index, texts and assets may name
// files outside its directory, directly or through links. None is read.
func TestKillercodaStaysInItsDirectory(t *testing.T) {
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "id_rsa")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "s")
	writeTree(t, src, map[string]string{
		"index.json": `{"title": "T", "details": {
			"intro": {"text": "../../../../../../` + strings.TrimPrefix(secret, "/") + `"},
			"steps": [{"title": "One", "text": "link.md", "verify": "` + secret + `", "background": "assets/dir/id_rsa"}],
			"assets": {"host01": [{"file": "**", "target": "/root"}]}}}`,
		"assets/ok.txt": "ok",
	})
	for link, to := range map[string]string{"link.md": secret, "assets/key": secret, "assets/dir": secretDir} {
		if err := os.Symlink(to, filepath.Join(src, link)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "lab")
	r, err := Killercoda(src, out)
	if err != nil {
		t.Fatal(err)
	}
	assertNothingOf(t, out, "PRIVATE KEY")
	if _, err := os.Stat(filepath.Join(out, "fixtures/assets/ok.txt")); err != nil {
		t.Error(err)
	}
	todo := strings.Join(r.Todo, "\n")
	for _, want := range []string{"outside the scenario's directory", "asset key is not a regular file", "the intro's text was not imported", "step 1's text was not imported"} {
		if !strings.Contains(todo, want) {
			t.Errorf("the to-do list does not say %q:\n%s", want, todo)
		}
	}
}

func TestKillercodaRefusesWhatIsNotAScenario(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"no index":     {"README.md": "hi"},
		"broken index": {"index.json": `{"title": `},
		"no steps":     {"index.json": `{"title": "T"}`},
		"huge index":   {"index.json": `{"title": "` + strings.Repeat("x", maxText) + `"}`},
	} {
		t.Run(name, func(t *testing.T) {
			src := t.TempDir()
			writeTree(t, src, files)
			out := filepath.Join(t.TempDir(), "lab")
			if _, err := Killercoda(src, out); err == nil {
				t.Fatal("imported")
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("wrote the lab directory anyway")
			}
		})
	}
}

func TestInstruqt(t *testing.T) {
	r, l, _ := importTree(t, Instruqt, "k8s-basics", map[string]string{
		"track.yml":                   "slug: k8s-basics\ntitle: Kubernetes basics\nteaser: Deployments and Services.\ndescription: |\n  Two challenges.\n",
		"config.yml":                  "version: \"3\"\nvirtualmachines:\n- name: k8s\n  image: instruqt/k3s-v1-27\n",
		"track_scripts/setup-k8s":     "#!/bin/bash\nkubectl create namespace shop\n",
		"01-deploy/assignment.md":     "---\nslug: deploy\ntype: challenge\ntitle: Deploy web\nnotes:\n- type: text\n  contents: Deployments keep Pods running.\n---\nCreate deployment `web` in namespace `shop`.\n\n```\nkubectl -n shop create deployment web --image=nginx:1.27\n```\n\n```json\n{\"kind\": \"Deployment\"}\n```\n",
		"01-deploy/check-k8s":         "#!/bin/bash\nset -euxo pipefail\nif ! kubectl get deployment web -n shop; then fail-message \"Deployment web not found\"; fi\n",
		"01-deploy/cleanup-k8s":       "echo bye\n",
		"02-expose/assignment.md":     "---\nslug: expose\ntitle: Expose web\n---\nExpose it on port 80.\n",
		"02-expose/setup-k8s":         "echo ready\n",
		"02-expose/solve-k8s":         "#!/bin/bash\nkubectl -n shop expose deployment web --port 80\n",
		"02-expose/check-k8s":         "#!/bin/bash\nPORT=$(kubectl -n shop get svc web -o jsonpath='{.spec.ports[0].port}')\n[ \"$PORT\" = 80 ] || fail-message \"port is $PORT\"\n",
		"03-notes-only/assignment.md": "---\ntitle: Wrap up\n---\nWell done.\n",
		"assets/diagram.png":          "png",
		"02-expose/check-k8s.orig~":   "ignored",
		"01-deploy/solve-k8s.bak/x":   "a directory named like a script is not one",
		"track_scripts/cleanup-k8s":   "echo bye\n",
	})
	if r.Steps != 2 || r.Checks != 2 || r.Typed != 1 || r.Solved != 2 {
		t.Errorf("result = %+v, want 2 steps, 2 checks (1 typed), 2 solved", r)
	}
	if l.Metadata.Name != "k8s-basics" || l.Metadata.Title != "Kubernetes basics" || !strings.Contains(l.Metadata.Goal, "Deployments and Services.") {
		t.Errorf("metadata = %+v", l.Metadata)
	}
	s1, s2 := l.Steps[0], l.Steps[1]
	if !strings.Contains(s1.Instructions, "Deployments keep Pods running.") || !strings.Contains(s1.Setup, "kubectl create namespace shop") {
		t.Errorf("step 1: instructions %q, setup %q", s1.Instructions, s1.Setup)
	}
	if s1.Solve != "kubectl -n shop create deployment web --image=nginx:1.27" {
		t.Errorf("step 1's solve = %q: want the shell block, not the JSON one", s1.Solve)
	}
	if k := s1.Checks[0].Kube; k == nil || k.Kind != "Deployment" || k.Namespace != "shop" || k.Name != "web" || (k.Exists != nil && !*k.Exists) {
		t.Errorf("step 1's check = %+v", s1.Checks[0])
	}
	if s2.Solve != "#!/bin/bash\nkubectl -n shop expose deployment web --port 80" || !strings.Contains(s2.Setup, "echo ready") || !strings.Contains(s2.Instructions, "Well done.") {
		t.Errorf("step 2: solve %q, setup %q, instructions %q", s2.Solve, s2.Setup, s2.Instructions)
	}
	c := s2.Checks[0].Command
	if c == nil || !strings.HasPrefix(c.Run[2], "fail-message() {") || !strings.Contains(c.Run[2], "jsonpath='{.spec.ports[0].port}'") {
		t.Fatalf("step 2's check = %+v", s2.Checks[0])
	}
	todo := strings.Join(r.Todo, "\n")
	for _, want := range []string{"cleanup script cleanup-k8s was not imported", "the source creates namespace shop", `challenge 2 (02-expose) ("Expose web"): its verify script stays one command check`,
		"challenge 1 (01-deploy): its solve is the text's shell code blocks"} {
		if !strings.Contains(todo, want) {
			t.Errorf("the to-do list does not say %q:\n%s", want, todo)
		}
	}
}

// Instruqt's fail-message, defined for a check that runs as a command,
// fails the check with the message.
func TestFailMessageShim(t *testing.T) {
	run := func(script string) (string, error) {
		cmd := exec.Command("bash", "-c", failMessage(script))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		return stderr.String(), err
	}
	if msg, err := run(`[ 1 = 2 ] || fail-message "not equal"; echo after`); err == nil || strings.TrimSpace(msg) != "not equal" {
		t.Errorf("a failing check: %v, stderr %q", err, msg)
	}
	if _, err := run(`[ 1 = 1 ] || fail-message "not equal"`); err != nil {
		t.Errorf("a passing check: %v", err)
	}
}

func TestInstruqtLegacyTrack(t *testing.T) {
	r, _, _ := importTree(t, Instruqt, "old", map[string]string{
		"track.yml":          "title: Old\nchallenges:\n- slug: make-file\n  title: Make a file\n  assignment: Create `/root/a`.\n",
		"make-file/check-vm": "test -f /root/a\n",
		"make-file/solve-vm": "touch /root/a\n",
	})
	if r.Steps != 1 || r.Typed != 1 || r.Solved != 1 {
		t.Errorf("result = %+v", r)
	}
}

func TestInstruqtStaysInItsDirectory(t *testing.T) {
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "token")
	if err := os.WriteFile(secret, []byte("SECRET TOKEN"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "t")
	writeTree(t, src, map[string]string{"track.yml": "title: T\n", "01-a/assignment.md": "---\ntitle: A\n---\nDo it.\n"})
	for link, to := range map[string]string{"01-a/check-vm": secret, "01-a/solve-vm": secret, "02-b": secretDir, "config.yml": secret} {
		if err := os.Symlink(to, filepath.Join(src, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(secretDir, "assignment.md"), []byte("SECRET TOKEN"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "lab")
	if _, err := Instruqt(src, out); err != nil {
		t.Fatal(err)
	}
	assertNothingOf(t, out, "SECRET TOKEN")
}

// Scenarios alias kubectl as k, which a script does not expand; a line
// ending in spaces would make lab.yaml quote the whole text.
func TestKillercodaAliasAndTrailingSpaces(t *testing.T) {
	_, l, out := importTree(t, Killercoda, "cm", map[string]string{
		"index.json": `{"title": "CM", "details": {"steps": [{"title": "Make it", "text": "s.md", "verify": "v.sh"}]}}`,
		"s.md":       "Create configmap `c`.   \nNow.\n\n```\nk create cm c\n```{{exec}}\n",
		"v.sh":       "k get cm c\n",
	})
	b, err := os.ReadFile(filepath.Join(out, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "instructions: |-\n      Create configmap `c`.\n      Now.") {
		t.Errorf("the instructions are not a literal block without trailing spaces:\n%s", b)
	}
	cmd := exec.Command("bash", "-c", "kubectl() { echo \"kubectl $*\"; }\n"+l.Steps[0].Solve)
	got, err := cmd.Output()
	if err != nil || string(got) != "kubectl create cm c\n" {
		t.Errorf("the solve ran %q (%v), want kubectl create cm c", got, err)
	}
}

// An empty directory named by --out is filled; no temporary directory is
// left beside it.
func TestImportIntoAnEmptyDirectory(t *testing.T) {
	src := filepath.Join(t.TempDir(), "s")
	writeTree(t, src, map[string]string{"index.json": `{"title": "S", "details": {"steps": [{"title": "A", "text": "a.md", "verify": "v.sh"}]}}`,
		"a.md": "Make `/root/a`.\n\n`touch /root/a`{{exec}}", "v.sh": "test -f /root/a"})
	parent := t.TempDir()
	out := filepath.Join(parent, "lab")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Killercoda(src, out); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(parent)
	if err != nil || len(entries) != 1 || entries[0].Name() != "lab" {
		t.Fatalf("beside the lab: %v (%v)", entries, err)
	}
	if _, err := lab.Load(filepath.Join(out, "lab.yaml")); err != nil {
		t.Fatal(err)
	}
}

// TestPathsOutsideHome: TODO.md names the files a verify script reads that
// the grader cannot see, and not the programs it runs.
func TestPathsOutsideHome(t *testing.T) {
	got := pathsOutsideHome("#!/bin/bash\ncat /etc/my-second-file | grep amazing\n[ -f /root/ok ] && stat /var/x.png >/dev/null\n/usr/bin/test -d /tmp/step1\n")
	if want := []string{"/etc/my-second-file", "/var/x.png", "/tmp/step1"}; !slices.Equal(got, want) {
		t.Errorf("pathsOutsideHome = %q, want %q", got, want)
	}
}
