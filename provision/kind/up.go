// Package kind is the runtime of a lab on the learner's own machine: a kind
// cluster (it is the only importer of sigs.k8s.io/kind, its cluster file
// typed once) and, beside it on the local Docker engine, the sandbox and
// grader containers. Up brings a lab up (idempotent: it repairs what is not
// healthy), Connect reaches one that is up, Down and DownKeepingHome take
// it down, Inspect reports its state, OpenHome reaches the home volume of
// a lab that is down. What it returns is a provision.Live over kind's
// Runtime, which keeps its Docker connection and container names to
// itself; probes run in a container of their own on the kind network.
package kind

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
	"github.com/labctl/labctl/sandbox"
)

// Options control Up.
type Options struct {
	Lab *lab.Lab
	// Fixtures is the lab's fixtures directory; nil means none.
	Fixtures fs.FS
	// LabDir is the directory holding lab.yaml, where the lab's workload
	// images are built from; "" for the built-in lab.
	LabDir string
	// Retain keeps what a failed or interrupted Up created.
	Retain bool
	// Status receives one line per step; nil prints nothing.
	Status *statusline.Logger
	// Catalog words the status lines in the learner's language; nil is English.
	Catalog *msg.Catalog
	// Log, when set, receives kind's messages and the setup scripts' output.
	Log io.Writer
	// NodeImage and SandboxImage override the images (and the lab's own).
	NodeImage, SandboxImage string
	// CheckerBinary overrides the static binary copied in to run checks.
	CheckerBinary string
	// CurrentStep is the learner's current step: on a fresh lab the setup
	// of every step up to and including it runs. Empty means the first.
	CurrentStep string
	// SkipPreflight skips the machine checks.
	SkipPreflight bool
}

// undo is a cleanup of something a run created.
type undo struct {
	what string
	fn   func(context.Context) error
}

// upRun is one Up in progress.
type upRun struct {
	opts   Options
	lab    *lab.Lab
	st     *statusline.Logger
	engine *docker.Engine
	kind   *kind
	mu     sync.Mutex // guards undos, added to from two goroutines
	undos  []undo
	// fresh is set when this run made the cluster or the home volume: the
	// step setup must run.
	fresh   bool
	dir     string // the lab's state directory
	cluster ClusterConfig
	images  imageRefs
	// workloads are the lab's workload images the host's engine has.
	workloads []string
}

