package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/usecase/labtest"
	"github.com/labctl/labctl/usecase/reset"
	"github.com/labctl/labctl/usecase/shell"
)

// Live is the one live lab: it must keep meeting the interface each of its
// users declares, or this file does not compile.
var (
	_ grading.Checker      = (*Live)(nil)
	_ grading.ScriptRunner = (*Live)(nil)
	_ grading.Prober       = (*Live)(nil)
	_ reset.Environment    = (*Live)(nil)
	_ labtest.Environment  = (*Live)(nil)
	_ shell.ScriptRunner   = (*Live)(nil)
	_ reset.Home           = (*Live)(nil)
	_ shell.Shell          = (Shell)(nil)
)

// fakeRuntime records what Live asks of a runtime; no Docker, no cluster.
type fakeRuntime struct {
	execs             []ExecOptions
	execCode          int
	attached          []ShellOptions
	files             map[string][]byte
	requests          []checks.Request
	kept              []Identity
	recreated, closed int
	fresh             *Live
	auditDir          string // the grader's audit log, when set
	stateDirs         int    // calls of StateDir
	stateDir          string // the state directory, when set
}

func (f *fakeRuntime) Exec(_ context.Context, o ExecOptions) (int, error) {
	f.execs = append(f.execs, o)
	if o.Stdout != nil {
		io.WriteString(o.Stdout, "ran\n")
	}
	return f.execCode, nil
}

func (f *fakeRuntime) Attach(_ context.Context, o ShellOptions) (Shell, error) {
	f.attached = append(f.attached, o)
	return nil, errors.New("no PTY here")
}

func (f *fakeRuntime) WriteFile(_ context.Context, path string, data []byte) error {
	if f.files == nil {
		f.files = map[string][]byte{}
	}
	f.files[path] = data
	return nil
}

// ExecChecker reads the request the checker gets and answers it with a
// pass for every check.
func (f *fakeRuntime) ExecChecker(_ context.Context, stdin io.Reader, stdout, _ io.Writer) (int, error) {
	var req checks.Request
	if err := json.NewDecoder(stdin).Decode(&req); err != nil {
		return -1, err
	}
	f.requests = append(f.requests, req)
	out := make([]checks.Result, len(req.Checks))
	for i, c := range req.Checks {
		out[i] = checks.Result{Name: c.Name, Status: checks.Pass}
	}
	return 0, json.NewEncoder(stdout).Encode(checks.Response{Results: out})
}

func (f *fakeRuntime) AuditDir() string { return f.auditDir }
func (f *fakeRuntime) RunAdminScript(context.Context, string, io.Writer) (int, error) {
	return 0, nil
}
func (f *fakeRuntime) Admin(context.Context) (*rest.Config, error) {
	return &rest.Config{Host: "https://127.0.0.1:1234", TLSClientConfig: rest.TLSClientConfig{CAData: []byte("admin-ca"), ServerName: "localhost"}}, nil
}
func (f *fakeRuntime) SandboxServer() string                          { return "https://api.sandbox:6443" }
func (f *fakeRuntime) GraderServer() string                           { return "https://api.grader:6443" }
func (f *fakeRuntime) Name() string                                   { return "fake" }
func (f *fakeRuntime) BackupHome(context.Context, io.Writer) error    { return nil }
func (f *fakeRuntime) RecreateSandbox(context.Context) error          { f.recreated++; return nil }
func (f *fakeRuntime) RecreateCluster(context.Context) (*Live, error) { return f.fresh, nil }
func (f *fakeRuntime) Close() error                                   { f.closed++; return nil }
func (f *fakeRuntime) Keep(learner, grader Identity)                  { f.kept = append(f.kept, grader) }
func (f *fakeRuntime) Features() Features                             { return Features{Keep: f.Keep} }

func (f *fakeRuntime) StateDir() (string, error) {
	f.stateDirs++
	if f.stateDir != "" {
		return f.stateDir, nil
	}
	return "", errors.New("no state here")
}

// fakeInvite is a runtime without a grader, as an invite is.
type fakeInvite struct{ fakeRuntime }

func (f *fakeInvite) Features() Features {
	return Features{Keep: f.Keep, Practice: f.LearnerCredentials}
}

