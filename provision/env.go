package provision

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/docker"
	"github.com/labctl/labctl/internal/grading"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// ErrNotUp says the lab's cluster or sandbox is missing or stopped.
var ErrNotUp = errors.New("the lab is not up: run `labctl up`")

// Env is a lab's live environment: its kind cluster, its sandbox and the
// grader container beside it. It is the one type every command reaches a
// live lab through, each by a small interface of its own: grading's
// Checker, ScriptRunner and Prober (RunChecks, RunScript, RunAdminScript),
// reset's and labtest's Environment (BackupHome, RecreateSandbox,
// ResetNamespaces, RecreateCluster, RunScripts), and what the shell and
// exec need (AttachShell, ExecLogin, ExecInTerminal). Its Docker connection
// and container names are its own. Close it when done.
type Env struct {
	Lab *lab.Lab
	// engine is the Docker connection the Env owns.
	engine *docker.Engine
	// container is the sandbox container's name.
	container string
	// grader is the grader container's name: checks run there, out of the
	// learner's reach.
	grader string
	// cluster is the kind cluster's name.
	cluster string
	// graderKube are the read-only credentials the checker uses, with the
	// API server's address inside the kind network.
	graderKube *checks.KubeCredentials

	// admin is the cluster's admin config (host address), read when first
	// needed; it never enters the sandbox.
	admin *rest.Config
	// learner is the learner's identity, for a recreated sandbox.
	learner         identity
	settings        sandbox.Settings
	checkerOverride string
	// up says how RecreateCluster brings the lab up again: what Up was
	// given, or WithUpOptions.
	up Options
}

// ConnectOption adjusts Connect.
type ConnectOption func(*Env)

// WithCheckerBinary makes RunChecks copy this static binary into the
// sandbox instead of the running labctl (the checker-binary setting).
func WithCheckerBinary(path string) ConnectOption {
	return func(e *Env) { e.checkerOverride = path }
}

// WithUpOptions says how RecreateCluster brings the lab up again (status
// lines, catalogue, fixtures, images), as Up was given them; its checker
// binary, when set, is WithCheckerBinary's.
func WithUpOptions(o Options) ConnectOption {
	return func(e *Env) {
		e.up = o
		if o.CheckerBinary != "" {
			e.checkerOverride = o.CheckerBinary
		}
	}
}

// Connect returns the live environment of a lab that is up, or ErrNotUp.
func Connect(ctx context.Context, l *lab.Lab, opts ...ConnectOption) (*Env, error) {
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		return nil, err
	}
	env, err := connect(ctx, engine, l)
	if err != nil {
		engine.Close()
		return nil, err
	}
	for _, o := range opts {
		o(env)
	}
	return env, nil
}

func connect(ctx context.Context, engine *docker.Engine, l *lab.Lab) (*Env, error) {
	name := l.Metadata.Name
	env := newEnv(l, engine)
	st, err := engine.State(ctx, env.container)
	if err != nil {
		return nil, err
	}
	if !st.Running {
		return nil, fmt.Errorf("sandbox %s is not running: %w", env.container, ErrNotUp)
	}
	if env.settings, err = engine.SandboxSettings(ctx, env.container); err != nil {
		return nil, err
	}
	if env.settings.CheckerDir, err = checkerDir(name); err != nil {
		return nil, err
	}
	if env.settings.AuditDir, err = AuditDir(name); err != nil {
		return nil, err
	}
	gst, err := engine.State(ctx, env.grader)
	if err != nil {
		return nil, err
	}
	if !gst.Running {
		return nil, fmt.Errorf("grader container %s is not running: %w", env.grader, ErrNotUp)
	}
	node, err := engine.State(ctx, controlPlaneNode(name))
	if err != nil {
		return nil, err
	}
	if !node.Exists {
		return nil, fmt.Errorf("cluster %s does not exist: %w", env.cluster, ErrNotUp)
	}
	if !node.Running {
		return nil, fmt.Errorf("cluster %s is not running (its node is %s): %w", env.cluster, node.Status, ErrNotUp)
	}
	dir, err := stateDir(name)
	if err != nil {
		return nil, err
	}
	if c, ok := loadCredentials(dir, node.ID); ok {
		env.graderKube = &c.Grader
		env.learner = c.Learner
		if graderNeedsRenewal(c.GraderExpires, time.Now()) {
			if err := env.renewGrader(ctx, dir, node.ID); err != nil {
				return nil, err
			}
		}
		return env, nil
	}
	if err := env.issueCredentials(ctx); err != nil {
		return nil, err
	}
	// The saved credentials only spare the next call a trip to the
	// cluster: when they cannot be written, that call issues new ones.
	_ = env.saveCredentials(dir, node.ID)
	return env, nil
}