// Up brings the lab's environment up, reusing what is healthy and repairing
// what is not, and returns it live. When it fails or ctx ends, what this run
// created is removed unless opts.Retain.
func Up(ctx context.Context, opts Options) (env *provision.Live, err error) {
	if opts.Lab == nil || opts.Lab.Metadata.Name == "" {
		return nil, errors.New("provision: no lab given")
	}
	if Stopped(opts.Lab.Metadata.Name) {
		// up would find the stopped cluster not answering and make it
		// afresh, losing what the learner made in it.
		return nil, fmt.Errorf("lab %s is stopped: run `labctl start` to resume it as it was (or `labctl down` first to make it afresh)", opts.Lab.Metadata.Name)
	}
	r := &upRun{opts: opts, lab: opts.Lab, st: opts.Status}
	if r.st == nil {
		r.st = statusline.Discard()
	}
	defer func() {
		if err == nil {
			return
		}
		r.st.End(false)
		if !opts.Retain {
			r.rollback()
		}
		if r.engine != nil {
			r.engine.Close()
		}
		env = nil
	}()
	if err := r.step(ctx, r.say(msg.StatusCheckingMachine), r.preflight); err != nil {
		return nil, err
	}
	if r.engine, err = docker.NewEngine(ctx); err != nil {
		return nil, err
	}
	if r.dir, err = stateDir(r.lab.Metadata.Name); err != nil {
		return nil, err
	}
	r.kind = newKind(r.lab.Metadata.Name, filepath.Join(r.dir, adminKubeconfigFile), opts.Log)
	if err := r.step(ctx, r.say(msg.StatusEnsuringImages), r.ensureImages); err != nil {
		return nil, err
	}
	rt := newKindRuntime(r.lab, r.engine)
	rt.up = opts
	env = provision.NewLive(r.lab, rt, provision.Identity{}, provision.Identity{})
	if !r.lab.HasCluster() {
		// The sandbox and the grader only, on no network.
		res := r.createSandbox(ctx, rt, nil)
		if err := r.finish(ctx, env, func() sandboxResult { return res }); err != nil {
			return env, err
		}
		r.st.End(true)
		return env, nil
	}
	// The sandbox needs only the cluster's Docker network, which kind makes
	// first: it is made while kind starts the control plane.
	sandboxCtx, stopSandbox := context.WithCancel(ctx)
	made := make(chan sandboxResult, 1)
	clusterDone := make(chan struct{})
	go func() { made <- r.createSandbox(sandboxCtx, rt, clusterDone) }()
	sandboxMade := sync.OnceValue(func() sandboxResult { return <-made })
	defer func() {
		stopSandbox()
		sandboxMade()
	}()
	err = r.ensureCluster(ctx)
	close(clusterDone)
	if err != nil {
		return nil, err
	}
	if err := r.step(ctx, r.say(msg.StatusSettingUpCluster), func(ctx context.Context) error {
		return r.setupCluster(ctx, env, rt)
	}); err != nil {
		return env, err
	}
	if err := r.loadWorkloads(ctx); err != nil {
		return env, err
	}
	if names := addonsFor(r.lab, r.images.node); len(names) > 0 {
		if err := r.step(ctx, r.say(msg.StatusStartingAddons, strings.Join(names, ", ")), func(ctx context.Context) error {
			return r.startAddons(ctx, rt.admin)
		}); err != nil {
			return env, err
		}
	}
	if err := r.finish(ctx, env, sandboxMade); err != nil {
		return env, err
	}
	if err := r.step(ctx, r.say(msg.StatusReady), rt.waitReady); err != nil {
		return env, err
	}
	r.st.End(true)
	return env, nil
}

// finish waits for the sandbox createSandbox makes (sandboxMade), writes
// the learner's kubeconfig in it and, on a fresh lab, runs the step setup.
func (r *upRun) finish(ctx context.Context, env *provision.Live, sandboxMade func() sandboxResult) error {
	if err := r.step(ctx, r.say(msg.StatusPreparingSandbox), func(ctx context.Context) error {
		res := sandboxMade()
		if res.fresh {
			r.fresh = true
		}
		if res.repaired != "" {
			r.st.Start(r.say(msg.StatusRepairingSandbox))
			r.st.Printf("%s", res.repaired)
		}
		if res.err != nil {
			return res.err
		}
		return env.WriteKubeconfig(ctx)
	}); err != nil {
		return err
	}
	if r.fresh || setupPending(r.dir) {
		return r.step(ctx, r.say(msg.StatusRunningSetup), func(ctx context.Context) error {
			if err := grading.RunLabSetup(ctx, env, env.Lab, r.opts.CurrentStep, grading.OwnMachine(), r.log()); err != nil {
				return err
			}
			return clearSetupPending(r.dir)
		})
	}
	return nil
}

// step runs one titled step with its status line.
func (r *upRun) step(ctx context.Context, title string, fn func(context.Context) error) error {
	r.st.Start(title)
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(ctx)
}

// say words a status line in the learner's language.
func (r *upRun) say(key msg.Key, args ...any) string {
	return r.opts.Catalog.Say(key, args...)
}

func (r *upRun) log() io.Writer {
	if r.opts.Log == nil {
		return io.Discard
	}
	return r.opts.Log
}

func (r *upRun) created(what string, fn func(context.Context) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.undos = append(r.undos, undo{what: what, fn: fn})
}

// rollback removes what this run created, newest first, even though the
// run's context may have ended.
func (r *upRun) rollback() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.undos) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r.st.Start(r.say(msg.StatusRollingBack))
	ok := true
	for i := len(r.undos) - 1; i >= 0; i-- {
		if err := r.undos[i].fn(ctx); err != nil {
			r.st.Printf("%s", r.say(msg.StatusCouldNotRemove, r.undos[i].what, err))
			ok = false
		}
	}
	r.st.End(ok)
}