func (f *fakeInvite) LearnerCredentials(context.Context) (*checks.KubeCredentials, error) {
	return &checks.KubeCredentials{Server: "https://learners-own:6443", Token: "learner-token"}, nil
}

// issuing makes Live issue tokens from a fake API server that answers
// token with an hour to live, and counts the requests.
func issuing(t *testing.T, token string) *int {
	t.Helper()
	n := 0
	cs := fake.NewSimpleClientset()
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n++
		tr := &authenticationv1.TokenRequest{}
		tr.Status.Token = token
		return true, tr, nil
	})
	old := clientFor
	clientFor = func(*rest.Config) (kubernetes.Interface, error) { return cs, nil }
	t.Cleanup(func() { clientFor = old })
	return &n
}

func liveLab(workDir string) *lab.Lab {
	l := &lab.Lab{}
	l.Metadata.Name = "demo"
	l.Metadata.Language = "en"
	l.Sandbox.WorkDir = workDir
	l.Cluster.Namespaces = []string{"shop", "other"}
	l.Default()
	return l
}

var fresh = Identity{Token: "grader-token", CAData: []byte("ca"), Expires: time.Now().Add(time.Hour)}

func TestLiveRunsCommandsInTheLearnersLogin(t *testing.T) {
	for _, dir := range []string{"", "/srv/work"} {
		rt := &fakeRuntime{}
		e := NewLive(liveLab(dir), rt, Identity{}, fresh)
		want := dir
		if want == "" {
			want = "/root"
		}
		var out bytes.Buffer
		if _, err := e.RunScript(context.Background(), "echo hi", &out, &out); err != nil {
			t.Fatal(err)
		}
		if _, err := e.ExecLogin(context.Background(), []string{"id"}, strings.NewReader("in"), &out, &out); err != nil {
			t.Fatal(err)
		}
		_, _ = e.AttachShell(context.Background(), ShellOptions{Env: []string{"TERM=xterm"}})
		for _, o := range rt.execs {
			if o.WorkDir != want || o.User != "root" || !slices.Contains(o.Env, "HOME=/root") {
				t.Errorf("workDir %q: exec %v in %q as %q with %v", dir, o.Cmd, o.WorkDir, o.User, o.Env)
			}
		}
		if got := rt.execs[0].Cmd; !slices.Equal(got, []string{"bash", "-l", "-c", "echo hi"}) {
			t.Errorf("RunScript ran %q, want a login bash", got)
		}
		if rt.execs[1].Stdin == nil {
			t.Error("ExecLogin lost its stdin")
		}
		a := rt.attached[0]
		if a.WorkDir != want || !slices.Equal(a.Env, []string{"HOME=/root", "TERM=xterm"}) {
			t.Errorf("shell in %q with %v", a.WorkDir, a.Env)
		}
	}
}

func TestLiveRunChecksAsksTheGraderWithItsCredentials(t *testing.T) {
	issued := issuing(t, "never")
	rt := &fakeRuntime{}
	l := liveLab("/srv/work")
	e := NewLive(l, rt, Identity{}, fresh)
	cs := []lab.Check{{Name: "a", File: &lab.FileCheck{Path: "/root/a"}}, {Name: "b", File: &lab.FileCheck{Path: "/root/b"}}}
	got, err := e.RunChecks(context.Background(), checks.Round{Checks: cs})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || *issued != 0 {
		t.Fatalf("results %v, tokens issued %d; want 2 results and no token (the grader's has an hour)", got, *issued)
	}
	req := rt.requests[0]
	if req.Kube == nil || req.Kube.Server != rt.GraderServer() || req.Kube.Token != "grader-token" {
		t.Errorf("the checker's credentials are %+v, want the grader's against the grader's address", req.Kube)
	}
	if !slices.Equal(req.Areas, []string{"/root", "/srv/work", lab.DefaultFixturesDir}) {
		t.Errorf("areas %v", req.Areas)
	}
	if req.Root != "/" || req.Lang == "" || len(req.Checks) != 2 {
		t.Errorf("request %+v", req)
	}
	if req.ProbeStart != nil || req.AuditDir != "" || req.Since != nil {
		t.Errorf("a round without a probe or an audit log asked %+v", req)
	}
	if got, _ := e.RunChecks(context.Background(), checks.Round{}); got != nil || len(rt.requests) != 1 {
		t.Error("a round without checks reached the checker")
	}
}