// newEnv is the Env of lab l, before anything is known of its state.
func newEnv(l *lab.Lab, engine *docker.Engine) *Env {
	name := l.Metadata.Name
	return &Env{Lab: l, engine: engine, container: sandbox.ContainerName(name),
		grader: sandbox.GraderName(name), cluster: ClusterName(name), up: Options{Lab: l}}
}

// controlPlaneNode is the container kind runs the lab's single node in.
func controlPlaneNode(lab string) string { return ClusterName(lab) + "-control-plane" }

// adminConfig returns the cluster's admin config (host address), reading it
// from the control-plane node the first time.
func (e *Env) adminConfig(ctx context.Context) (*rest.Config, error) {
	if e.admin != nil {
		return e.admin, nil
	}
	cfg, err := newKind(e.Lab.Metadata.Name, "", nil).adminConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", err, ErrNotUp)
	}
	e.admin = cfg
	return cfg, nil
}

// issueCredentials issues the grader and the learner new tokens through the
// admin's credentials.
func (e *Env) issueCredentials(ctx context.Context) error {
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return fmt.Errorf("connecting to cluster %s: %w", e.cluster, err)
	}
	learner, grader, err := issueTokens(ctx, cs, admin.CAData)
	if err != nil {
		return err
	}
	e.learner = learner
	e.graderKube = &checks.KubeCredentials{Server: ControlPlaneServer(e.Lab.Metadata.Name), Token: grader.Token, CAData: grader.CAData}
	return nil
}

// saveCredentials keeps the tokens in the lab's state directory dir for the
// cluster whose node has ID node.
func (e *Env) saveCredentials(dir, node string) error {
	return saveCredentials(dir, savedCredentials{
		Node:    node,
		Grader:  *e.graderKube,
		Learner: e.learner,
	})
}

// Close releases the Docker connection.
func (e *Env) Close() error { return e.engine.Close() }

// RunChecks runs the checks in one checker round in the grader container,
// with the grader's credentials, until ctx ends: callers run it through
// checks.RunRound, which sets the round's deadline. The results are the
// checker's verdicts only: names, order and status are verified, and
// description, points and optional are the lab's (checks.ReadResponse).
func (e *Env) RunChecks(ctx context.Context, cs []lab.Check) ([]checks.Result, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	bin, err := docker.CheckerBinary(e.checkerOverride)
	if err != nil {
		return nil, err
	}
	// The grader's token lives an hour: a shell open longer gets a new
	// one here, when the one it has nears its end.
	if err := e.renewGraderSoon(ctx); err != nil {
		return nil, err
	}
	auditDir, since := e.auditRequest(cs)
	resp, err := e.engine.RunChecker(ctx, e.grader, bin, checks.Request{
		Root: "/", Kube: e.graderKube, Areas: e.learnerAreas(), Lang: msg.Choose(e.Lab.Metadata.Language, os.Getenv), Checks: cs,
		ProbeStart: checks.ProbeStartFrom(ctx),
		AuditDir:   auditDir, Since: since,
	})
	if err != nil {
		return nil, fmt.Errorf("running checks in %s: %w", e.grader, err)
	}
	return resp.Results, nil
}

// learnerAreas are the directories of the learner's files a check may
// follow a link into: the home, the work directory and the fixtures.
func (e *Env) learnerAreas() []string {
	areas := []string{"/root"}
	for _, d := range []string{e.Lab.Sandbox.WorkDir, e.Lab.Sandbox.Fixtures} {
		if d != "" && !slices.Contains(areas, d) {
			areas = append(areas, d)
		}
	}
	return areas
}

// exec runs a process in the sandbox and returns its exit code.
func (e *Env) exec(ctx context.Context, o docker.ExecOptions) (int, error) {
	return e.engine.Exec(ctx, e.container, o)
}

// RunScript runs a bash script in the sandbox as the learner would: a login
// shell, as root, HOME=/root, in the lab's workDir. It returns the script's
// exit code.
func (e *Env) RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	return e.exec(ctx, e.loginExec([]string{"bash", "-l", "-c", script}, stdout, stderr))
}

// ExecLogin runs cmd in the sandbox like the learner's shell runs it (as
// root, HOME=/root, in the lab's workDir) with the given streams, and
// returns its exit code.
func (e *Env) ExecLogin(ctx context.Context, cmd []string, in io.Reader, out, errOut io.Writer) (int, error) {
	o := e.loginExec(cmd, out, errOut)
	o.Stdin = in
	return e.exec(ctx, o)
}

// loginExec describes cmd run like the learner's shell runs it: as root,
// HOME=/root, in the lab's workDir.
func (e *Env) loginExec(cmd []string, stdout, stderr io.Writer) docker.ExecOptions {
	return docker.ExecOptions{
		Cmd:     cmd,
		Env:     []string{"HOME=/root"},
		WorkDir: e.workDir(),
		User:    "root",
		Stdout:  stdout,
		Stderr:  stderr,
	}
}

