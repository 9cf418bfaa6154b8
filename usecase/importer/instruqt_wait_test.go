package importer

import (
	"os"
	"strings"
	"testing"
)

// An Instruqt setup script that waits for the platform's host bootstrap
// and for a kubectl proxy (testdata/instruqt/multi-k8s-track) would wait
// forever in a lab, holding labctl up and labctl test until their
// timeout: both loops become no-ops, the rest of the script stays, and
// TODO.md says so.
func TestInstruqtSetupWaitsForNoBootstrap(t *testing.T) {
	script, err := os.ReadFile("testdata/instruqt/multi-k8s-track/setup-server-b")
	if err != nil {
		t.Fatal(err)
	}
	_, l, out := importTree(t, Instruqt, "multi-k8s-track", map[string]string{
		"track.yml":                    "slug: multi-k8s-track\ntitle: Multi K8s\n",
		"track_scripts/setup-server-b": string(script),
		"01-explore/assignment.md":     "---\nslug: explore\ntitle: Explore\n---\nRun `kubectl get pods`.\n",
		"01-explore/solve-server-b":    "#!/bin/bash\nkubectl get pods\n",
	})
	setup := l.Steps[0].Setup
	var run []string // the lines that run: no comment
	for _, line := range strings.Split(setup, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			run = append(run, line)
		}
	}
	for _, gone := range []string{"host-bootstrap-completed", "localhost:8001/api", "waiting for"} {
		if strings.Contains(strings.Join(run, "\n"), gone) {
			t.Errorf("setup still holds %q:\n%s", gone, setup)
		}
	}
	if !strings.Contains(setup, `echo "complete -F __start_kubectl k" >> /root/.bashrc`) {
		t.Errorf("setup lost the rest of the script:\n%s", setup)
	}
	todo := todoOf(t, out)
	for _, want := range []string{"waited for Instruqt's host bootstrap", "through a kubectl proxy on localhost:8001"} {
		if !strings.Contains(todo, want) {
			t.Errorf("TODO.md lacks %q:\n%s", want, todo)
		}
	}
}
