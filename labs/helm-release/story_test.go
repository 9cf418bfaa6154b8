package helmrelease_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/checks/checkstest"
	"github.com/labctl/labctl/lab"
)

// The helm-release lab lives in labs/helm-release; `labctl test` proves it
// on a cluster with the sandbox's helm. These tests need none: the lab
// loads and lints clean, every step is complete, its chart runs the lab's
// own image and is in its fixtures, and the grader reads only the
// release's objects and Helm's records of it, each by name.
const helmLab = "lab.yaml"

func TestHelmLabLoads(t *testing.T) {
	l, err := lab.Load(helmLab)
	if err != nil {
		t.Fatalf("loading %s: %v", helmLab, err)
	}
	for _, w := range l.Lint() {
		t.Error(w)
	}
	if l.Metadata.Name != "helm-release" || l.Metadata.Language != "en" {
		t.Errorf("metadata = %+v, want the name helm-release in English", l.Metadata)
	}
	want := []lab.Image{{Name: "labctl.local/helm-release-web:1", Build: "images/web"}}
	if !slices.Equal(l.Cluster.Images, want) {
		t.Errorf("cluster.images = %+v, want %+v", l.Cluster.Images, want)
	}
	if ids := stepIDs(l); !slices.Equal(ids, []string{"install", "upgrade", "rollback"}) {
		t.Errorf("steps %v, want install, upgrade, rollback", ids)
	}
	for _, s := range l.Steps {
		checkstest.RequireCompleteStep(t, s)
		for _, m := range s.Mistakes {
			if strings.TrimSpace(m.Recover) == "" {
				t.Errorf("step %s mistake %s has no recover script", s.ID, m.Name)
			}
		}
	}
	// Exactly what a release is: its Deployment, its ConfigMap and Helm's
	// records of the two revisions the rollback supersedes, read by name;
	// never a list of the namespace's Secrets.
	var reads []string
	for _, r := range l.KubeReads() {
		if r.List {
			t.Errorf("the grader lists %s %s in %s; the lab reads every object by name", r.APIVersion, r.Kind, r.Namespace)
		}
		reads = append(reads, r.Kind+" "+r.Namespace+"/"+r.Name)
	}
	slices.Sort(reads)
	if want := []string{"ConfigMap shop/web", "Deployment shop/web", "Secret shop/sh.helm.release.v1.web.v1", "Secret shop/sh.helm.release.v1.web.v2"}; !slices.Equal(reads, want) {
		t.Errorf("the grader reads %q, want %q", reads, want)
	}
}

func stepIDs(l *lab.Lab) []string {
	var ids []string
	for _, s := range l.Steps {
		ids = append(ids, s.ID)
	}
	return ids
}

// TestHelmLabChart: the chart every script installs is in the lab's
// fixtures, and its Deployment runs the image the lab builds, which the
// node has (never pulled).
func TestHelmLabChart(t *testing.T) {
	dir := "fixtures/charts/web"
	for _, f := range []string{"Chart.yaml", "values.yaml", "templates/configmap.yaml", "templates/deployment.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the chart lacks %s: %v", f, err)
		}
	}
	values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^  repository: labctl\.local/helm-release-web\n  tag: "1"$`).Match(values) {
		t.Errorf("values.yaml does not name the lab's image labctl.local/helm-release-web:1:\n%s", values)
	}
	deployment, err := os.ReadFile(filepath.Join(dir, "templates/deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(deployment), "imagePullPolicy: IfNotPresent") {
		t.Error("the chart's Deployment may pull its image: give it imagePullPolicy IfNotPresent")
	}
	data, err := os.ReadFile(helmLab)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`helm (?:install|upgrade|template)(?: --install)? web (\S+)`).FindAllSubmatch(data, -1) {
		if string(m[1]) != "/opt/lab/fixtures/charts/web" {
			t.Errorf("a script installs the chart %s, not the fixtures' /opt/lab/fixtures/charts/web", m[1])
		}
	}
}