// ensureCluster reuses a cluster whose API server answers, repairs (deletes
// and recreates) one that does not, and creates a missing one.
func (r *upRun) ensureCluster(ctx context.Context) error {
	if _, ok := r.kind.savedAdmin(ctx); ok {
		r.st.Start(r.say(msg.StatusReusingCluster))
		return nil
	}
	exists, err := r.kind.exists(ctx)
	if err != nil {
		r.st.Start(r.say(msg.StatusCheckingCluster))
		return err
	}
	if exists {
		r.st.Start(r.say(msg.StatusReusingCluster))
		if cfg, err := r.kind.adminConfig(ctx); err == nil && apiReady(ctx, cfg) == nil {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		r.st.End(false)
		r.st.Start(r.say(msg.StatusRepairingCluster))
		if err := r.kind.delete(ctx); err != nil {
			return err
		}
	} else {
		r.st.Start(r.say(msg.StatusCreatingCluster))
	}
	r.fresh = true
	if err := markSetupPending(r.dir); err != nil {
		return err
	}
	r.created("cluster "+r.kind.name, r.kind.delete)
	return r.kind.create(ctx, r.cluster)
}

// setupCluster creates namespaces and identities, and gives env the
// cluster's admin config and the learner's and the grader's identities
// (kept in the lab's state directory for later commands).
func (r *upRun) setupCluster(ctx context.Context, env *provision.Live, rt *kindRuntime) error {
	admin, err := r.kind.adminConfig(ctx)
	if err != nil {
		return err
	}
	rt.admin = admin
	// The setup makes some thirty requests, one after another: client-go's
	// default of 5 a second (burst 10) would make it wait seconds for
	// nothing on the lab's own cluster.
	cfg := rest.CopyConfig(admin)
	cfg.QPS, cfg.Burst = 200, 400
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("connecting to the cluster: %w", err)
	}
	learner, grader, err := provision.SetupCluster(ctx, cs, admin.CAData, r.lab)
	if err != nil {
		return fmt.Errorf("setting up cluster %s: %w", r.kind.name, err)
	}
	if err := provision.WaitBuiltinRoles(ctx, cs, provision.BuiltinRolesWait); err != nil {
		return fmt.Errorf("setting up cluster %s: %w", r.kind.name, err)
	}
	node, err := r.engine.State(ctx, controlPlaneNode(r.lab.Metadata.Name))
	if err != nil {
		return err
	}
	rt.node = node.ID
	env.SetIdentities(admin, learner, grader)
	return nil
}

// sandboxResult is the outcome of createSandbox; fresh is set when it made
// a new home volume, repaired says why it recreated a sandbox that no longer
// ran commands.
type sandboxResult struct {
	fresh    bool
	repaired string
	err      error
}

