//go:build e2e

package labtest

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/grading/report"
)

// These tests build the real labctl and run `labctl test` as a subprocess
// against Docker and kind. They need the labctl node and sandbox images
// (`labctl images`) and take minutes: go test -tags e2e -timeout 60m ./labtest/

// labctl runs the binary with its own state directory and an empty
// configuration, and returns the exit code and both streams.
func labctl(t *testing.T, bin string, timeout time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return e2etest.NewLabctl(t, bin, "", t.TempDir(), "LABCTL_CONFIG="+config, "NO_COLOR=1").Run(ctx, args...)
}

func TestE2EShippedLabProvesItself(t *testing.T) {
	bin := e2etest.BuildLabctl(t)
	began := time.Now()
	code, out, errOut := labctl(t, bin, 45*time.Minute, "--lab", "../../lab.yaml", "test", "-o", "json")
	t.Logf("labctl test of the shipped lab took %s; stderr:\n%s", time.Since(began).Round(time.Second), errOut)
	var rep struct {
		Passed     bool             `json:"passed"`
		Graded     bool             `json:"graded"`
		Score      int              `json:"score"`
		MaxScore   int              `json:"maxScore"`
		Resets     int              `json:"resets"`
		Kept       int              `json:"sandboxesKept"`
		Restored   int              `json:"stepStartsRestored"`
		Undone     int              `json:"undoneInPlace"`
		UndoMs     int64            `json:"undoMs"`
		ResetMs    int64            `json:"resetMs"`
		ResetParts map[string]int64 `json:"resetPartsMs"`
		DurationMs int64            `json:"durationMs"`
		Phases     []Phase          `json:"phases"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d; stdout is not the JSON report: %v\n%s", code, err, out)
	}
	t.Logf("test run %dms, %d cases undone in place taking %dms, %d resets taking %dms (by part, ms: %v), %d keeping the sandbox, %d going back to the step's start",
		rep.DurationMs, rep.Undone, rep.UndoMs, rep.Resets, rep.ResetMs, rep.ResetParts, rep.Kept, rep.Restored)
	if code != 0 || !rep.Passed {
		for _, p := range rep.Phases {
			for _, f := range p.Failures {
				t.Errorf("%s", f)
			}
		}
		t.Fatalf("exit %d, passed %t; want 0 and true", code, rep.Passed)
	}
	if !rep.Graded || rep.MaxScore == 0 || rep.Score != rep.MaxScore {
		t.Errorf("grade %d/%d (graded %t), want 100 %%", rep.Score, rep.MaxScore, rep.Graded)
	}
	// Every reset but the first keeps the sandbox: the lab's scripts change
	// only /root, and nothing of theirs is left running. A reset after a
	// mistake that changed only files goes back to the step's kept start.
	if rep.Resets > 0 && rep.Kept+rep.Restored != rep.Resets-1 {
		t.Errorf("%d of %d resets kept the sandbox, restoring /root in place, and %d went back to the step's start; want all but the first",
			rep.Kept, rep.Resets, rep.Restored)
	}
	t.Run("cases undone in place", func(t *testing.T) {
		// The lab's cases change files and objects of its namespace, and
		// each is undone in place; the next then runs from the step's
		// start, or it would not be what the report says: deployment-only
		// makes the Deployment web, and the mistake after it names
		// deployment-exists, which fails only if web is gone again.
		undone, fellBack := 0, 0
		var afterDeploymentOnly *Phase
		for i, p := range rep.Phases {
			switch {
			case p.Kind == Undo && p.Note == "":
				undone++
				if i+1 < len(rep.Phases) && p.Step == "apply" && p.Script == "mistake deployment-only" {
					afterDeploymentOnly = &rep.Phases[i+1]
				}
			case p.Kind == Reset:
				fellBack++
				if !strings.HasPrefix(p.Note, "not undone in place: ") {
					t.Errorf("the reset after a case in step %s does not say why the case was not undone in place: %q", p.Step, p.Note)
				}
			}
		}
		if undone != rep.Undone {
			t.Errorf("%d undo phases without a note, %d cases undone in place in the report", undone, rep.Undone)
		}
		if rep.Undone < 60 || fellBack > 15 {
			t.Errorf("%d cases undone in place and %d reset in full; want most undone in place", rep.Undone, fellBack)
		}
		if afterDeploymentOnly == nil {
			t.Fatal("mistake deployment-only of step apply was not undone in place")
		}
		if !afterDeploymentOnly.Passed || afterDeploymentOnly.Script != "mistake dry-run-output-saved" {
			t.Errorf("the case after deployment-only's undo: %s, passed %t; want mistake dry-run-output-saved, passed",
				afterDeploymentOnly.Script, afterDeploymentOnly.Passed)
		}
	})
	if last := rep.Phases[len(rep.Phases)-1].Kind; last != FinalReset {
		t.Errorf("the last phase is %s, want %s", last, FinalReset)
	}
}

func TestE2EBrokenLabFails(t *testing.T) {
	bin := e2etest.BuildLabctl(t)
	began := time.Now()
	code, out, errOut := labctl(t, bin, 30*time.Minute, "--lab", "../../testdata/broken-lab/lab.yaml", "test")
	t.Logf("labctl test of the broken lab took %s; exit %d\nstdout:\n%s\nstderr:\n%s", time.Since(began).Round(time.Second), code, out, errOut)
	if code != 1 {
		t.Errorf("exit %d, want 1 (the lab does not prove itself)", code)
	}
	for _, want := range []string{
		// (a) a check that can never pass
		"step manifests: solve: check replicas-explicit: failed: ",
		// (b) a mistake that is not caught
		"step init-repo: mistake global-identity: check local-identity: passed, so the mistake is not caught",
		"FAIL: lab gitops-broken-test: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	// What works is not reported as broken.
	for _, unwanted := range []string{"mistake no-commit: check", "mistake service-missing: check"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("the report blames a sound mistake: %q", unwanted)
		}
	}
	if !strings.Contains(errOut, "lab gitops-broken does not prove itself") {
		t.Errorf("stderr does not end with the verdict")
	}
}

func TestE2EOneStepOfTheBrokenLab(t *testing.T) {
	bin := e2etest.BuildLabctl(t)
	code, out, errOut := labctl(t, bin, 30*time.Minute, "--lab", "../../testdata/broken-lab/lab.yaml", "test", "--step", "manifests", "-o", "junit")
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	var doc report.JUnitSuites
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("stdout is not JUnit XML: %v", err)
	}
	// Fast-forward, before, the mistake, its reset, the solve, the pause:
	// only the solve fails; init-repo's uncaught mistake is not run.
	if doc.Tests != 6 || doc.Failures != 1 || len(doc.Suites) != 1 || doc.Suites[0].Name != "manifests" {
		t.Fatalf("%d tests, %d failures in %d suites; want 6 and 1 in suite manifests", doc.Tests, doc.Failures, len(doc.Suites))
	}
	for _, c := range doc.Suites[0].Cases {
		if c.Failure != nil && !strings.Contains(c.Failure.Text, "check replicas-explicit") {
			t.Errorf("case %q fails with %q", c.Name, c.Failure.Text)
		}
	}
}
