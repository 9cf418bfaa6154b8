package labctl_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	labctl "github.com/labctl/labctl"
	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/checks/checkstest"
	"github.com/labctl/labctl/internal/mutant"
	"github.com/labctl/labctl/lab"
)

// TestGitOpsLabJudgesWebWhole replays labctl test --mutate in a model for
// the GitOps lab's steps that put web in the cluster (apply,
// change-via-commit, drift, revert): web is what the API server stores of the
// repository's manifests (their fields and the server's defaults), and
// each mutant the catalogue makes of that step's solve (an image to
// latest, a port removed, replicas ±1, a Service's selector, port or type)
// must fail a check of the step that reads the cluster, unless the step
// declares it right. A check that compares one field of web with the
// repository lets every other field drift.
func TestGitOpsLabJudgesWebWhole(t *testing.T) {
	l, err := lab.Parse("lab.yaml", labctl.DefaultLab())
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	checkstest.WriteFixtures(t, labctl.DefaultFixtures(), filepath.Join(root, "opt/lab/fixtures"))
	// kubectl does nothing here: the model below is the cluster.
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	solve := func(id string) {
		t.Helper()
		s := gitopsStep(t, l, id)
		script := strings.NewReplacer("/root/", root+"/root/", "/opt/lab/fixtures", root+"/opt/lab/fixtures").Replace(s.Solve)
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = root
		cmd.Env = []string{"HOME=" + root + "/root", "PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("solve of %s: %v\n%s", id, err, out)
		}
	}
	manifest := func(name string) mutant.Object {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(root, "root/gitops/repo/apps/web", name))
		if err != nil {
			t.Fatal(err)
		}
		var o mutant.Object
		if err := yaml.Unmarshal(data, &o); err != nil {
			t.Fatal(err)
		}
		return stored(o)
	}
	web := func(replicas int) mutant.Object {
		o := manifest("deployment.yaml")
		o["spec"].(map[string]any)["replicas"] = float64(replicas)
		return o
	}

	for _, id := range []string{"init-repo", "manifests", "commit"} {
		solve(id)
	}
	apply := []mutant.Object{manifest("deployment.yaml"), manifest("service.yaml")}
	judgeWebMutants(t, root, gitopsStep(t, l, "apply"), nil, apply)

	solve("change-via-commit")
	changed := []mutant.Object{manifest("deployment.yaml"), manifest("service.yaml")}
	judgeWebMutants(t, root, gitopsStep(t, l, "change-via-commit"), apply, changed)

	// The drift step reads no cluster state (the grade at the end finds
	// web back at 3): each of its mutants is declared, and the revert
	// step's apply judges web whole.
	drifted := []mutant.Object{web(5), manifest("service.yaml")}
	judgeWebMutants(t, root, gitopsStep(t, l, "drift"), changed, drifted)
	judgeWebMutants(t, root, gitopsStep(t, l, "revert"), drifted, changed)
}

