package kind

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
	"github.com/labctl/labctl/sandbox"
)

// kindRuntime is the runtime of a lab on this machine: a kind cluster, the
// sandbox container and the grader container beside it, on the local
// Docker engine, whose connection it owns.
type kindRuntime struct {
	lab    *lab.Lab
	engine *docker.Engine
	// container is the sandbox container's name.
	container string
	// grader is the grader container's name: checks run there, out of the
	// learner's reach.
	grader string
	// cluster is the kind cluster's name.
	cluster string
	// node is the ID of the control-plane node's container, which the
	// kept credentials belong to.
	node     string
	settings sandbox.Settings
	// admin is the cluster's admin config, read from the node once.
	admin *rest.Config
	// up says how RecreateCluster brings the lab up again: what Up was
	// given, or WithUpOptions.
	up Options
	// pristine is the sandbox as RecreateSandbox last left it, for
	// RestoreSandbox; nil when there is none to go back to.
	pristine *pristine
	// kept are the sandboxes KeepSandbox kept, by key, for
	// RestoreKeptSandbox.
	kept map[string]*pristine
	// probe is the container of the probe under way (RunAdminScript), ""
	// between probes; probeMu guards it.
	probe   string
	probeMu sync.Mutex
}

var (
	_ provision.Runtime       = (*kindRuntime)(nil)
	_ provision.SandboxKeeper = (*kindRuntime)(nil)
)

// ConnectOption adjusts Connect.
type ConnectOption func(*kindRuntime)

// WithUpOptions says how RecreateCluster brings the lab up again (status
// lines, catalogue, fixtures, images, the checker binary), as Up was given
// them.
func WithUpOptions(o Options) ConnectOption {
	return func(k *kindRuntime) { k.up = o }
}

// Connect returns the live lab of a lab that is up on this machine, or
// ErrNotUp.
func Connect(ctx context.Context, l *lab.Lab, opts ...ConnectOption) (*provision.Live, error) {
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		return nil, err
	}
	k := newKindRuntime(l, engine)
	for _, o := range opts {
		o(k)
	}
	live, err := k.connect(ctx)
	if err != nil {
		engine.Close()
		return nil, err
	}
	return live, nil
}

func (k *kindRuntime) connect(ctx context.Context) (*provision.Live, error) {
	name := k.lab.Metadata.Name
	// The sandbox, the grader and the cluster's node are looked at at
	// once, each once; what they say is judged in that order.
	var (
		looks      sync.WaitGroup
		gst, node  docker.ContainerState
		gerr, nerr error
	)
	looks.Go(func() { gst, gerr = k.engine.State(ctx, k.grader) })
	if k.lab.HasCluster() {
		looks.Go(func() { node, nerr = k.engine.State(ctx, controlPlaneNode(name)) })
	}
	st, settings, err := k.engine.SandboxState(ctx, k.container)
	looks.Wait()
	if err != nil {
		return nil, err
	}
	if !st.Running {
		if st.Exists && Stopped(name) {
			return nil, fmt.Errorf("lab %s: %w", name, ErrStopped)
		}
		return nil, fmt.Errorf("sandbox %s is not running: %w", k.container, provision.ErrNotUp)
	}
	k.settings = settings
	if k.settings.CheckerDir, err = checkerDir(name); err != nil {
		return nil, err
	}
	if k.lab.HasCluster() {
		if k.settings.AuditDir, err = AuditDir(name); err != nil {
			return nil, err
		}
	}
	if gerr != nil {
		return nil, gerr
	}
	if !gst.Running {
		return nil, fmt.Errorf("grader container %s is not running: %w", k.grader, provision.ErrNotUp)
	}
	if !k.lab.HasCluster() {
		// No cluster, and no identity in one.
		return provision.NewLive(k.lab, k, provision.Identity{}, provision.Identity{}), nil
	}
	if nerr != nil {
		return nil, nerr
	}
	if !node.Exists {
		return nil, fmt.Errorf("cluster %s does not exist: %w", k.cluster, provision.ErrNotUp)
	}
	if !node.Running {
		return nil, fmt.Errorf("cluster %s is not running (its node is %s): %w", k.cluster, node.Status, provision.ErrNotUp)
	}
	k.node = node.ID
	dir, err := k.StateDir()
	if err != nil {
		return nil, err
	}
	if c, ok := loadCredentials(dir, node.ID); ok {
		grader := provision.Identity{Token: c.Grader.Token, CAData: c.Grader.CAData, Expires: c.GraderExpires}
		return provision.NewLive(k.lab, k, c.Learner, grader), nil
	}
	// Nothing kept: both identities are issued now, and kept for the
	// next command.
	live := provision.NewLive(k.lab, k, provision.Identity{}, provision.Identity{})
	if _, err := live.LearnerIdentity(ctx); err != nil {
		return nil, err
	}
	if _, err := live.GraderCredentials(ctx); err != nil {
		return nil, err
	}
	return live, nil
}

