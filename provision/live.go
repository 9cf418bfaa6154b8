// Package provision is the live lab: Live, the one type every command
// reaches a running lab through (checks, scripts, probes, the shell,
// reset), over a Runtime that says where the sandbox, the grader and the
// API server are. What the runtimes share is here once: the identities
// labctl makes in a lab's cluster (the learner's, the grader's, the
// probe's) and their roles, the kubeconfigs, the audit policy and the
// audit checks' windows, the checker round (RunChecker: a runtime only
// runs the checker), step scripts, and the reset of the lab's namespaces.
// The runtimes are packages of their own: provision/kind (a kind cluster
// and Docker on this machine) and provision/class (one lab per learner on
// an existing Kubernetes cluster); this package imports neither, nor
// grading, which runs its rounds and scripts over it.
package provision

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/flock"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/terminal"
	"github.com/labctl/labctl/lab"
)

// ErrNotUp says the lab's cluster or sandbox is missing or stopped.
var ErrNotUp = errors.New("the lab is not up: run `labctl up`")

// ErrNoCluster says that the lab has no cluster to reach.
var ErrNoCluster = errors.New("the lab has no cluster (cluster.provider: none): it has no API server and no Services to reach")

// ErrInstructorOnly says an invited learner asked for what only the
// instructor's labctl does.
var ErrInstructorOnly = errors.New("your instructor does this for you: ask them (labctl class reset, labctl class grade)")

// Live is a lab that runs: its sandbox, its API server and its grader, on
// one of labctl's runtimes (Runtime: kind on this machine, or one learner's
// namespace of a class cluster). Every command reaches a running lab
// through it, each by a small interface of its own: grading's Checker,
// ScriptRunner and Prober, reset's and labtest's Environment, and what the
// shell, exec and the browser view need. What the runtimes share is written
// here once: the checker's request and its round (RunChecker), the
// learner's login environment, the kubeconfig, the grader's token and its
// renewal, the namespaces' reset. Close it when done.
type Live struct {
	Lab *lab.Lab
	rt  Runtime
	// feat is what rt does beyond every runtime, as it said once.
	feat Features

	// admin is the runtime's admin config, read when first needed; it
	// never enters the sandbox.
	admin *rest.Config
	// learner is the learner's identity, issued when first needed.
	learner Identity
	// grader is the checker's identity: a token that lives an hour,
	// renewed before a round that would outlive it.
	grader Identity
	// checkpoints are the records of the lab's namespaces Checkpoint
	// kept, by step, and misses how many times in a row going back to
	// each failed.
	checkpoints map[string][sha256.Size]byte
	misses      map[string]int
	// world is what labctl test's in-place undo of a case keeps
	// (inplace.go).
	world *world
	// marks is the step this live lab last marked (MarkStep).
	marks *lastMark
}

// lastMark is the step a live lab last marked.
type lastMark struct {
	mu   sync.Mutex
	step string
}

// Runtime is what a runtime does its own way for a live lab: where the
// sandbox, the grader and the API server are, and how they are reached,
// backed up and made anew. Live does everything else.
type Runtime interface {
	// Exec runs o.Cmd in the sandbox as root, with HOME=/root, o.Env and
	// o.WorkDir (Live always sets it), and returns its exit code.
	// Cancelling ctx ends the process and what it started.
	Exec(ctx context.Context, o ExecOptions) (int, error)
	// Attach starts o.Cmd (a login shell when empty) on a PTY in the
	// sandbox, with HOME=/root, o.Env and o.WorkDir.
	Attach(ctx context.Context, o ShellOptions) (Shell, error)
	// WriteFile writes a file in the sandbox that only root reads.
	WriteFile(ctx context.Context, path string, data []byte) error
	// ExecChecker runs the checker, labctl's hidden `__check`, once where
	// the learner cannot reach it (a runtime without a grader, an invite:
	// in the sandbox, for the learner's own feedback), with stdin as its
	// input and its output to stdout and stderr, which bound what they
	// keep, until ctx ends; it returns its exit code. RunChecker does the
	// rest of the round.
	ExecChecker(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error)
	// AuditDir is where the checker reads the API server's audit log, ""
	// when it has none.
	AuditDir() string
	// RunAdminScript runs a probe's setup or restore script with the
	// probe's identity, never in the sandbox; see grading.Prober.
	RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error)
	// Admin is the API server's admin config for a client on the host.
	Admin(ctx context.Context) (*rest.Config, error)
	// SandboxServer and GraderServer are the API server's address as the
	// sandbox and the grader reach it.
	SandboxServer() string
	GraderServer() string
	// Name names the lab's cluster in messages and labels (kind's cluster,
	// the learner's namespace).
	Name() string
	// StateDir is the host directory that holds the learner's progress.
	StateDir() (string, error)
	// BackupHome streams /root out as a tar (entries root/...).
	BackupHome(ctx context.Context, w io.Writer) error
	// RecreateSandbox replaces the sandbox (and grader) over an emptied
	// home.
	RecreateSandbox(ctx context.Context) error
	// RecreateCluster removes the whole lab and brings it up fresh (with
	// the first step's setup); the old runtime is closed.
	RecreateCluster(ctx context.Context) (*Live, error)
	// Features is what the runtime does beyond all this; Live asks once.
	Features() Features
	Close() error
}