// The round the caller built reaches the checker as it is: the probe's
// start, the audit windows and the step-start commits the caller took
// from the progress it read.
// The live lab reads no progress of its own.
func TestLiveRunChecksSendsTheRoundsProbeStartAndAuditWindows(t *testing.T) {
	issuing(t, "never")
	rt := &fakeRuntime{auditDir: "/var/log/audit"}
	e := NewLive(liveLab(""), rt, Identity{}, fresh)
	audit := lab.Check{Name: "scaled", Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Resource: "deployments", Subresource: "scale"}}}
	file := lab.Check{Name: "report", File: &lab.FileCheck{Path: "/root/report.json", WrittenDuringProbe: true}}
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	since := []time.Time{start.Add(-time.Hour), {}}
	heads := []string{"", "c0ffee"}
	marks := []string{"scale-it", ""}
	if _, err := e.RunChecks(context.Background(), checks.Round{Checks: []lab.Check{audit, file}, ProbeStart: start, Windows: checks.Windows{Since: since, Heads: heads, Marks: marks}}); err != nil {
		t.Fatal(err)
	}
	req := rt.requests[0]
	if !slices.Equal(req.MarkSteps, marks) {
		t.Errorf("steps to mark %q, want %q", req.MarkSteps, marks)
	}
	if !slices.Equal(req.Heads, heads) {
		t.Errorf("step-start commits %q, want %q", req.Heads, heads)
	}
	if req.ProbeStart == nil || !req.ProbeStart.Equal(start) {
		t.Errorf("probe start %v, want %v", req.ProbeStart, start)
	}
	if req.AuditDir != rt.auditDir || !slices.EqualFunc(req.Since, since, time.Time.Equal) {
		t.Errorf("audit dir %q, windows %v; want %q, %v", req.AuditDir, req.Since, rt.auditDir, since)
	}
	if rt.stateDirs != 0 {
		t.Errorf("the round looked for the progress %d times; the caller gives it", rt.stateDirs)
	}
	// Without a probe or windows the request says neither.
	if _, err := e.RunChecks(context.Background(), checks.Round{Checks: []lab.Check{audit}}); err != nil {
		t.Fatal(err)
	}
	if req := rt.requests[1]; req.ProbeStart != nil || req.Since != nil || req.AuditDir != rt.auditDir {
		t.Errorf("a round without a probe or windows asked %+v", req)
	}
}

func TestLiveRenewsTheGradersTokenNearItsEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		grader  Identity
		renewed bool
	}{
		{"an hour left", fresh, false},
		{"five minutes left", Identity{Token: "old", Expires: time.Now().Add(5 * time.Minute)}, true},
		{"none yet", Identity{}, true},
		{"a year left (an old labctl's)", Identity{Token: "old", Expires: time.Now().Add(365 * 24 * time.Hour)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			issued := issuing(t, "renewed-token")
			rt := &fakeRuntime{}
			e := NewLive(liveLab(""), rt, Identity{Token: "learner"}, tc.grader)
			if _, err := e.RunChecks(context.Background(), checks.Round{Checks: []lab.Check{{Name: "a", File: &lab.FileCheck{Path: "/x"}}}}); err != nil {
				t.Fatal(err)
			}
			token := rt.requests[0].Kube.Token
			if tc.renewed != (token == "renewed-token") || tc.renewed != (*issued == 1) {
				t.Errorf("round used %q after %d issues", token, *issued)
			}
			if tc.renewed && (len(rt.kept) != 1 || rt.kept[0].Token != "renewed-token") {
				t.Errorf("the renewed token was not kept: %v", rt.kept)
			}
		})
	}
}