func (e *Env) workDir() string {
	if e.Lab.Sandbox.WorkDir != "" {
		return e.Lab.Sandbox.WorkDir
	}
	return "/root"
}

// runStepSetup runs, in order, the setup script of every step from the
// first through the step with id upTo ("" means only the first), each as
// labctl check runs the setup of a step the learner reaches
// (grading.RunStepSetup). A script that fails stops it with a
// *grading.ScriptError whose retry is bringing the lab up again. out receives the
// scripts' output.
func (e *Env) runStepSetup(ctx context.Context, upTo string, out io.Writer) error {
	steps, err := stepsThrough(e.Lab.Steps, upTo)
	if err != nil {
		return err
	}
	for i := range steps {
		if err := grading.RunStepSetup(ctx, e, &steps[i], out); err != nil {
			return grading.Retrying(err, grading.Retry{Situation: grading.OwnMachine(), During: grading.LabUp})
		}
	}
	return nil
}

// stepsThrough returns steps up to and including the one with id upTo.
func stepsThrough(steps []lab.Step, upTo string) ([]lab.Step, error) {
	if len(steps) == 0 {
		return nil, nil
	}
	if upTo == "" {
		return steps[:1], nil
	}
	for i, s := range steps {
		if s.ID == upTo {
			return steps[:i+1], nil
		}
	}
	return nil, fmt.Errorf("the lab has no step %q", upTo)
}

// writeKubeconfig writes the learner's kubeconfig to /root/.kube/config.
func (e *Env) writeKubeconfig(ctx context.Context, learner identity) error {
	ns := "default"
	if len(e.Lab.Cluster.Namespaces) > 0 {
		ns = e.Lab.Cluster.Namespaces[0]
	}
	ca := learner.CAData
	if len(ca) == 0 && e.admin != nil {
		ca = e.admin.CAData
	}
	b, err := learnerKubeconfig(e.Lab.Metadata.Name, ControlPlaneServer(e.Lab.Metadata.Name), ca, learner.Token, ns)
	if err != nil {
		return err
	}
	if err := e.engine.CopyFile(ctx, e.container, "/root/.kube/config", 0o600, bytes.NewReader(b), int64(len(b))); err != nil {
		return fmt.Errorf("writing the learner kubeconfig: %w", err)
	}
	return nil
}

// readyWait bounds the wait for the sandbox to reach the API server.
const readyWait = 90 * time.Second

// waitReady waits until the API server answers the learner's kubectl from
// inside the sandbox.
func (e *Env) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyWait)
	defer cancel()
	var last bytes.Buffer
	for {
		last.Reset()
		code, err := e.exec(ctx, docker.ExecOptions{
			Cmd:    []string{"kubectl", "get", "--raw", "/readyz"},
			Env:    []string{"HOME=/root"},
			Stdout: &last, Stderr: &last,
		})
		if err == nil && code == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the sandbox cannot reach the API server within %s: %s", readyWait, lastLines(last.String(), 5))
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

func lastLines(s string, n int) string {
	lines := bytes.Split(bytes.TrimSpace([]byte(s)), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// ExecInTerminal runs cmd like ExecLogin does, but with a PTY attached to
// the user's terminal; term is the TERM to give it.
func (e *Env) ExecInTerminal(ctx context.Context, cmd []string, in, out *os.File, term string) (int, error) {
	env := []string{"HOME=/root"}
	if term != "" {
		env = append(env, "TERM="+term)
	}
	return e.engine.ExecInTerminal(ctx, e.container, in, out, docker.ShellOptions{Cmd: cmd, Env: env, WorkDir: e.workDir(), User: "root"})
}

// AttachShell starts the learner's login shell in the sandbox on a PTY.
func (e *Env) AttachShell(ctx context.Context, o docker.ShellOptions) (*docker.AttachedShell, error) {
	return e.engine.AttachShell(ctx, e.container, o)
}

// LearnerConfig is the learner's identity for a client on the host: the
// learner's token against the API server's host-facing address, as the
// browser page's previews of the lab's Services use it.
func (e *Env) LearnerConfig(ctx context.Context) (*rest.Config, error) {
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return nil, err
	}
	if e.learner.Token == "" {
		return nil, fmt.Errorf("the learner's credentials are missing: %w", ErrNotUp)
	}
	ca := e.learner.CAData
	if len(ca) == 0 {
		ca = admin.CAData
	}
	return &rest.Config{
		Host:            admin.Host,
		BearerToken:     e.learner.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca, ServerName: admin.TLSClientConfig.ServerName},
		Timeout:         admin.Timeout,
	}, nil
}
