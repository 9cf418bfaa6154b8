package rbacci_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/checks/checkstest"
	"github.com/labctl/labctl/lab"
)

// The rbac-ci lab lives in labs/rbac-ci; `labctl test` proves it end to end
// on a cluster, where its access checks ask the API server. These tests
// need none: the lab file loads and lints clean, its texts are Japanese,
// every check waits for the cluster, its scripts parse, and its fixtures
// agree with the checks that read what the scripts make of them.
const (
	rbacLabDir = "."
	rbacLab    = rbacLabDir + "/lab.yaml"
)

func loadRbacLab(t *testing.T) *lab.Lab {
	t.Helper()
	l, err := lab.Load(rbacLab)
	if err != nil {
		t.Fatalf("loading %s: %v", rbacLab, err)
	}
	return l
}

func TestRbacLabLoads(t *testing.T) {
	l := loadRbacLab(t)
	for _, w := range l.Lint() {
		t.Error(w)
	}
	if l.Metadata.Name != "rbac-ci" || l.Metadata.Language != "ja" {
		t.Errorf("metadata = %+v, want the name rbac-ci in Japanese", l.Metadata)
	}
	c := l.Cluster
	if c.Provider != "kind" || c.Workloads != lab.WorkloadsDeclare || len(c.Images) != 0 {
		t.Errorf("cluster = %+v, want kind, workloads declare and no images (the lab runs as a class)", c)
	}
	if want := []string{"shop", "ci", "monitoring"}; !slices.Equal(c.Namespaces, want) {
		t.Errorf("cluster.namespaces = %v, want %v", c.Namespaces, want)
	}
	// The learner is admin of the lab's namespaces, whose role includes
	// impersonating their service accounts: the lab's diagnostic tool.
	if len(l.Access.Rules) != 0 || len(l.Access.ClusterRules) != 0 {
		t.Errorf("access = %+v, want the default (admin of the lab's namespaces, nothing cluster-wide)", l.Access)
	}
	if l.Sandbox.WorkDir != "/root" || l.Sandbox.Fixtures != "/opt/lab/fixtures" {
		t.Errorf("sandbox = %+v, want workDir /root and fixtures /opt/lab/fixtures", l.Sandbox)
	}
	if len(l.Steps) < 3 {
		t.Errorf("%d steps, want at least 3", len(l.Steps))
	}
	for _, s := range l.Steps {
		checkstest.RequireCompleteStep(t, s)
		// Least privilege is shown both ways: what an identity may do and
		// what it may not (an access check, or a permissions check, which
		// judges everything no must or may entry states, and requires what
		// a must entry states).
		var may, mayNot bool
		for _, ch := range s.Checks {
			if a := ch.Access; a != nil && a.Allowed != nil {
				may, mayNot = may || *a.Allowed, mayNot || !*a.Allowed
			}
			if p := ch.Permissions; p != nil {
				mayNot = true
				for _, sub := range p.Subjects {
					may = may || len(sub.Must) > 0
				}
			}
		}
		if !may || !mayNot {
			t.Errorf("step %s: checks that require a right %v, that forbid one %v; want both", s.ID, may, mayNot)
		}
	}
	if _, err := os.Stat(filepath.Join(rbacLabDir, "README.md")); err != nil {
		t.Errorf("the lab lacks its README: %v", err)
	}
}

// Every text the learner reads is written in Japanese: it has kana, not
// only Kubernetes names and commands.
func TestRbacLabIsJapanese(t *testing.T) {
	l := loadRbacLab(t)
	texts := map[string]string{"title": l.Metadata.Title, "goal": l.Metadata.Goal}
	for _, s := range l.Steps {
		texts[s.ID+" title"] = s.Title
		texts[s.ID+" instructions"] = s.Instructions
		texts[s.ID+" why"] = s.Why
		for i, h := range s.Hints {
			texts[s.ID+" hint "+string(rune('1'+i))] = h
		}
		for _, c := range s.Checks {
			texts[s.ID+"/"+c.Name+" description"] = c.Description
		}
		for _, m := range s.Mistakes {
			texts[s.ID+" mistake "+m.Name+" description"] = m.Description
			texts[s.ID+" mistake "+m.Name+" explain"] = m.Explain
		}
		for _, a := range s.Alternatives {
			if a.Mutant != "" {
				// A declared mutant says why, and may go without a description.
				texts[s.ID+" alternative "+a.Name+" why"] = a.Why
				continue
			}
			texts[s.ID+" alternative "+a.Name+" description"] = a.Description
		}
	}
	for where, text := range texts {
		if !strings.ContainsFunc(text, func(r rune) bool { return unicode.In(r, unicode.Hiragana, unicode.Katakana) }) {
			t.Errorf("%s has no Japanese: %q", where, text)
		}
	}
}

// Every check asks the cluster: without credentials (or its audit log)
// each one ends in an error saying so, never in a verdict or another error
// (a bad path, selector or field).
func TestRbacLabChecksNeedTheCluster(t *testing.T) {
	l := loadRbacLab(t)
	env := checks.Env{Root: t.TempDir()}
	for _, s := range l.Steps {
		for i, r := range checks.Run(context.Background(), env, s.Checks) {
			c := s.Checks[i]
			if c.Audit != nil {
				// The API server's audit log of the learner's requests.
				if r.Status != checks.Error || !strings.Contains(r.Message, "audit log") {
					t.Errorf("%s/%s without a cluster: %s %s, want the no-audit-log error", s.ID, r.Name, r.Status, r.Message)
				}
				continue
			}
			if c.Access == nil && c.Kube == nil && c.Permissions == nil {
				t.Errorf("%s/%s is neither an access, a kube nor an audit check", s.ID, r.Name)
			}
			if r.Status != checks.Error || !strings.Contains(r.Message, "no cluster credentials") {
				t.Errorf("%s/%s without a cluster: %s %s, want the no-credentials error", s.ID, r.Name, r.Status, r.Message)
			}
		}
	}
}