// Features is what a runtime does beyond what every runtime does: each is
// nil on a runtime that does not do it, and Live then does without.
type Features struct {
	// Keep keeps the identities Live issues across commands (kind keeps
	// them in the lab's state directory); without it each command issues
	// its own.
	Keep func(learner, grader Identity)
	// Practice gives, on a runtime without a grader (an invite), the
	// learner's own credentials its checks run with, in the sandbox
	// (grading.PracticeChecker keeps from them those only the
	// instructor's grader can judge). Every other runtime has a grader.
	Practice func(ctx context.Context) (*checks.KubeCredentials, error)
	// EndProbe ends a probe on a runtime that keeps what its setup left
	// for its restore (kind's probe volume, a class's probe container).
	EndProbe func(ctx context.Context) error
	// Sandbox keeps the sandbox and puts it back in place (kind's).
	Sandbox SandboxKeeper
	// SandboxFS reads the sandbox's file system from the host's side
	// (kind's, through the engine's archive), for the file checks of paths
	// the grader does not mount; without it such checks say that this
	// runtime cannot read them.
	SandboxFS func() checks.SandboxFS
	// NodeFile reads a file of a lab's node from the host (kind's, through
	// the engine's archive), for the file checks that name a node; without
	// it such checks say that this runtime cannot read a node's files.
	NodeFile NodeFile
}

// SandboxKeeper keeps the sandbox and puts it back without recreating it.
type SandboxKeeper interface {
	// NotePristine keeps the sandbox as it is now, just recreated, for
	// RestoreSandbox.
	NotePristine(ctx context.Context)
	// RestoreSandbox puts the sandbox back as NotePristine kept it, when
	// its conditions hold, and reports whether it did.
	RestoreSandbox(ctx context.Context) bool
	// KeepSandbox keeps the sandbox under key (Live's Checkpoint).
	KeepSandbox(ctx context.Context, key string)
	// RestoreKeptSandbox restores the sandbox kept under key when its own
	// conditions hold and then also unchanged does.
	RestoreKeptSandbox(ctx context.Context, key string, unchanged func() bool) bool
}

// Shell is a process on a PTY in the sandbox: reading gives its output,
// writing types into it.
type Shell interface {
	io.ReadWriter
	// Resize sets the PTY's size.
	Resize(ctx context.Context, rows, cols uint) error
	// Close detaches; the output then ends.
	Close() error
	// ExitCode waits for the process to end and returns its exit code.
	ExitCode(ctx context.Context) (int, error)
}

// NewLive is the live lab of l on rt; learner and grader are identities
// the runtime already holds (zero ones are issued when first needed).
func NewLive(l *lab.Lab, rt Runtime, learner, grader Identity) *Live {
	e := &Live{Lab: l, rt: rt, learner: learner, grader: grader, marks: &lastMark{}}
	if rt != nil {
		e.feat = rt.Features()
	}
	return e
}

// Runtime is the runtime the lab runs on.
func (e *Live) Runtime() Runtime { return e.rt }

// Close releases the runtime's connections.
func (e *Live) Close() error { return e.rt.Close() }

