package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// probeClass is the two-steps class lab with an audit check and a probe.
const probeClass = "testdata/probe-class/lab.yaml"

// fakeInvited is a learner's sandbox reached with an invite: their fake
// lab, on which the checks only the instructor can judge come back as
// errors, as an invite's live lab (provision/class) makes them.
type fakeInvited struct {
	*fakeLab
	learner, labName string
	used             *lab.Lab
}

func (f *fakeInvited) Learner() string   { return f.learner }
func (f *fakeInvited) LabName() string   { return f.labName }
func (f *fakeInvited) UseLab(l *lab.Lab) { f.used = l }

func (f *fakeInvited) RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	cs := r.Checks
	rs, err := f.fakeLab.RunChecks(ctx, r)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		if grading.InstructorOnly(&cs[i]) {
			rs[i].Status, rs[i].Message = checks.Error, "checked by your instructor's labctl"
		}
	}
	return rs, nil
}

func (f *fakeInvited) RunAdminScript(context.Context, string, io.Writer) (int, error) {
	return -1, provision.ErrInstructorOnly
}

func (f *fakeInvited) LearnerConfig(context.Context) (*rest.Config, error) {
	return nil, provision.ErrInstructorOnly
}

// OpenInvite reads an invite as fakeClass.Invite writes it and reaches the
// learner's fake lab.
func (f *fakeEnv) OpenInvite(_ context.Context, kubeconfig []byte) (invitedLab, error) {
	f.called("open invite")
	for _, line := range strings.Split(string(kubeconfig), "\n") {
		parts := strings.Split(strings.TrimPrefix(line, "current-context: "), ":")
		if len(parts) != 3 || parts[0] != "labctl" || f.class == nil || f.class.learners[parts[2]] == nil {
			continue
		}
		f.class.invited = &fakeInvited{fakeLab: f.class.learners[parts[2]].lab, labName: parts[1], learner: parts[2]}
		return f.class.invited, nil
	}
	return nil, fmt.Errorf("this file is not a labctl invite: ask your instructor for the file `labctl class invite` wrote")
}

// inviteFile writes alice's invite of the two-steps lab.
func inviteFile(t *testing.T, c *fakeClass) string {
	t.Helper()
	b, _, err := c.Invite(context.Background(), "alice", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "alice.kubeconfig")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestInviteNamesItsLab(t *testing.T) {
	isolate(t)
	c := classOf(t, "hello", "alice")
	file := inviteFile(t, c)
	notInvite := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(notInvite, []byte("apiVersion: v1\nkind: Config\ncurrent-context: kind-kind\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"shell", "ui"} {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--lab", "gitops-drift", cmd, "--invite", file}, "the invite is for lab two-steps, but --lab gitops-drift is lab gitops-drift: give the lab two-steps, or leave --lab out"},
			{[]string{cmd, "--invite", file}, "the invite is for lab two-steps: --lab two-steps: no lab has that name"},
			{[]string{cmd, "--invite", notInvite}, "this file is not a labctl invite"},
			{[]string{cmd, "--invite", file + ".missing"}, "reading the invite: open " + file + ".missing"},
		} {
			env := &fakeEnv{class: c}
			code, out, errOut := runFake(t, env, tc.args...)
			want{code: 2, noOut: true, errOut: []string{tc.want}}.check(t, env, tc.args, code, out, errOut)
			if strings.Contains(errOut, "Connected to your sandbox") {
				t.Errorf("%v: the status line came before the error:\n%s", tc.args, errOut)
			}
		}
	}
	// The invite's lab, installed, is the lab without --lab; the shell
	// then needs a terminal.
	dir := filepath.Join(os.Getenv("LABCTL_LABS_DIR"), "two-steps")
	b, err := os.ReadFile(probeClass)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lab.yaml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	env := &fakeEnv{class: c}
	code, out, errOut := runFake(t, env, "shell", "--invite", file)
	want{code: 2, noOut: true, errOut: []string{"labctl shell needs a terminal"}}.check(t, env, nil, code, out, errOut)
	if c.invited.used == nil || c.invited.used.Metadata.Name != "two-steps" || len(c.invited.used.Steps[0].Checks) != 2 {
		t.Errorf("the invite was not given the installed lab: %+v", c.invited.used)
	}
}