// TestGitOpsLabServiceManifestIsTheFixture: the manifests step asks for
// service.yaml as the fixture's copy, so each mutant the catalogue makes
// of that Service, written into the repository's file instead (a selector
// label dropped, port or targetPort shifted, the type NodePort), fails a
// check of the step. The cluster steps compare web with the repository
// and cannot see a Service wrong in both.
func TestGitOpsLabServiceManifestIsTheFixture(t *testing.T) {
	l, err := lab.Parse("lab.yaml", labctl.DefaultLab())
	if err != nil {
		t.Fatal(err)
	}
	step := gitopsStep(t, l, "manifests")
	fixture, err := fs.ReadFile(labctl.DefaultFixtures(), "gitops/seed/service.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var svc mutant.Object
	if err := yaml.Unmarshal(fixture, &svc); err != nil {
		t.Fatal(err)
	}
	judge := func(service []byte) []string {
		root := t.TempDir()
		checkstest.WriteFixtures(t, labctl.DefaultFixtures(), filepath.Join(root, "opt/lab/fixtures"))
		dir := filepath.Join(root, "root/gitops/repo/apps/web")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		deployment, err := fs.ReadFile(labctl.DefaultFixtures(), "gitops/seed/deployment.yaml")
		if err != nil {
			t.Fatal(err)
		}
		// The deployment as the step's solve leaves it.
		deployment = []byte(strings.NewReplacer("image: nginx:latest", "image: nginx:1.27",
			"  labels:\n    app.kubernetes.io/name: web\nspec:\n", "  labels:\n    app.kubernetes.io/name: web\n    app.kubernetes.io/managed-by: gitops\nspec:\n  replicas: 2\n").Replace(string(deployment)))
		for name, data := range map[string][]byte{"deployment.yaml": deployment, "service.yaml": service, "../../README.md": []byte("# web\n")} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var failing []string
		for _, r := range checks.Run(ctx, checks.Env{Root: root, Now: time.Now}, step.Checks) {
			if r.Status != checks.Pass {
				failing = append(failing, r.Name+": "+r.Message)
			}
		}
		return failing
	}
	if f := judge(fixture); len(f) > 0 {
		t.Fatalf("with the fixture's service.yaml and the solve's deployment.yaml, checks fail: %v", f)
	}
	made := 0
	for _, m := range mutant.Of(svc, mutant.Lab{Namespaces: []string{"gitops-lab"}}) {
		to := m.Edits[len(m.Edits)-1].To
		if to == nil {
			continue // a file removed is service-file's to judge
		}
		made++
		data, err := yaml.Marshal(to)
		if err != nil {
			t.Fatal(err)
		}
		if len(judge(data)) == 0 {
			t.Errorf("service.yaml with mutant %s: every check of the step passes\n%s", m.ID, mutant.Diff(m))
		}
	}
	if made < 4 {
		t.Fatalf("the catalogue makes %d mutants of the fixture's Service, want at least 4", made)
	}
}

// judgeWebMutants makes the mutants of the solve that took the cluster
// from start to end and requires each to fail one of step's checks that
// read the cluster, unless an alternative of step declares it right.
func judgeWebMutants(t *testing.T, root string, step *lab.Step, start, end []mutant.Object) {
	t.Helper()
	var cs []lab.Check
	for _, c := range step.Checks {
		if readsCluster(c) {
			cs = append(cs, c)
		}
	}
	declared := map[string]bool{}
	for _, a := range step.Alternatives {
		if a.Mutant != "" {
			declared[a.Mutant] = true
		}
	}
	judge := func(objs []mutant.Object) []string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var failing []string
		for _, r := range checks.Run(ctx, checks.Env{Root: root, Now: time.Now, Kube: modelCluster(objs)}, cs) {
			if r.Status != checks.Pass {
				failing = append(failing, r.Name+": "+r.Message)
			}
		}
		return failing
	}
	if f := judge(end); len(f) > 0 {
		t.Fatalf("step %s: after the solve, checks fail: %v", step.ID, f)
	}
	ms := mutant.Generate(start, end, []string{"gitops-lab"})
	if len(ms) == 0 {
		t.Fatalf("step %s: the solve makes no mutant", step.ID)
	}
	for _, m := range ms {
		if slices.ContainsFunc(m.Edits, func(e mutant.Edit) bool { return refused(e.To) }) {
			continue // not applicable, as the API server says
		}
		objs := slices.Clone(end)
		for _, e := range m.Edits {
			if e.From != nil {
				objs = slices.DeleteFunc(objs, func(o mutant.Object) bool { return mutant.Key(o) == mutant.Key(e.From) })
			}
			if e.To != nil {
				objs = append(objs, e.To)
			}
		}
		f := judge(objs)
		switch {
		case len(f) == 0 && !declared[m.ID]:
			t.Errorf("step %s: mutant %s: every check that reads the cluster passes\n%s", step.ID, m.ID, mutant.Diff(m))
		case len(f) > 0 && declared[m.ID]:
			t.Errorf("step %s: mutant %s is declared right, but fails %v", step.ID, m.ID, f)
		}
	}
}