// An invite's checks run in the sandbox with the learner's own
// credentials and no audit log; grading.PracticeChecker keeps from it
// what only the instructor judges.
func TestLiveInviteRunsChecksWithTheLearnersCredentials(t *testing.T) {
	issued := issuing(t, "never")
	rt := &fakeInvite{}
	e := NewLive(liveLab(""), rt, Identity{}, Identity{})
	cs := []lab.Check{
		{Name: "file", File: &lab.FileCheck{Path: "/root/a"}},
		{Name: "file-2", File: &lab.FileCheck{Path: "/root/b"}},
	}
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	got, err := e.RunChecks(context.Background(), checks.Round{Checks: cs, ProbeStart: start,
		Windows: checks.Windows{Since: []time.Time{start, {}}, Heads: []string{"h1", "h2"}, Marks: []string{"one", ""}}})
	if err != nil {
		t.Fatal(err)
	}
	if *issued != 0 {
		t.Error("an invite issued a token: it has no admin side")
	}
	req := rt.requests[0]
	if len(req.Checks) != 2 || !slices.Equal(req.Heads, []string{"h1", "h2"}) {
		t.Errorf("the sandbox's checker got %v and step-start commits %q", req.Checks, req.Heads)
	}
	if req.Kube.Token != "learner-token" || req.AuditDir != "" || req.Since != nil || req.MarkSteps != nil {
		t.Errorf("the sandbox's checker ran with %+v, audit dir %q and windows %v %v, want the learner's own credentials and no log", req.Kube, req.AuditDir, req.Since, req.MarkSteps)
	}
	if req.ProbeStart == nil || !req.ProbeStart.Equal(start) {
		t.Errorf("the sandbox's checker got probe start %v, want %v", req.ProbeStart, start)
	}
	if len(got) != 2 || got[0].Status != checks.Pass || got[1].Name != "file-2" {
		t.Errorf("results %+v", got)
	}
}

func TestLiveWritesTheLearnersKubeconfig(t *testing.T) {
	rt := &fakeRuntime{}
	e := NewLive(liveLab(""), rt, Identity{Token: "learner-token", CAData: []byte("ca")}, fresh)
	if err := e.RecreateSandbox(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rt.recreated != 1 {
		t.Fatal("the runtime's sandbox was not recreated")
	}
	cfg, err := clientcmd.Load(rt.files["/root/.kube/config"])
	if err != nil {
		t.Fatal(err)
	}
	kctx := cfg.Contexts[cfg.CurrentContext]
	if kctx == nil || kctx.Namespace != "shop" || cfg.Clusters[kctx.Cluster].Server != rt.SandboxServer() || cfg.AuthInfos[kctx.AuthInfo].Token != "learner-token" {
		t.Errorf("kubeconfig %s", rt.files["/root/.kube/config"])
	}
}

func TestLiveLearnerConfigIsTheLearnersTokenOnTheHostsAddress(t *testing.T) {
	issuing(t, "issued-learner")
	rt := &fakeRuntime{}
	e := NewLive(liveLab(""), rt, Identity{}, fresh)
	cfg, err := e.LearnerConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:1234" || cfg.BearerToken != "issued-learner" || string(cfg.CAData) != "admin-ca" || cfg.ServerName != "localhost" {
		t.Errorf("learner config %+v", cfg)
	}
}