// adminConfig is the runtime's admin config, asked for once.
func (e *Live) adminConfig(ctx context.Context) (*rest.Config, error) {
	if e.admin != nil {
		return e.admin, nil
	}
	cfg, err := e.rt.Admin(ctx)
	if err != nil {
		return nil, err
	}
	e.admin = cfg
	return cfg, nil
}

// clientFor makes the client Live issues tokens with (a fake one in unit
// tests).
var clientFor = func(cfg *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(cfg) }

// issue issues account a token of lifetime through the admin's credentials.
func (e *Live) issue(ctx context.Context, account string, lifetime time.Duration) (Identity, error) {
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return Identity{}, err
	}
	cs, err := clientFor(admin)
	if err != nil {
		return Identity{}, fmt.Errorf("connecting to cluster %s: %w", e.rt.Name(), err)
	}
	id, err := issueToken(ctx, cs, account, admin.CAData, lifetime)
	if err != nil {
		return Identity{}, fmt.Errorf("cluster %s: %w", e.rt.Name(), err)
	}
	return id, nil
}

// SetIdentities gives e the cluster's admin config and the learner's and
// the grader's identities a setup issued (SetupCluster), and hands them to
// a runtime that keeps them.
func (e *Live) SetIdentities(admin *rest.Config, learner, grader Identity) {
	e.admin, e.learner, e.grader = admin, learner, grader
	e.keep()
}

// keep hands the identities to a runtime that keeps them.
func (e *Live) keep() {
	if e.feat.Keep != nil && e.learner.Token != "" && e.grader.Token != "" {
		e.feat.Keep(e.learner, e.grader)
	}
}

// LearnerIdentity is the learner's identity, issued the first time.
func (e *Live) LearnerIdentity(ctx context.Context) (Identity, error) {
	if e.learner.Token == "" {
		id, err := e.issue(ctx, LearnerAccount, learnerTokenLifetime)
		if err != nil {
			return Identity{}, err
		}
		e.learner = id
		e.keep()
	}
	return e.learner, nil
}

// learnerRenewBefore is how much of the learner's token must be left when
// a stopped lab is started again; a shorter rest is renewed.
const learnerRenewBefore = 24 * time.Hour

// learnerNeedsRenewal reports whether a learner token expiring at expires
// must be replaced at now; an unknown expiry is left as it is.
func learnerNeedsRenewal(expires, now time.Time) bool {
	return !expires.IsZero() && expires.Sub(now) < learnerRenewBefore
}

// RenewCredentials renews, at now, the learner's token if it expired or
// nearly has, and the grader's (GraderCredentials), as a lab started again
// after a while needs; it reports whether the learner's was renewed (its
// kubeconfig must then be written again).
func (e *Live) RenewCredentials(ctx context.Context, now time.Time) (learnerRenewed bool, err error) {
	expires := e.learner.Expires
	if expires.IsZero() && e.learner.Token != "" {
		expires = TokenExpiry(e.learner.Token)
	}
	if e.learner.Token == "" || learnerNeedsRenewal(expires, now) {
		id, err := e.issue(ctx, LearnerAccount, learnerTokenLifetime)
		if err != nil {
			return false, fmt.Errorf("renewing the learner's credentials: %w", err)
		}
		e.learner = id
		e.keep()
		learnerRenewed = true
	}
	if _, err := e.GraderCredentials(ctx); err != nil {
		return learnerRenewed, err
	}
	return learnerRenewed, nil
}

// GraderCredentials are the checker's credentials; a token near its end
// (graderNeedsRenewal) is renewed first: a shell may stay open for hours.
func (e *Live) GraderCredentials(ctx context.Context) (*checks.KubeCredentials, error) {
	if graderNeedsRenewal(e.graderExpiry(), time.Now()) {
		id, err := e.issue(ctx, GraderAccount, graderTokenLifetime)
		if err != nil {
			return nil, fmt.Errorf("renewing the grader's credentials: %w", err)
		}
		e.grader = id
		e.keep()
	}
	return &checks.KubeCredentials{Server: e.rt.GraderServer(), Token: e.grader.Token, CAData: e.grader.CAData}, nil
}

// graderExpiry is when the grader's token ends: as the API server said, or
// as the token says.
func (e *Live) graderExpiry() time.Time {
	if e.grader.Token == "" {
		return time.Time{}
	}
	if !e.grader.Expires.IsZero() {
		return e.grader.Expires
	}
	return TokenExpiry(e.grader.Token)
}