// refused says whether the API server refuses to store o: a Deployment
// whose selector does not select its Pod template.
func refused(o mutant.Object) bool {
	if o == nil || mutant.Kind(o) != "Deployment" {
		return false
	}
	spec, _ := o["spec"].(map[string]any)
	sel, _ := spec["selector"].(map[string]any)
	want, _ := sel["matchLabels"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	md, _ := tmpl["metadata"].(map[string]any)
	got, _ := md["labels"].(map[string]any)
	for k, v := range want {
		if got[k] != v {
			return true
		}
	}
	return false
}

// readsCluster says whether c reads the cluster: a kube check, or a git
// or file check that compares with a kube reference.
func readsCluster(c lab.Check) bool {
	if c.Kube != nil {
		return true
	}
	for _, part := range []any{c.Git, c.File} {
		b, err := json.Marshal(part)
		if err == nil && strings.Contains(string(b), `"ref":"kube:`) {
			return true
		}
	}
	return false
}

// stored is a manifest as the API server stores it once applied in
// gitops-lab: the fields it sets, and the defaults and metadata the
// server adds.
func stored(manifest mutant.Object) mutant.Object {
	o := mutant.Copy(manifest)
	md := o["metadata"].(map[string]any)
	md["namespace"] = "gitops-lab"
	md["uid"] = "0b5c2a4e-0000-4000-8000-000000000001"
	md["resourceVersion"] = "1234"
	md["creationTimestamp"] = "2026-01-01T00:00:00Z"
	last, _ := json.Marshal(manifest)
	md["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": string(last)}
	spec := o["spec"].(map[string]any)
	defaults := func(m map[string]any, kv map[string]any) {
		for k, v := range kv {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
	}
	ports := func(ps any) {
		l, _ := ps.([]any)
		for _, p := range l {
			defaults(p.(map[string]any), map[string]any{"protocol": "TCP"})
		}
	}
	switch mutant.Kind(o) {
	case "Deployment":
		md["generation"] = float64(1)
		defaults(spec, map[string]any{
			"replicas": float64(1), "progressDeadlineSeconds": float64(600), "revisionHistoryLimit": float64(10),
			"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}},
		})
		pod := spec["template"].(map[string]any)["spec"].(map[string]any)
		defaults(pod, map[string]any{
			"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
			"securityContext": map[string]any{}, "terminationGracePeriodSeconds": float64(30),
		})
		for _, c := range pod["containers"].([]any) {
			cm := c.(map[string]any)
			defaults(cm, map[string]any{
				"imagePullPolicy": "IfNotPresent", "resources": map[string]any{},
				"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
			})
			ports(cm["ports"])
		}
		o["status"] = map[string]any{"replicas": spec["replicas"], "observedGeneration": float64(1)}
	case "Service":
		defaults(spec, map[string]any{
			"type": "ClusterIP", "clusterIP": "10.96.12.34", "clusterIPs": []any{"10.96.12.34"}, "sessionAffinity": "None",
			"internalTrafficPolicy": "Cluster", "ipFamilies": []any{"IPv4"}, "ipFamilyPolicy": "SingleStack",
		})
		ports(spec["ports"])
		o["status"] = map[string]any{"loadBalancer": map[string]any{}}
	}
	return o
}

// modelCluster serves objects to kube checks and references.
type modelCluster []mutant.Object

func (c modelCluster) Get(_ context.Context, apiVersion, kind, namespace, name string) (map[string]any, error) {
	for _, o := range c {
		if o["apiVersion"] == apiVersion && mutant.Kind(o) == kind && mutant.Namespace(o) == namespace && mutant.Name(o) == name {
			return mutant.Copy(o), nil
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: strings.ToLower(kind) + "s"}, name)
}

func gitopsStep(t *testing.T, l *lab.Lab, id string) *lab.Step {
	t.Helper()
	i := slices.IndexFunc(l.Steps, func(s lab.Step) bool { return s.ID == id })
	if i < 0 {
		t.Fatalf("the lab has no step %s", id)
	}
	return &l.Steps[i]
}
