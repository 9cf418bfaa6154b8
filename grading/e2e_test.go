//go:build e2e

package grading_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/cmd/labctl/e2etest"

	"github.com/labctl/labctl/grading/progress"
)

// e2eLabName keeps this test's cluster, sandbox and volume apart from the
// default lab's and from other tests' labs.
const e2eLabName = "grade-e2e"

// labctlRun runs the labctl binary on a test's lab.
type labctlRun struct{ *e2etest.Labctl }

// with is r reporting to t (a subtest).
func (r *labctlRun) with(t *testing.T) *labctlRun { return &labctlRun{r.Labctl.With(t)} }

// TestE2EGradeFlow drives the real labctl binary against a real lab: each
// step fails before its solve script and passes after it; work after the
// last step (a tidy commit, a drift undone by apply) takes no step back,
// each step's results being kept from the round in which it passed; the
// grade is 100 %, and a reset brings the first step back to failing with
// the learner's /root saved.
func TestE2EGradeFlow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := e2etest.BuildLabctl(t)
	labFile, l := e2etest.CopyLab(t, dir, e2eLabName)
	state := filepath.Join(dir, "state")
	r := &labctlRun{e2etest.NewLabctl(t, bin, labFile, state, "LANG=C.UTF-8", "LC_ALL=", "LC_MESSAGES=")}

	r.UpFresh(ctx)

	for i, s := range l.Steps {
		if !s.PassesInitially {
			code, out, _ := r.Run(ctx, "check")
			if code != 1 || !strings.Contains(out, "✗") {
				t.Fatalf("step %d %s before its solve: exit %d, want 1 with a ✗", i+1, s.ID, code)
			}
		}
		if code, _, _ := r.Run(ctx, "exec", "--", "bash", "-l", "-c", s.Solve); code != 0 {
			t.Fatalf("the solve script of %s exited %d", s.ID, code)
		}
		code, out, _ := r.Run(ctx, "check")
		if code != 0 {
			t.Fatalf("step %d %s after its solve: exit %d, want 0", i+1, s.ID, code)
		}
		if i+1 < len(l.Steps) && !strings.Contains(out, l.Steps[i+1].Title) {
			t.Errorf("after step %s the next step's title %q is not shown", s.ID, l.Steps[i+1].Title)
		}
	}
	p, err := progress.NewStore(filepath.Join(state, e2eLabName)).Load(e2eLabName)
	if err != nil || !p.Done(l) {
		t.Fatalf("progress after every step: %+v, %v", p, err)
	}

	// Work after the last step that would take steps back if the grade
	// judged them again: a tidy commit touching deployment.yaml whose
	// message does not say replicas (step 5's last commit touching it), and
	// a drift made by hand and undone by apply.
	if code, out, errOut := r.Run(ctx, "exec", "--", "bash", "-l", "-c", `set -e
cd /root/gitops/repo
sed -i '1i # web: the shop front' apps/web/deployment.yaml
git commit -q -am "Describe the web manifest"
kubectl scale deploy web -n gitops-lab --replicas=4 >/dev/null
kubectl apply -n gitops-lab -f apps/web/ >/dev/null`); code != 0 {
		t.Fatalf("the tidy commit and the drift: exit %d\n%s%s", code, out, errOut)
	}

	code, out, _ := r.Run(ctx, "grade", "-o", "json")
	var rep struct {
		SchemaVersion   int
		Score, MaxScore int
		Passed          bool
		Lab             struct{ Name, Digest string }
		Steps           []struct {
			ID       string
			Passed   bool
			PassedAt string
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("grade -o json: %v", err)
	}
	if code != 0 || !rep.Passed || rep.Score != rep.MaxScore || rep.MaxScore == 0 || len(rep.Steps) != len(l.Steps) {
		t.Fatalf("grade: exit %d, passed %v, score %d/%d, %d steps", code, rep.Passed, rep.Score, rep.MaxScore, len(rep.Steps))
	}
	if rep.SchemaVersion != 1 || rep.Lab.Name != e2eLabName || !strings.HasPrefix(rep.Lab.Digest, "sha256:") {
		t.Errorf("report header: %+v", rep)
	}
	for _, st := range rep.Steps {
		if st.PassedAt == "" {
			t.Errorf("step %s was judged again, not kept from the round in which it passed", st.ID)
		}
	}
	junit := filepath.Join(dir, "report.xml")
	if code, _, _ := r.Run(ctx, "grade", "-o", "junit", "--output-file", junit); code != 0 {
		t.Errorf("grade -o junit exited %d", code)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
	}
	if b, err := os.ReadFile(junit); err != nil || xml.Unmarshal(b, &suites) != nil || suites.Tests == 0 || suites.Failures+suites.Errors != 0 {
		t.Errorf("JUnit report: %+v, %v", suites, err)
	}

	code, out, _ = r.Run(ctx, "reset")
	if code != 0 {
		t.Fatalf("reset exited %d", code)
	}
	backup := regexp.MustCompile(`\S+/backups/root-\d{8}T\d{6}Z\.tar`).FindString(out)
	if backup == "" {
		t.Fatalf("reset did not say where /root was saved:\n%s", out)
	}
	if _, ok := e2etest.TarEntry(t, backup, "root/gitops/repo/README.md"); !ok {
		t.Errorf("the backup %s lacks the learner's repository", backup)
	}
	if code, _, _ := r.Run(ctx, "check"); code != 1 {
		t.Errorf("step 1 after reset: exit %d, want 1", code)
	}

	// reset --to replays the earlier steps' solve scripts.
	if len(l.Steps) >= 3 {
		to := l.Steps[2]
		if code, _, _ := r.Run(ctx, "reset", "--to", to.ID); code != 0 {
			t.Fatalf("reset --to %s exited %d", to.ID, code)
		}
		if code, _, _ := r.Run(ctx, "check", l.Steps[1].ID); code != 0 {
			t.Errorf("step %s after reset --to %s: exit %d, want 0", l.Steps[1].ID, to.ID, code)
		}
		p, _ := progress.NewStore(filepath.Join(state, e2eLabName)).Load(e2eLabName)
		if cur, _ := p.CurrentStep(l); cur == nil || cur.ID != to.ID {
			t.Errorf("after reset --to %s the learner is at %v", to.ID, cur)
		}
	}

	// A learner who works through labctl exec does the apply step and the
	// change step before checking: the change's commit counts, being made
	// after the commit step passed; its apply, made before labctl saw the
	// step begin, cannot be told and is asked for again, never failed.
	t.Run("work ahead of labctl check", func(t *testing.T) {
		r := r.with(t)
		commit, apply, change := l.Steps[2], l.Steps[3], l.Steps[4]
		if code, _, _ := r.Run(ctx, "exec", "--", "bash", "-l", "-c", commit.Solve); code != 0 {
			t.Fatalf("the solve script of %s exited %d", commit.ID, code)
		}
		if code, out, _ := r.Run(ctx, "check"); code != 0 {
			t.Fatalf("step %s: exit %d\n%s", commit.ID, code, out)
		}
		if code, _, _ := r.Run(ctx, "exec", "--", "bash", "-l", "-c", apply.Solve+"\n"+change.Solve); code != 0 {
			t.Fatalf("the solve scripts of %s and %s exited %d", apply.ID, change.ID, code)
		}
		if code, out, _ := r.Run(ctx, "check"); code != 0 {
			t.Fatalf("step %s: exit %d\n%s", apply.ID, code, out)
		}
		code, out, _ := r.Run(ctx, "check")
		if code != 2 || !strings.Contains(out, "✓ commit-on-top") || strings.Contains(out, "✗") {
			t.Fatalf("step %s done before its start was seen: exit %d, want 2 (could not tell), commit-on-top passed, nothing failed\n%s", change.ID, code, out)
		}
		if !strings.Contains(out, "--server-side") {
			t.Errorf("step %s could not tell without saying how to apply again:\n%s", change.ID, out)
		}
		if code, _, _ := r.Run(ctx, "exec", "--", "kubectl", "apply", "--server-side", "-n", "gitops-lab", "-f", "/root/gitops/repo/apps/web/"); code != 0 {
			t.Fatalf("applying again exited %d", code)
		}
		if code, out, _ := r.Run(ctx, "check"); code != 0 {
			t.Errorf("step %s applied again: exit %d, want 0\n%s", change.ID, code, out)
		}
	})

	// reset --hard brings everything up anew, the lab's namespaces included.
	code, out, _ = r.Run(ctx, "reset", "--hard")
	if code != 0 {
		t.Fatalf("reset --hard exited %d", code)
	}
	if regexp.MustCompile(`\S+/backups/root-\d{8}T\d{6}Z\.tar`).FindString(out) == "" {
		t.Errorf("reset --hard did not say where /root was saved:\n%s", out)
	}
	if code, _, _ := r.Run(ctx, "check"); code != 1 {
		t.Errorf("step 1 after reset --hard: exit %d, want 1", code)
	}
	for _, ns := range l.Cluster.Namespaces {
		if code, _, _ := r.Run(ctx, "exec", "--", "kubectl", "get", "namespace", ns); code != 0 {
			t.Errorf("namespace %s after reset --hard: kubectl exited %d", ns, code)
		}
	}
}
