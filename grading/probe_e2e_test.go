//go:build e2e

package grading_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/cmd/labctl/e2etest"

	"github.com/labctl/labctl/lab"
)

// probeLabName keeps this test's lab apart from the other tests' labs.
const probeLabName = "probe-e2e"

// TestE2EProbe checks the GitOps lab's last step through its probe on a
// real cluster: the probe scales web to 4 with the admin identity, runs the
// learner's sync.sh in the sandbox, and the checks judge what it did. A
// sync.sh that only names its commands, with a report typed by hand, fails;
// the lab's solve passes, in grade (judged then) and in check; and each time the restore
// leaves web as it was before the probe.
func TestE2EProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := e2etest.BuildLabctl(t)
	labFile, l := e2etest.CopyLab(t, dir, probeLabName)
	step := l.Steps[len(l.Steps)-1]
	if step.ID != "sync-script" || step.Probe == nil {
		t.Fatalf("the lab's last step %s has no probe", step.ID)
	}
	var fake string
	for _, m := range step.Mistakes {
		if m.Name == "names-only" {
			fake = m.Script
		}
	}
	if fake == "" {
		t.Fatal("the step has no mistake names-only")
	}
	r := &labctlRun{e2etest.NewLabctl(t, bin, labFile, filepath.Join(dir, "state"), "LANG=en_US.UTF-8", "LC_ALL=", "LC_MESSAGES=")}
	r.UpFresh(ctx)
	if code, _, _ := r.Run(ctx, "reset", "--no-backup", "--to", step.ID); code != 0 {
		t.Fatalf("reset --to %s exited %d", step.ID, code)
	}
	replicas := func(when string) {
		t.Helper()
		code, out, _ := r.Run(ctx, "exec", "--", "kubectl", "-n", "gitops-lab", "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")
		if code != 0 || strings.TrimSpace(out) != "3" {
			t.Errorf("web's replicas %s: %q (exit %d), want 3 as before the probe", when, out, code)
		}
	}
	replicas("before any probe")

	// No sync.sh: the probe is skipped and changes nothing.
	code, out, _ := r.Run(ctx, "check", step.ID)
	if code != 1 || !strings.Contains(out, "was not run, because these checks must pass first: script-executable") {
		t.Errorf("check without sync.sh: exit %d, want 1 with the probe skipped", code)
	}

	// A sync.sh that only names its commands, and a report typed by hand.
	if code, _, _ := r.Run(ctx, "exec", "--", "bash", "-l", "-c", fake); code != 0 {
		t.Fatalf("the fake sync.sh could not be written: exit %d", code)
	}
	code, out, _ = r.Run(ctx, "check", step.ID)
	if code != 1 {
		t.Errorf("check of a fake sync.sh: exit %d, want 1", code)
	}
	for _, want := range []string{"✗ web-synced", "✗ report-fresh", "✓ report-commit", "✓ probe"} {
		if !strings.Contains(out, want) {
			t.Errorf("check of a fake sync.sh lacks %q", want)
		}
	}
	replicas("after the probe of a fake sync.sh")

	// The lab's own solve passes through the probe, in grade (the step not
	// passed yet, the grade judges it now) and in check.
	if code, _, _ := r.Run(ctx, "exec", "--", "bash", "-l", "-c", step.Solve); code != 0 {
		t.Fatalf("the solve exited %d", code)
	}
	code, out, _ = r.Run(ctx, "grade", "-o", "json")
	var rep struct {
		Passed bool
		Steps  []struct {
			ID     string
			Checks []struct {
				Name, Status, Message string
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("grade -o json: %v", err)
	}
	if code != 0 || !rep.Passed {
		t.Errorf("grade after every solve: exit %d, passed %v", code, rep.Passed)
	}
	found := false
	for _, s := range rep.Steps {
		for _, c := range s.Checks {
			if s.ID == step.ID && c.Name == lab.ProbeResult {
				found = true
				if c.Status != "pass" || !strings.Contains(c.Message, "/root/gitops/sync.sh exited with status 0") {
					t.Errorf("the grade's probe result: %+v", c)
				}
			}
		}
	}
	if !found {
		t.Error("the grade reports no probe result for the step")
	}
	replicas("after the grade")
	if code, _, _ := r.Run(ctx, "check", step.ID); code != 0 {
		t.Errorf("check after the solve: exit %d, want 0", code)
	}
	replicas("after the probe of the solve")
}