// newKindRuntime is the runtime of lab l, before anything is known of its
// state.
func newKindRuntime(l *lab.Lab, engine *docker.Engine) *kindRuntime {
	name := l.Metadata.Name
	return &kindRuntime{lab: l, engine: engine, container: sandbox.ContainerName(name),
		grader: sandbox.GraderName(name), cluster: provision.ClusterName(name), up: Options{Lab: l}}
}

// controlPlaneNode is the container kind runs the lab's single node in.
func controlPlaneNode(lab string) string { return provision.ClusterName(lab) + "-control-plane" }

func (k *kindRuntime) Name() string              { return k.cluster }
func (k *kindRuntime) SandboxServer() string     { return ControlPlaneServer(k.lab.Metadata.Name) }
func (k *kindRuntime) GraderServer() string      { return ControlPlaneServer(k.lab.Metadata.Name) }
func (k *kindRuntime) StateDir() (string, error) { return stateDir(k.lab.Metadata.Name) }
func (k *kindRuntime) Close() error              { return k.engine.Close() }
func (k *kindRuntime) BackupHome(ctx context.Context, w io.Writer) error {
	return copyHome(ctx, k.engine, k.container, w)
}

// Admin reads the cluster's admin config (host address) from the
// control-plane node.
func (k *kindRuntime) Admin(ctx context.Context) (*rest.Config, error) {
	if k.admin != nil {
		return k.admin, nil
	}
	cfg, err := newKind(k.lab.Metadata.Name, "", nil).adminConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", err, provision.ErrNotUp)
	}
	k.admin = cfg
	return cfg, nil
}

// Keep saves the identities in the lab's state directory for the cluster
// whose node the runtime knows: they only spare the next command a trip to
// the cluster, so a failure to save them is no error.
func (k *kindRuntime) Keep(learner, grader provision.Identity) {
	dir, err := k.StateDir()
	if err != nil || k.node == "" {
		return
	}
	_ = saveCredentials(dir, savedCredentials{
		Node:          k.node,
		Grader:        checks.KubeCredentials{Server: k.GraderServer(), Token: grader.Token, CAData: grader.CAData},
		GraderExpires: grader.Expires,
		Learner:       learner,
	})
}

// Features are kind's: it keeps the identities in the lab's state
// directory, ends a probe by removing its container and volume, and keeps
// the sandbox to put it back in place.
func (k *kindRuntime) Features() provision.Features {
	return provision.Features{Keep: k.Keep, EndProbe: k.EndProbe, Sandbox: k, SandboxFS: k.SandboxFS, NodeFile: k.CopyNodeFile, NodeProcesses: k.NodeProcesses}
}

// Exec runs a process in the sandbox and returns its exit code.
func (k *kindRuntime) Exec(ctx context.Context, o provision.ExecOptions) (int, error) {
	return k.engine.Exec(ctx, k.container, docker.ExecOptions{Cmd: o.Cmd, Env: o.Env, WorkDir: o.WorkDir, User: o.User,
		Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr})
}

// Attach starts a process on a PTY in the sandbox.
func (k *kindRuntime) Attach(ctx context.Context, o provision.ShellOptions) (provision.Shell, error) {
	sh, err := k.engine.AttachShell(ctx, k.container, docker.ShellOptions{Cmd: o.Cmd, Env: o.Env, WorkDir: o.WorkDir, User: o.User,
		Rows: o.Rows, Cols: o.Cols})
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return sh, nil
}

// WriteFile copies data into the sandbox, readable by root only.
func (k *kindRuntime) WriteFile(ctx context.Context, path string, data []byte) error {
	return k.engine.CopyFile(ctx, k.container, path, 0o600, bytes.NewReader(data), int64(len(data)))
}

// ExecChecker runs the checker once in the grader container: labctl's own
// static binary (or the checker-binary setting), placed there for the run
// (provision.RunChecker runs the round).
func (k *kindRuntime) ExecChecker(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	bin, err := docker.CheckerBinary(k.up.CheckerBinary)
	if err != nil {
		return -1, err
	}
	code, err := k.engine.ExecChecker(ctx, k.grader, bin, []string{"__check"}, stdin, stdout, stderr)
	if err != nil {
		return code, fmt.Errorf("running checks in %s: %w", k.grader, err)
	}
	return code, nil
}

// AuditDir is where the grader mounts the audit log, when the lab has one.
func (k *kindRuntime) AuditDir() string {
	if k.settings.AuditDir != "" {
		return sandbox.AuditMount
	}
	return ""
}

// readyWait bounds the wait for the sandbox to reach the API server.
const readyWait = 90 * time.Second

// waitReady waits until the API server answers the learner's kubectl from
// inside the sandbox.
func (k *kindRuntime) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	var last bytes.Buffer
	for {
		last.Reset()
		code, err := k.Exec(ctx, provision.ExecOptions{
			Cmd:    []string{"kubectl", "get", "--raw", "/readyz"},
			Env:    []string{"HOME=/root"},
			Stdout: &last, Stderr: &last,
		})
		if err == nil && code == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the sandbox cannot reach the API server within %s: %s", readyWait, provision.LastLines(last.String(), 5))
		case <-time.After(time.Second):
		}
	}
}

// apiReady asks the API server's /readyz with the admin credentials.
func apiReady(ctx context.Context, cfg *rest.Config) error {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}