// heredocYAML matches the manifests the lab's scripts write or apply from
// a here-document.
var heredocYAML = regexp.MustCompile(`(?s)<<'YAML'\n(.*?)\nYAML\n`)

// Every script is valid bash, and every manifest it holds is a list of
// RBAC objects that parse.
func TestRbacLabScriptsParse(t *testing.T) {
	l := loadRbacLab(t)
	scripts := map[string]string{}
	for _, s := range l.Steps {
		scripts[s.ID+" setup"] = s.Setup
		scripts[s.ID+" solve"] = s.Solve
		for _, m := range s.Mistakes {
			scripts[s.ID+" mistake "+m.Name] = m.Script
			scripts[s.ID+" mistake "+m.Name+" recover"] = m.Recover
		}
		for _, a := range s.Alternatives {
			scripts[s.ID+" alternative "+a.Name] = a.Script
		}
	}
	manifests := 0
	for name, script := range scripts {
		cmd := exec.Command("bash", "-n")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s is not valid bash: %v\n%s", name, err, out)
		}
		for _, m := range heredocYAML.FindAllStringSubmatch(script, -1) {
			for i, doc := range strings.Split(m[1], "\n---\n") {
				manifests++
				var obj struct {
					APIVersion string `json:"apiVersion"`
					Kind       string `json:"kind"`
				}
				if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
					t.Errorf("%s: manifest %d does not parse: %v", name, i, err)
					continue
				}
				if obj.APIVersion != "rbac.authorization.k8s.io/v1" || (obj.Kind != "Role" && obj.Kind != "RoleBinding") {
					t.Errorf("%s: manifest %d is %s %s, want a Role or RoleBinding", name, i, obj.APIVersion, obj.Kind)
				}
			}
		}
	}
	if manifests == 0 {
		t.Error("no script holds a manifest in a here-document: the pattern finds none")
	}
}

// The fixtures agree with the checks: the release step 2 ships is neither
// the one running before it nor step 3's, step 2's check takes both
// releases and no other image, and step 3's check wants web-config as
// step 3's manifest has it, which step 1's is not.
func TestRbacLabFixtures(t *testing.T) {
	l := loadRbacLab(t)
	fixtures := filepath.Join(rbacLabDir, "fixtures")
	type container struct {
		Image string `json:"image"`
	}
	var deployment struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []container `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	}
	var configMap struct {
		Data map[string]string `json:"data"`
	}
	read := func(path string, into any) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(fixtures, path))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, into); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	image := func(path string) string {
		t.Helper()
		deployment.Spec.Template.Spec.Containers = nil
		read(path, &deployment)
		if cs := deployment.Spec.Template.Spec.Containers; len(cs) == 1 {
			return cs[0].Image
		}
		t.Fatalf("%s: want one container", path)
		return ""
	}
	check := func(step, name string) *lab.KubeCheck {
		t.Helper()
		for _, s := range l.Steps {
			if s.ID != step {
				continue
			}
			for _, c := range s.Checks {
				if c.Name == name && c.Kube != nil && c.Kube.Field != nil {
					return c.Kube
				}
			}
		}
		t.Fatalf("step %s has no kube check %s with a field", step, name)
		return nil
	}

	// Step 2 releases the image its instructions name; the check takes it
	// and step 3's release, never the image before them nor a moving tag.
	released := regexp.MustCompile(`set image deployment/web web=(\S+)`)
	var release string
	for _, st := range l.Steps {
		if st.ID == "least-privilege" {
			if m := released.FindStringSubmatch(st.Solve); m != nil {
				release = m[1]
			}
		}
	}
	before, after := image("cluster/shop/web.yaml"), image("shop-ci/v2/deploy/deployment.yaml")
	if release == "" || before == after || release == before || release == after {
		t.Errorf("images: before step 2 %q, step 2 releases %q, step 3 %q; want three different ones", before, release, after)
	}
	imageCheck := check("least-privilege", "web-image-released")
	pattern, err := regexp.Compile(imageCheck.Field.Matches)
	if err != nil || imageCheck.Field.Matches == "" {
		t.Fatalf("web-image-released must match the released images: matches %q: %v", imageCheck.Field.Matches, err)
	}
	latest := before[:strings.LastIndex(before, ":")] + ":latest"
	for img, want := range map[string]bool{release: true, after: true, before: false, latest: false} {
		if pattern.MatchString(img) != want {
			t.Errorf("web-image-released matches %q: %v, want %v", img, !want, want)
		}
	}

	// Step 3's check wants web-config as the release's manifest has it,
	// which the web-config of step 1 is not.
	key := check("apply-config", "web-config-released")
	if key.Field.Path != "data" || key.Field.Equals == nil {
		t.Fatalf("web-config-released must require the whole data: path %q", key.Field.Path)
	}
	want, _ := key.Field.Equals.Literal.(map[string]any)
	read("shop-ci/v2/deploy/configmap.yaml", &configMap)
	if len(want) != len(configMap.Data) {
		t.Errorf("step 3's web-config has %d keys, the check wants %d", len(configMap.Data), len(want))
	}
	for k, v := range configMap.Data {
		if want[k] != v {
			t.Errorf("step 3's web-config has %s = %q, the check wants %v", k, v, want[k])
		}
	}
	configMap.Data = nil
	read("cluster/shop/web-config.yaml", &configMap)
	if _, ok := configMap.Data["RECOMMEND_API_URL"]; ok || len(configMap.Data) == len(want) {
		t.Errorf("the web-config step 1 applies already has the release's keys: step 3's check would pass before its solve")
	}
}
