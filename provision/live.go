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
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/flock"
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
	// NodeProcesses lists a node's processes from the host (kind's,
	// through the engine), for the service checks; without it such checks
	// say that this runtime cannot see a node's processes.
	NodeProcesses NodeProcesses
	// NodeAccess, on a runtime that serves node access itself (a class's
	// learner node, whose listener the class starts), writes into the
	// sandbox what the node command needs; without it up runs a
	// node-access Pod on each node (grantNodeAccess) and the sandbox gets
	// their certificate (writeNodeCommand).
	NodeAccess func(ctx context.Context) error
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

// clientFor makes the client Live issues tokens with (a fake one in unit
// tests).
var clientFor = func(cfg *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(cfg) }

// learnerRenewBefore is how much of the learner's token must be left when
// a stopped lab is started again; a shorter rest is renewed.
const learnerRenewBefore = 24 * time.Hour

// workDir and fixturesDir are the lab's, which lab.Default filled in when
// the lab was loaded.
func (e *Live) workDir() string { return e.Lab.Sandbox.WorkDir }

func (e *Live) fixturesDir() string { return e.Lab.Sandbox.Fixtures }

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
	if e.feat.NodeAccess != nil {
		ctx = NodeAccessServed(ctx)
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