// MarkStep marks, on a runtime without a grader (an invite), that step
// began: the learner's labctl asks the learner's API server the question
// the class's audit log keeps as the step's start (checks.MarkStep), so
// that the instructor's grade begins the step's audit window there (the
// earliest mark counts: a step marked already is not asked again). The
// instructor's own record needs no mark: elsewhere it does nothing.
func (e *Live) MarkStep(ctx context.Context, step string) error {
	if e.feat.Practice == nil {
		return nil
	}
	e.marks.mu.Lock()
	defer e.marks.mu.Unlock()
	if e.marks.step == step {
		return nil
	}
	rs, err := checks.RunRound(ctx, checks.Round{Checks: []lab.Check{checks.MarkStep(step)}}, e.RunChecks)
	if err != nil {
		return err
	}
	if rs[0].Status != checks.Pass {
		return fmt.Errorf("marking the start of step %s: %s", step, rs[0].Message)
	}
	e.marks.step = step
	return nil
}

// RunChecks runs the round r in one checker round where the learner cannot
// reach it, until ctx ends: callers run it through checks.RunRound, which
// sets the round's deadline and holds the checker's answer to the request.
// The round carries the probe's start and the audit windows the caller
// took from the progress it read; the live lab reads no progress itself.
// On a runtime without a grader (an invite) the checks run in the sandbox
// with the learner's own credentials, for feedback, and no audit log:
// grading.PracticeChecker keeps from it those only the instructor's grader
// judges.
func (e *Live) RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	cs := r.Checks
	if len(cs) == 0 {
		return nil, nil
	}
	if slices.ContainsFunc(cs, func(c lab.Check) bool { return nodeCheck(&c) }) {
		return e.runSplit(ctx, r)
	}
	req := checks.Request{Root: "/", Areas: e.areas(), Lang: r.Lang, Zone: checks.LocalZone()}
	if req.Lang == "" {
		req.Lang = msg.Choose(e.Lab.Metadata.Language, os.Getenv)
	}
	if !r.ProbeStart.IsZero() {
		start := r.ProbeStart
		req.ProbeStart = &start
	}
	req.Checks, req.Heads = cs, r.Heads
	switch {
	case !e.Lab.HasCluster():
		// No API server: the lab's checks read the sandbox only (lab
		// validation refuses the others), so the grader gets no token.
	case e.feat.Practice != nil:
		kube, err := e.feat.Practice(ctx)
		if err != nil {
			return nil, err
		}
		req.Kube = kube
	default:
		kube, err := e.GraderCredentials(ctx)
		if err != nil {
			return nil, err
		}
		req.Kube = kube
		if dir := e.rt.AuditDir(); dir != "" {
			req.AuditDir, req.Since, req.MarkSteps = dir, r.Since, r.Marks
		}
	}
	if e.feat.Practice == nil {
		// The checker of an invite runs in the sandbox and reads its files
		// itself; a grader reads those outside its mounts through the host.
		req.Sandbox = e.sandboxFiles(ctx, cs)
	}
	return RunChecker(ctx, req, e.rt.ExecChecker)
}

// MaxSandboxRead bounds what one round reads of the sandbox's files outside
// the grader's mounts: the files go to the checker in its request.
const MaxSandboxRead = 16 << 20

// ErrNoSandboxReads says a runtime cannot read the sandbox's files outside
// the learner's home and the fixtures.
const ErrNoSandboxReads = "this runtime's grader reads only the learner's home (/root) and the lab's fixtures of the sandbox: a class does not yet read other paths of the sandbox; check a file under /root instead"

// sandboxFiles reads, for the file checks of cs that the grader does not
// see, their paths from the sandbox (checks.ReadSandbox), at most
// MaxSandboxRead in all.
func (e *Live) sandboxFiles(ctx context.Context, cs []lab.Check) []checks.SandboxFile {
	paths := e.Lab.FileChecksOutside(cs)
	if len(paths) == 0 {
		return nil
	}
	out := make([]checks.SandboxFile, 0, len(paths))
	total := 0
	for _, p := range paths {
		if e.feat.SandboxFS == nil {
			out = append(out, checks.SandboxFile{Path: p, State: checks.SandboxError, Err: ErrNoSandboxReads})
			continue
		}
		f := checks.ReadSandbox(ctx, e.feat.SandboxFS(), p)
		if total += len(f.Data); total > MaxSandboxRead {
			f = checks.SandboxFile{Path: p, State: checks.SandboxError, Err: fmt.Sprintf(
				"the round's checks read more than %d MiB of the sandbox's files outside /root; split them over several steps", MaxSandboxRead>>20)}
		}
		out = append(out, f)
	}
	return out
}