// createSandbox ensures the home volume and the container, once the
// sandbox's network exists: kind makes it early while creating the
// cluster. It gives up when clusterDone is closed and the network is still
// missing, or when ctx ends. A lab with no cluster has no network (and
// no audit log): its containers are made at once.
func (r *upRun) createSandbox(ctx context.Context, rt *kindRuntime, clusterDone <-chan struct{}) sandboxResult {
	name := r.lab.Metadata.Name
	settings := sandbox.Settings{
		Lab:           name,
		Image:         r.images.sandbox,
		FixturesMount: r.lab.Sandbox.Fixtures,
		WorkDir:       r.lab.Sandbox.WorkDir,
	}
	if r.opts.Fixtures != nil && r.lab.Sandbox.Fixtures != "" {
		base, err := fixturesCache()
		if err != nil {
			return sandboxResult{err: err}
		}
		if settings.FixturesDir, err = materialiseFixtures(r.opts.Fixtures, base, name); err != nil {
			return sandboxResult{err: err}
		}
	}
	dir, err := checkerDir(name)
	if err != nil {
		return sandboxResult{err: err}
	}
	settings.CheckerDir = dir
	if r.lab.HasCluster() {
		if settings.AuditDir, err = AuditDir(name); err != nil {
			return sandboxResult{err: err}
		}
	} else {
		settings.Network = sandbox.NoNetwork
	}
	spec, err := sandbox.BuildSpec(settings)
	if err != nil {
		return sandboxResult{err: err}
	}
	rt.settings = settings
	if r.lab.HasCluster() {
		if err := r.waitNetwork(ctx, string(spec.Host.NetworkMode), clusterDone); err != nil {
			return sandboxResult{err: err}
		}
	}
	var res sandboxResult
	vol := sandbox.VolumeName(name)
	made, err := r.engine.EnsureVolume(ctx, vol, sandbox.Labels(name, sandbox.RoleHome))
	if err != nil {
		return sandboxResult{err: err}
	}
	if made {
		res.fresh = true
		if err := markSetupPending(r.dir); err != nil {
			return sandboxResult{fresh: true, err: err}
		}
		r.created("volume "+vol, func(ctx context.Context) error { return r.engine.RemoveVolume(ctx, vol) })
	}
	if res.repaired, err = r.repairSandbox(ctx, spec.Name); err != nil {
		return sandboxResult{fresh: res.fresh, err: err}
	}
	made, err = r.engine.EnsureSandbox(ctx, spec)
	if made {
		r.created("container "+spec.Name, func(ctx context.Context) error { return r.engine.Remove(ctx, spec.Name) })
	}
	if err != nil {
		res.err = err
		return res
	}
	res.err = r.ensureGrader(ctx, settings)
	return res
}

// ensureGrader makes the grader container run beside the sandbox: it mounts
// the home volume, so it comes after it.
func (r *upRun) ensureGrader(ctx context.Context, settings sandbox.Settings) error {
	spec, err := sandbox.BuildGraderSpec(settings)
	if err != nil {
		return err
	}
	made, err := r.engine.EnsureSandbox(ctx, spec)
	if made {
		r.created("container "+spec.Name, func(ctx context.Context) error { return r.engine.Remove(ctx, spec.Name) })
	}
	return err
}

// networkPoll is how often createSandbox looks for the kind network.
const networkPoll = 100 * time.Millisecond

// waitNetwork waits until the Docker network exists, at most until a last
// look after clusterDone is closed.
func (r *upRun) waitNetwork(ctx context.Context, name string, clusterDone <-chan struct{}) error {
	last := false
	for {
		ok, err := r.engine.NetworkExists(ctx, name)
		if err != nil || ok {
			return err
		}
		if last {
			return fmt.Errorf("network %s of the sandbox is missing after the cluster was made (kind makes it): run `labctl up` again", name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clusterDone:
			last = true
		case <-time.After(networkPoll):
		}
	}
}

// setupPendingFile, in the lab's state directory, says that the lab's
// cluster or home volume was made and its step setup has not run to the
// end: an up interrupted in between, with --retain, leaves it, and the next
// up runs the setup.
const setupPendingFile = "setup-pending"

func markSetupPending(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("noting that the step setup is to run: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, setupPendingFile), nil, 0o600); err != nil {
		return fmt.Errorf("noting that the step setup is to run: %w", err)
	}
	return nil
}

func setupPending(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, setupPendingFile))
	return err == nil
}

func clearSetupPending(dir string) error {
	if err := os.Remove(filepath.Join(dir, setupPendingFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("noting that the step setup ran: %w", err)
	}
	return nil
}

// fixturesCache is where fixtures are written out for bind mounts.
func fixturesCache() (string, error) {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" {
		var err error
		if dir, err = os.UserCacheDir(); err != nil {
			return "", fmt.Errorf("finding a cache directory for the fixtures: %w (set XDG_CACHE_HOME)", err)
		}
	}
	return filepath.Join(dir, "labctl", "fixtures"), nil
}

// checkerDir is the host directory the sandbox mounts read-only for the
// checker binary: <state dir>/checker.
func checkerDir(labName string) (string, error) {
	state, err := stateDir(labName)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(state, "checker")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the checker directory %s: %w", dir, err)
	}
	return dir, nil
}

// stateDir is the lab's host state directory (shared with progress/).
func stateDir(labName string) (string, error) {
	return statedir.Dir(os.Getenv, labName)
}