func TestLiveRecreateClusterTakesTheFreshLab(t *testing.T) {
	next := &fakeRuntime{}
	rt := &fakeRuntime{}
	rt.fresh = NewLive(liveLab(""), next, Identity{Token: "new-learner"}, fresh)
	e := NewLive(liveLab(""), rt, Identity{Token: "old-learner"}, fresh)
	if err := e.RecreateCluster(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.rt != next || e.learner.Token != "new-learner" {
		t.Error("the live lab still refers to the old cluster")
	}
}

// TestLiveProbesTakeTurns: two labctl processes' probes of one lab take
// turns on the lab's probe lock; a runtime without a state directory here
// has none to take.
func TestLiveProbesTakeTurns(t *testing.T) {
	dir := t.TempDir()
	a := NewLive(liveLab(""), &fakeRuntime{stateDir: dir}, Identity{}, Identity{})
	b := NewLive(liveLab(""), &fakeRuntime{stateDir: dir}, Identity{}, Identity{})
	var _ grading.ProbeLocker = a
	unlock, err := a.LockProbe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := b.LockProbe(ctx); err == nil {
		t.Fatal("a second probe of the lab took the lock while the first held it")
	}
	unlock()
	unlockB, err := b.LockProbe(context.Background())
	if err != nil {
		t.Fatalf("the lock was not free after the first probe: %v", err)
	}
	unlockB()

	none := NewLive(liveLab(""), &fakeRuntime{}, Identity{}, Identity{})
	u1, err1 := none.LockProbe(context.Background())
	u2, err2 := none.LockProbe(context.Background())
	if err1 != nil || err2 != nil {
		t.Fatalf("without a state directory: %v, %v", err1, err2)
	}
	u1()
	u2()
}

// An invited learner's labctl marks a step's start in the sandbox with
// the learner's own credentials, once per step; the instructor's live lab
// (a grader of its own) marks nothing.
func TestLiveMarksStepsOnlyForAnInvite(t *testing.T) {
	issuing(t, "never")
	rt := &fakeInvite{}
	e := NewLive(liveLab(""), rt, Identity{}, Identity{})
	for _, step := range []string{"one", "one", "two"} {
		if err := e.MarkStep(context.Background(), step); err != nil {
			t.Fatal(err)
		}
	}
	if len(rt.requests) != 2 {
		t.Fatalf("%d rounds, want one per step", len(rt.requests))
	}
	for i, step := range []string{"one", "two"} {
		req := rt.requests[i]
		if len(req.Checks) != 1 || req.Checks[0].Access == nil || req.Checks[0].Access.Mark != step || req.Kube.Token != "learner-token" || req.AuditDir != "" {
			t.Errorf("round %d: %+v", i, req)
		}
	}
	own := &fakeRuntime{auditDir: "/var/log/audit"}
	if err := NewLive(liveLab(""), own, Identity{}, fresh).MarkStep(context.Background(), "one"); err != nil || len(own.requests) != 0 {
		t.Errorf("the instructor's live lab marked: %v, %d rounds", err, len(own.requests))
	}
}

// A lab started again after a while: a learner's token that expired (or
// nearly has) is renewed, and the grader's as a check round would; a
// learner's token with time left, or with no known expiry, is kept.
func TestLiveRenewCredentials(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name          string
		learner       Identity
		grader        Identity
		learnerIssued bool
		issues        int
	}{
		{"both fresh", Identity{Token: "learner", Expires: now.Add(300 * 24 * time.Hour)}, fresh, false, 0},
		{"learner expired", Identity{Token: "learner", Expires: now.Add(-time.Hour)}, fresh, true, 1},
		{"learner near its end", Identity{Token: "learner", Expires: now.Add(time.Hour)}, fresh, true, 1},
		{"learner expiry unknown", Identity{Token: "learner"}, fresh, false, 0},
		{"grader expired", Identity{Token: "learner", Expires: now.Add(300 * 24 * time.Hour)}, Identity{Token: "old", Expires: now.Add(-time.Minute)}, false, 1},
		{"both expired", Identity{Token: "learner", Expires: now.Add(-time.Hour)}, Identity{Token: "old", Expires: now.Add(-time.Minute)}, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			issued := issuing(t, "renewed-token")
			e := NewLive(liveLab(""), &fakeRuntime{}, tc.learner, tc.grader)
			renewed, err := e.RenewCredentials(context.Background(), now)
			if err != nil {
				t.Fatal(err)
			}
			if renewed != tc.learnerIssued || *issued != tc.issues {
				t.Errorf("learner renewed %v after %d issues, want %v after %d", renewed, *issued, tc.learnerIssued, tc.issues)
			}
			learner, _ := e.LearnerIdentity(context.Background())
			if tc.learnerIssued != (learner.Token == "renewed-token") {
				t.Errorf("learner's token now %q", learner.Token)
			}
		})
	}
}

// readerRuntime is a runtime that reads the sandbox's files from the
// host's side, as kind's does, over a map of regular files.
type readerRuntime struct {
	fakeRuntime
	files map[string]string
}

func (r *readerRuntime) Features() Features {
	f := r.fakeRuntime.Features()
	f.SandboxFS = func() checks.SandboxFS { return mapFS(r.files) }
	return f
}

type mapFS map[string]string