// areas are the directories of the learner's files a check may follow a
// link into: the home, the work directory and the fixtures.
func (e *Live) areas() []string {
	areas := []string{lab.DefaultWorkDir}
	for _, d := range []string{e.workDir(), e.fixturesDir()} {
		if !slices.Contains(areas, d) {
			areas = append(areas, d)
		}
	}
	return areas
}

// workDir and fixturesDir are the lab's, which lab.Default filled in when
// the lab was loaded.
func (e *Live) workDir() string { return e.Lab.Sandbox.WorkDir }

func (e *Live) fixturesDir() string { return e.Lab.Sandbox.Fixtures }

// login is cmd run like the learner's shell runs it: as root, HOME=/root,
// in the lab's workDir.
func (e *Live) login(cmd []string, in io.Reader, out, errOut io.Writer) ExecOptions {
	return ExecOptions{Cmd: cmd, Env: []string{"HOME=/root"}, WorkDir: e.workDir(), User: "root",
		Stdin: in, Stdout: out, Stderr: errOut}
}

// RunScript runs a bash script in the sandbox as the learner would: a login
// shell, as root, HOME=/root, in the lab's workDir. It returns the script's
// exit code.
func (e *Live) RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	return e.rt.Exec(ctx, e.login([]string{"bash", "-l", "-c", script}, nil, stdout, stderr))
}

// RunScripts runs scripts one after another in one login shell of the
// sandbox (see runScripts).
func (e *Live) RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (failed, code int, err error) {
	return runScripts(scripts, stdout, started, func(cmd []string, out io.Writer) (int, error) {
		return e.rt.Exec(ctx, e.login(cmd, nil, out, stderr))
	})
}

// ExecLogin runs cmd in the sandbox like the learner's shell runs it, with
// the given streams, and returns its exit code.
func (e *Live) ExecLogin(ctx context.Context, cmd []string, in io.Reader, out, errOut io.Writer) (int, error) {
	return e.rt.Exec(ctx, e.login(cmd, in, out, errOut))
}

// AttachShell starts the learner's login shell (or o.Cmd) on a PTY in the
// sandbox, in the lab's workDir unless o says otherwise.
func (e *Live) AttachShell(ctx context.Context, o ShellOptions) (Shell, error) {
	if o.WorkDir == "" {
		o.WorkDir = e.workDir()
	}
	o.User = "root"
	o.Env = append([]string{"HOME=/root"}, o.Env...)
	return e.rt.Attach(ctx, o)
}

// ExecInTerminal runs cmd like ExecLogin does, on a PTY wired to the user's
// terminal (raw mode, its size followed); term is the TERM to give it.
func (e *Live) ExecInTerminal(ctx context.Context, cmd []string, in, out *os.File, term string) (int, error) {
	t, err := terminal.OpenTerminal(ctx, in, out)
	if err != nil {
		return -1, err
	}
	defer t.Restore()
	o := ShellOptions{Cmd: cmd}
	if term != "" {
		o.Env = []string{"TERM=" + term}
	}
	if rows, cols, err := t.Size(); err == nil {
		o.Rows, o.Cols = rows, cols
	}
	sh, err := e.AttachShell(ctx, o)
	if err != nil {
		return -1, err
	}
	defer sh.Close()
	go func() {
		defer restoreOnPanic(t)
		t.WatchSize(t.Context(), func(rows, cols uint) { _ = sh.Resize(t.Context(), rows, cols) })
	}()
	go func() {
		defer restoreOnPanic(t)
		_, _ = io.Copy(sh, t)
	}()
	outDone := make(chan error, 1)
	go func() {
		defer restoreOnPanic(t)
		_, err := io.Copy(t, sh)
		outDone <- err
	}()
	select {
	case <-outDone:
	case <-t.Context().Done():
		sh.Close()
		t.Restore()
		return -1, fmt.Errorf("running a command in the sandbox: %w", context.Cause(t.Context()))
	}
	t.Restore()
	return sh.ExitCode(ctx)
}

