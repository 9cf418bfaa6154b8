//go:build e2e

package grading_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/internal/e2etest"

	"github.com/labctl/labctl/internal/progress"
	"github.com/labctl/labctl/lab"
)

// e2eLabName keeps this test's cluster, sandbox and volume apart from the
// default lab's and from other tests' labs.
const e2eLabName = "grade-e2e"

type labctlRun struct {
	t      *testing.T
	bin    string
	labArg string
	env    []string
}

func (r *labctlRun) run(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	r.t.Helper()
	cmd := exec.CommandContext(ctx, r.bin, append([]string{"--lab", r.labArg}, args...)...)
	cmd.Env = r.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		r.t.Fatalf("labctl %v: %v", args, err)
	}
	r.t.Logf("labctl %s → %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	return code, out.String(), errOut.String()
}

// copyLab copies the default lab and its fixtures into dir under the name
// e2eLabName.
func copyLab(t *testing.T, root, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	renamed := regexp.MustCompile(`(?m)^  name: gitops-drift$`).ReplaceAll(b, []byte("  name: "+e2eLabName))
	if bytes.Equal(renamed, b) {
		t.Fatal("lab.yaml has no `  name: gitops-drift` line to rename")
	}
	labFile := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(labFile, renamed, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(root, "fixtures"), filepath.Join(dir, "fixtures")).CombinedOutput(); err != nil {
		t.Fatalf("copying fixtures: %v\n%s", err, out)
	}
	return labFile
}

// renamedLab copies the repository's lab into dir under another name, so a
// test's cluster, sandbox and volume stay apart from every other lab's, and
// loads it.
func renamedLab(t *testing.T, root, dir, name string) (string, *lab.Lab) {
	t.Helper()
	labFile := copyLab(t, root, dir)
	b, err := os.ReadFile(labFile)
	if err != nil {
		t.Fatal(err)
	}
	renamed := bytes.Replace(b, []byte("\n  name: "+e2eLabName+"\n"), []byte("\n  name: "+name+"\n"), 1)
	if bytes.Equal(renamed, b) {
		t.Fatalf("the copied lab.yaml has no `  name: %s` line to rename", e2eLabName)
	}
	if err := os.WriteFile(labFile, renamed, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := lab.Load(labFile)
	if err != nil {
		t.Fatal(err)
	}
	return labFile, l
}

// upUntilCleanup brings the lab up from nothing (a home kept by an earlier
// run's `down` is purged first) and takes it down, home included, when the
// test ends, unless LABCTL_E2E_KEEP is set.
func upUntilCleanup(ctx context.Context, t *testing.T, r *labctlRun) {
	t.Helper()
	if code, _, _ := r.run(ctx, "down", "--purge", "--no-backup"); code != 0 {
		t.Fatalf("labctl down --purge exited %d", code)
	}
	if code, _, _ := r.run(ctx, "up"); code != 0 {
		t.Fatalf("labctl up exited %d", code)
	}
	t.Cleanup(func() {
		if os.Getenv("LABCTL_E2E_KEEP") != "" {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		r.run(ctx, "down", "--purge", "--no-backup")
	})
}

// TestE2EGradeFlow drives the real labctl binary against a real lab: each
// step fails before its solve script and passes after it, the grade is
// 100 %, and a reset brings the first step back to failing with the
// learner's /root saved.
func TestE2EGradeFlow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	root := e2etest.Root(t)
	dir := t.TempDir()
	bin := e2etest.BuildLabctl(t)
	labFile := copyLab(t, root, dir)
	l, err := lab.Load(labFile)
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	r := &labctlRun{t: t, bin: bin, labArg: labFile,
		env: append(os.Environ(), "LABCTL_STATE_DIR="+state, "LANG=C.UTF-8", "LC_ALL=", "LC_MESSAGES=")}

	upUntilCleanup(ctx, t, r)

	for i, s := range l.Steps {
		if !s.PassesInitially {
			code, out, _ := r.run(ctx, "check")
			if code != 1 || !strings.Contains(out, "✗") {
				t.Fatalf("step %d %s before its solve: exit %d, want 1 with a ✗", i+1, s.ID, code)
			}
		}
		if code, _, _ := r.run(ctx, "exec", "--", "bash", "-l", "-c", s.Solve); code != 0 {
			t.Fatalf("the solve script of %s exited %d", s.ID, code)
		}
		code, out, _ := r.run(ctx, "check")
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

	code, out, _ := r.run(ctx, "grade", "-o", "json")
	var rep struct {
		SchemaVersion   int
		Score, MaxScore int
		Passed          bool
		Lab             struct{ Name, Digest string }
		Steps           []struct {
			ID     string
			Passed bool
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
	junit := filepath.Join(dir, "report.xml")
	if code, _, _ := r.run(ctx, "grade", "-o", "junit", "--output", junit); code != 0 {
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

	code, out, _ = r.run(ctx, "reset")
	if code != 0 {
		t.Fatalf("reset exited %d", code)
	}
	backup := regexp.MustCompile(`\S+/backups/root-\d{8}T\d{6}Z\.tar`).FindString(out)
	if backup == "" {
		t.Fatalf("reset did not say where /root was saved:\n%s", out)
	}
	if !tarHas(t, backup, "root/gitops/repo/README.md") {
		t.Errorf("the backup %s lacks the learner's repository", backup)
	}
	if code, _, _ := r.run(ctx, "check"); code != 1 {
		t.Errorf("step 1 after reset: exit %d, want 1", code)
	}

	// reset --to replays the earlier steps' solve scripts.
	if len(l.Steps) >= 3 {
		to := l.Steps[2]
		if code, _, _ := r.run(ctx, "reset", "--to", to.ID); code != 0 {
			t.Fatalf("reset --to %s exited %d", to.ID, code)
		}
		if code, _, _ := r.run(ctx, "check", l.Steps[1].ID); code != 0 {
			t.Errorf("step %s after reset --to %s: exit %d, want 0", l.Steps[1].ID, to.ID, code)
		}
		p, _ := progress.NewStore(filepath.Join(state, e2eLabName)).Load(e2eLabName)
		if cur, _ := p.CurrentStep(l); cur == nil || cur.ID != to.ID {
			t.Errorf("after reset --to %s the learner is at %v", to.ID, cur)
		}
	}

	// reset --hard brings everything up anew, the lab's namespaces included.
	code, out, _ = r.run(ctx, "reset", "--hard")
	if code != 0 {
		t.Fatalf("reset --hard exited %d", code)
	}
	if regexp.MustCompile(`\S+/backups/root-\d{8}T\d{6}Z\.tar`).FindString(out) == "" {
		t.Errorf("reset --hard did not say where /root was saved:\n%s", out)
	}
	if code, _, _ := r.run(ctx, "check"); code != 1 {
		t.Errorf("step 1 after reset --hard: exit %d, want 1", code)
	}
	for _, ns := range l.Cluster.Namespaces {
		if code, _, _ := r.run(ctx, "exec", "--", "kubectl", "get", "namespace", ns); code != 0 {
			t.Errorf("namespace %s after reset --hard: kubectl exited %d", ns, code)
		}
	}
}

func tarHas(t *testing.T, path, name string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.Fatalf("reading %s: %v", path, err)
		}
		if strings.TrimPrefix(h.Name, "./") == name {
			return true
		}
	}
}