func (m mapFS) Lstat(_ context.Context, p string) (checks.SandboxStat, error) {
	if s, ok := m[p]; ok {
		return checks.SandboxStat{Mode: 0o644, Size: int64(len(s))}, nil
	}
	for k := range m {
		if strings.HasPrefix(k, p+"/") {
			return checks.SandboxStat{Mode: fs.ModeDir | 0o755}, nil
		}
	}
	return checks.SandboxStat{}, fs.ErrNotExist
}

func (m mapFS) ReadFile(_ context.Context, p string, _ int64) ([]byte, error) {
	return []byte(m[p]), nil
}

// ReadTree stands for a directory's archive with its name.
func (m mapFS) ReadTree(_ context.Context, p string, _ int64) ([]byte, error) {
	return []byte("archive of " + p), nil
}

// TestLiveRunChecksReadsTheSandboxOutsideTheGrader: a file check of a path
// the grader does not mount gets the sandbox's file in the request, read
// once however many checks name it; /root is left to the grader; a
// runtime that cannot read the sandbox sends an error naming why, and an
// invite's checker, which runs in the sandbox, is sent nothing.
func TestLiveRunChecksReadsTheSandboxOutsideTheGrader(t *testing.T) {
	cs := []lab.Check{
		{Name: "a", File: &lab.FileCheck{Path: "/etc/app.conf"}},
		{Name: "b", File: &lab.FileCheck{Path: "/root/notes.txt"}},
		{Name: "c", File: &lab.FileCheck{Path: "/etc/app.conf", Contains: []string{"x"}}},
		{Name: "d", File: &lab.FileCheck{Path: "/root/answer", Equals: &lab.Value{Ref: "file:/opt/course/1/answer"}}},
		{Name: "e", Git: &lab.GitCheck{Repo: "/srv/app"}},
		{Name: "f", Git: &lab.GitCheck{Repo: "/root/repo"}},
		{Name: "g", File: &lab.FileCheck{Path: "/root/head", Equals: &lab.Value{Ref: "git:/srv/app@HEAD"}}},
	}
	rt := &readerRuntime{files: map[string]string{"/etc/app.conf": "listen 80\n", "/opt/course/1/answer": "42\n", "/srv/app/.git/HEAD": "ref: refs/heads/main\n"}}
	e := NewLive(liveLab(""), rt, Identity{}, fresh)
	if _, err := e.RunChecks(context.Background(), checks.Round{Checks: cs}); err != nil {
		t.Fatal(err)
	}
	got := rt.requests[0].Sandbox
	if len(got) != 2 || got[0].Path != "/etc/app.conf" || got[0].State != checks.SandboxFound || string(got[0].Data) != "listen 80\n" ||
		got[1].Path != "/opt/course/1/answer" || string(got[1].Data) != "42\n" {
		t.Fatalf("sandbox files %+v, want /etc/app.conf and the reference's /opt/course/1/answer, found", got)
	}
	if got := rt.requests[0].Repos; len(got) != 1 || got[0].Path != "/srv/app" || got[0].State != checks.SandboxFound || string(got[0].Data) != "archive of /srv/app" {
		t.Fatalf("sandbox repositories %+v, want /srv/app's archive, read once for its check and its reference", got)
	}

	plain := &fakeRuntime{}
	if _, err := NewLive(liveLab(""), plain, Identity{}, fresh).RunChecks(context.Background(), checks.Round{Checks: cs}); err != nil {
		t.Fatal(err)
	}
	if got := plain.requests[0].Sandbox; len(got) != 2 || got[0].State != checks.SandboxError || got[0].Err != ErrNoSandboxReads {
		t.Fatalf("without a reader: %+v, want one error", got)
	}
	if got := plain.requests[0].Repos; len(got) != 1 || got[0].State != checks.SandboxError || got[0].Err != ErrNoSandboxReads {
		t.Fatalf("without a reader: repositories %+v, want one error", got)
	}

	issuing(t, "learner")
	invite := &fakeInvite{}
	if _, err := NewLive(liveLab(""), invite, Identity{}, fresh).RunChecks(context.Background(), checks.Round{Checks: cs}); err != nil {
		t.Fatal(err)
	}
	if got := invite.requests[0].Sandbox; got != nil || invite.requests[0].Repos != nil {
		t.Fatalf("an invite's checker runs in the sandbox: sent %+v", got)
	}
}