// restoreOnPanic gives the terminal back before a panic in a goroutine
// that touches it ends the program.
func restoreOnPanic(t *terminal.Terminal) {
	if p := recover(); p != nil {
		t.Restore()
		panic(p)
	}
}

// RunAdminScript runs a probe's script with the probe's identity, never in
// the sandbox (the runtime's RunAdminScript).
func (e *Live) RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error) {
	return e.rt.RunAdminScript(ctx, script, out)
}

// probeLockWait bounds the wait for another process's probe of the same
// lab: a probe with a broken world runs the learner's command twice, each
// within its deadline, between scripts of the lab's.
const probeLockWait = 5 * time.Minute

// LockProbe takes the lab's probe lock (a file in its state directory), so
// that one probe of the lab runs at a time across labctl processes
// (grading.ProbeLocker). A runtime without a state directory on this
// machine has no lock to take.
func (e *Live) LockProbe(ctx context.Context) (func(), error) {
	dir, err := e.rt.StateDir()
	if err != nil {
		return func() {}, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("locking the lab's probes: %w", err)
	}
	unlock, err := flock.Lock(ctx, filepath.Join(dir, probeLockFile), flock.Options{Wait: probeLockWait, Poll: 100 * time.Millisecond, Mode: 0o600})
	if err != nil {
		return nil, fmt.Errorf("locking the lab's probes: %w", err)
	}
	return unlock, nil
}

// probeLockFile is the file of the lab's probe lock in its state directory.
const probeLockFile = ".probe.lock"

// EndProbe ends a probe on a runtime that keeps what its setup left
// (kind's probe volume, a class's probe container); others keep nothing.
func (e *Live) EndProbe(ctx context.Context) error {
	if e.feat.EndProbe == nil {
		return nil
	}
	return e.feat.EndProbe(ctx)
}

// WriteKubeconfig writes the learner's kubeconfig to /root/.kube/config:
// the learner's token against the API server as the sandbox reaches it,
// in the lab's sandbox.namespace (firstNamespace).
//
// A lab with no cluster gets no kubeconfig: kubectl is replaced by a
// command that says so (writeNoCluster).
func (e *Live) WriteKubeconfig(ctx context.Context) error {
	if !e.Lab.HasCluster() {
		return e.writeNoCluster(ctx)
	}
	learner, err := e.LearnerIdentity(ctx)
	if err != nil {
		return err
	}
	ca := learner.CAData
	if len(ca) == 0 && e.admin != nil {
		ca = e.admin.CAData
	}
	b, err := learnerKubeconfig(e.Lab.Metadata.Name, e.rt.SandboxServer(), ca, learner.Token, FirstNamespace(e.Lab))
	if err != nil {
		return err
	}
	if err := e.rt.WriteFile(ctx, "/root/.kube/config", b); err != nil {
		return fmt.Errorf("writing the learner kubeconfig: %w", err)
	}
	if e.Lab.Cluster.NodeAccess {
		return e.writeNodeCommand(ctx)
	}
	return nil
}

// FirstNamespace is the namespace the learner's kubectl starts in: the
// lab's sandbox.namespace, else its first.
func FirstNamespace(l *lab.Lab) string {
	if l.Sandbox.Namespace != "" {
		return l.Sandbox.Namespace
	}
	if len(l.Cluster.Namespaces) > 0 {
		return l.Cluster.Namespaces[0]
	}
	return "default"
}

// BackupHome streams the sandbox's /root out as a tar (entries root/...).
func (e *Live) BackupHome(ctx context.Context, w io.Writer) error { return e.rt.BackupHome(ctx, w) }

// RecreateSandbox replaces the sandbox over an emptied home and writes the
// learner's kubeconfig in. Back up /root first (BackupHome) if it matters.
func (e *Live) RecreateSandbox(ctx context.Context) error {
	if err := e.rt.RecreateSandbox(ctx); err != nil {
		return err
	}
	return e.WriteKubeconfig(ctx)
}