// labctl ui --invite shows the learner's sandbox on the practice lab: the
// checks only the instructor judges are optional, no probe runs, the
// progress is the learner's own under invite/LEARNER, and the page has no
// previews, which it says once.
func TestUIInvite(t *testing.T) {
	isolate(t)
	opened := noBrowser(t)
	c := classOf(t, "goodbye", "alice")
	c.learners["alice"] = &fakeLearner{lab: solved(t, probeClass, "goodbye")}
	env := &fakeEnv{class: c}
	s := serveAt(t, env, opened, "/", "--lab", probeClass, "ui", "--invite", inviteFile(t, c))
	jar, _ := cookiejar.New(nil)
	if code, _ := browse(t, jar, s.url); code != http.StatusOK {
		t.Fatalf("the page: %d", code)
	}
	base := s.url[:strings.Index(s.url, "/?")]
	if code, body := browse(t, jar, base+"/api/previews"); code != http.StatusOK || strings.TrimSpace(body) != "[]" {
		t.Errorf("/api/previews: %d %s", code, body)
	}

	type checkDoc struct {
		Passed bool `json:"passed"`
		Checks []struct {
			Name     string `json:"name"`
			Status   string `json:"status"`
			Optional bool   `json:"optional"`
		} `json:"checks"`
	}
	check := func(step string) checkDoc {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+"/api/check", strings.NewReader(`{"step":"`+step+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", base)
		resp, err := (&http.Client{Jar: jar, Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var doc checkDoc
		if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("check %s: %d, %v", step, resp.StatusCode, err)
		}
		return doc
	}
	doc := check("hello")
	if !doc.Passed || len(doc.Checks) != 2 || doc.Checks[1].Name != "pods-untouched" || !doc.Checks[1].Optional || doc.Checks[1].Status != "error" {
		t.Errorf("hello on the practice lab: %+v", doc)
	}
	c.learners["alice"].lab.ran["echo bye > /root/bye.txt"] = true
	doc = check("goodbye")
	if !doc.Passed || len(doc.Checks) != 2 || !doc.Checks[1].Optional {
		t.Errorf("goodbye on the practice lab: %+v", doc)
	}
	if c.learners["alice"].lab.ran["/root/sync.sh"] {
		t.Error("the invited page ran the step's probe")
	}
	if code := s.stop(); code != 0 {
		t.Errorf("exit %d: %s", code, s.errOut.String())
	}

	state := os.Getenv("LABCTL_STATE_DIR")
	if _, err := os.Stat(filepath.Join(state, "two-steps", "invite", "alice", "progress.json")); err != nil {
		t.Errorf("the learner's progress is not under invite/alice: %v", err)
	}
	if _, err := os.Stat(filepath.Join(state, "two-steps", "progress.json")); err == nil {
		t.Error("the invited page wrote the local lab's progress")
	}
	errOut := s.errOut.String()
	for _, line := range []string{"Connected to your sandbox as alice. Checks here are feedback; your instructor's `labctl class grade` is your grade.\n",
		"The page shows no previews of the lab's Services"} {
		if strings.Count(errOut, line) != 1 {
			t.Errorf("stderr has %q %d times:\n%s", line, strings.Count(errOut, line), errOut)
		}
	}
}

// The real invite's checks are the practice's (grading.PracticeChecker):
// a check only the instructor's grade judges never reaches the sandbox and
// comes back as an error saying so; and it still marks steps' starts.
func TestRealInviteLeavesInstructorOnlyChecksToTheInstructor(t *testing.T) {
	var _ checks.StepMarker = realInvite{}
	// No runtime at all: a round that reached it would panic.
	v := realInvite{Live: provision.NewLive(&lab.Lab{}, nil, provision.Identity{}, provision.Identity{})}
	cs := []lab.Check{{Name: "by-apply", Audit: &lab.AuditCheck{}}}
	rs, err := checks.RunRound(context.Background(), checks.Round{Checks: cs}, v.RunChecks)
	if err != nil || len(rs) != 1 || rs[0].Status != checks.Error || !strings.Contains(rs[0].Message, "instructor's labctl") {
		t.Errorf("an audit check through an invite: %+v, %v", rs, err)
	}
}