// NotePristine keeps the sandbox as it is now, just recreated, learner
// kubeconfig included, for RestoreSandbox; on a runtime that cannot
// restore in place, or a sandbox it cannot keep, it does nothing.
func (e *Live) NotePristine(ctx context.Context) {
	if e.feat.Sandbox != nil {
		e.feat.Sandbox.NotePristine(ctx)
	}
}

// RestoreSandbox puts the sandbox back as NotePristine kept it, in place:
// /root emptied and filled again, /tmp emptied, the container kept. It
// does so only when no process of the sandbox's own is left and nothing
// else in it changed, and reports whether it did; when it did not,
// RecreateSandbox must follow. labctl test uses it between its phases,
// whose scripts are the lab author's; a learner's reset always recreates.
func (e *Live) RestoreSandbox(ctx context.Context) bool {
	return e.feat.Sandbox != nil && e.feat.Sandbox.RestoreSandbox(ctx)
}

// ResetNamespaces puts the lab's namespaces back to their starting state;
// a lab with no cluster has none.
func (e *Live) ResetNamespaces(ctx context.Context) error {
	if !e.Lab.HasCluster() {
		return nil
	}
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return err
	}
	return resetNamespaces(ctx, admin, e.Lab, e.rt.Name())
}

// RecreateCluster takes the whole lab down and brings it up fresh (with the
// first step's setup); e then refers to the new one.
func (e *Live) RecreateCluster(ctx context.Context) error {
	fresh, err := e.rt.RecreateCluster(ctx)
	if err != nil {
		return err
	}
	*e = *fresh
	return nil
}

// LearnerConfig is the learner's identity for a client on the host: the
// learner's token against the API server's host-facing address, as the
// browser page's previews of the lab's Services use it.
func (e *Live) LearnerConfig(ctx context.Context) (*rest.Config, error) {
	if !e.Lab.HasCluster() {
		return nil, ErrNoCluster
	}
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return nil, err
	}
	learner, err := e.LearnerIdentity(ctx)
	if err != nil {
		return nil, err
	}
	ca := learner.CAData
	if len(ca) == 0 {
		ca = admin.CAData
	}
	return &rest.Config{
		Host:            admin.Host,
		BearerToken:     learner.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca, ServerName: admin.TLSClientConfig.ServerName},
		Timeout:         admin.Timeout,
	}, nil
}

// runSplit runs a round some of whose checks read a node's files: those
// on the host (runNodeChecks), the others in one checker round, each with
// what r knows of it; the results in r's order.
func (e *Live) runSplit(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	sub := r
	sub.Checks, sub.Since, sub.Heads, sub.Marks = nil, nil, nil, nil
	var onNode []lab.Check
	for i := range r.Checks {
		c := r.Checks[i]
		if nodeCheck(&c) {
			onNode = append(onNode, c)
			continue
		}
		sub.Checks = append(sub.Checks, c)
		sub.Since = keepAt(sub.Since, r.Since, i, time.Time{})
		sub.Heads = keepAt(sub.Heads, r.Heads, i, "")
		sub.Marks = keepAt(sub.Marks, r.Marks, i, "")
	}
	lang := r.Lang
	if lang == "" {
		lang = msg.Choose(e.Lab.Metadata.Language, os.Getenv)
	}
	nodeResults := e.runNodeChecks(ctx, onNode, lang)
	var got []checks.Result
	if len(sub.Checks) > 0 {
		var err error
		if got, err = e.RunChecks(ctx, sub); err != nil {
			return nil, err
		}
	}
	results := make([]checks.Result, 0, len(r.Checks))
	for i := range r.Checks {
		if nodeCheck(&r.Checks[i]) {
			results, nodeResults = append(results, nodeResults[0]), nodeResults[1:]
			continue
		}
		if len(got) == 0 {
			return nil, fmt.Errorf("the checker answered fewer results than checks")
		}
		results, got = append(results, got[0]), got[1:]
	}
	return results, nil
}

// keepAt appends to dst what of src is at i, zero when src is shorter,
// and nothing when src is nil.
func keepAt[T any](dst, src []T, i int, zero T) []T {
	switch {
	case src == nil:
		return dst
	case i < len(src):
		return append(dst, src[i])
	default:
		return append(dst, zero)
	}
}
