package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/docker"
	"github.com/labctl/labctl/internal/grading"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/progress"
	"github.com/labctl/labctl/lab"
)

// Learner is one learner's live lab on the class cluster. It meets the same
// interfaces as Env (see env_test.go): check, grade, reset, the shell and
// labctl test use either. labctl reaches the learner's API server through a
// port-forward to the control-plane Pod, with the admin certificate it made.
// Close it when done.
type Learner struct {
	Lab  *lab.Lab
	Name string

	class *Class
	ns    string
	fwd   *forward
	// admin is the learner's control plane's admin config through fwd.
	admin   *rest.Config
	adminCS kubernetes.Interface
	ca      []byte
	learner identity
	// grader are the checker's credentials: the API server from inside
	// the control-plane Pod; graderExpires is when its token ends.
	grader        *checks.KubeCredentials
	graderExpires time.Time
}

// ClassStateDir is where the instructor's labctl keeps what it records of
// one learner of a class (progress, backups of /root).
func ClassStateDir(labName, learner string) (string, error) {
	dir, err := stateDir(labName)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "class", learner), nil
}

// Connect reaches a learner's lab that is up (ErrNoLearner when there is
// no such learner, ErrNotUp when it is not ready).
func (c *Class) Connect(ctx context.Context, learner string) (*Learner, error) {
	ns := c.Namespace(learner)
	n, err := c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || !c.owns(n, learner) {
		return nil, fmt.Errorf("learner %s (namespace %s): %w", learner, ns, ErrNoLearner)
	}
	if p := c.problem(ctx, ns); p != "" {
		return nil, fmt.Errorf("learner %s: %s: %w", learner, p, ErrNotUp)
	}
	e, err := c.connect(ctx, learner)
	if err != nil {
		return nil, err
	}
	if err := e.issue(ctx); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// connect forwards a port to the learner's API server and makes the admin
// client; it issues no credentials.
func (c *Class) connect(ctx context.Context, learner string) (*Learner, error) {
	ns := c.Namespace(learner)
	s, err := c.cs.CoreV1().Secrets(ns).Get(ctx, certsSecret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the certificates of %s: %w", ns, err)
	}
	admin, err := clientcmd.RESTConfigFromKubeConfig(s.Data[certAdminConf])
	if err != nil {
		return nil, fmt.Errorf("reading the admin identity of %s: %w", ns, err)
	}
	fwd, err := portForward(ctx, c.rest, c.cs, ns, vcpPod, vcpPort)
	if err != nil {
		return nil, err
	}
	admin.Host = fmt.Sprintf("https://127.0.0.1:%d", fwd.Port)
	admin.ServerName = "localhost"
	admin.QPS, admin.Burst = 200, 400
	admin.Timeout = 30 * time.Second
	admin.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		fwd.Close()
		return nil, err
	}
	return &Learner{Lab: c.cfg.Lab, Name: learner, class: c, ns: ns, fwd: fwd, admin: admin, adminCS: cs, ca: s.Data[certCA]}, nil
}

// issue issues the grader a token; the learner's is issued when first
// needed (learnerToken): status and grade never need it.
func (e *Learner) issue(ctx context.Context) error {
	grader, err := issueToken(ctx, e.adminCS, GraderAccount, e.ca, graderTokenLifetime)
	if err != nil {
		return fmt.Errorf("learner %s: %w", e.Name, err)
	}
	e.setGrader(grader)
	return nil
}

// learnerToken is the learner's token, issued the first time.
func (e *Learner) learnerToken(ctx context.Context) (string, error) {
	if e.learner.Token == "" {
		learner, err := issueToken(ctx, e.adminCS, LearnerAccount, e.ca, learnerTokenLifetime)
		if err != nil {
			return "", fmt.Errorf("learner %s: %w", e.Name, err)
		}
		e.learner = learner
	}
	return e.learner.Token, nil
}

func (e *Learner) setGrader(grader identity) {
	e.grader = &checks.KubeCredentials{Server: vcpInternalServer, Token: grader.Token, CAData: e.ca}
	e.graderExpires = grader.Expires
}

// renewGraderSoon issues the grader a new token when its token nears its
// end: a class shell may stay open for hours.
func (e *Learner) renewGraderSoon(ctx context.Context) error {
	if !graderNeedsRenewal(e.graderExpires, time.Now()) {
		return nil
	}
	grader, err := issueToken(ctx, e.adminCS, GraderAccount, e.ca, graderTokenLifetime)
	if err != nil {
		return fmt.Errorf("learner %s: %w", e.Name, err)
	}
	e.setGrader(grader)
	return nil
}

// setUp makes the lab inside the learner's control plane as `up` makes it
// in kind (namespaces, identities, Pod Security), seeds a fresh home,
// writes the learner's kubeconfig and, the first time, runs the first
// step's setup.
func (e *Learner) setUp(ctx context.Context) error {
	learner, grader, err := setupCluster(ctx, e.adminCS, e.ca, e.Lab)
	if err != nil {
		return fmt.Errorf("setting up the control plane of %s: %w", e.ns, err)
	}
	e.learner = learner
	e.setGrader(grader)
	if err := e.seedHome(ctx, false); err != nil {
		return err
	}
	if err := e.writeKubeconfig(ctx); err != nil {
		return err
	}
	nss := e.class.cs.CoreV1().Namespaces()
	n, err := nss.Get(ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if n.Annotations[annotationDone] == "" {
		if err := e.runStepSetup(ctx); err != nil {
			return err
		}
		patch := []byte(`{"metadata":{"annotations":{"` + annotationDone + `":"true"}}}`)
		if _, err := nss.Patch(ctx, e.ns, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("marking %s set up: %w", e.ns, err)
		}
	}
	return nil
}

func (e *Learner) runStepSetup(ctx context.Context) error {
	steps, _ := stepsThrough(e.Lab.Steps, "")
	for i := range steps {
		if err := grading.RunStepSetup(ctx, e, &steps[i], io.Discard); err != nil {
			return grading.Retrying(err, grading.Retry{Situation: grading.InClass(e.Name), During: grading.LabUp})
		}
	}
	return nil
}

// seedHome fills an empty home (or, with wipe, an emptied one) with the
// sandbox image's /root, from the admin container.
func (e *Learner) seedHome(ctx context.Context, wipe bool) error {
	script := `set -e
[ -z "$(ls -A ` + homeMount + `)" ] || exit 0
cp -a /root/. ` + homeMount + `/`
	if wipe {
		script = `set -e
find ` + homeMount + ` -mindepth 1 -delete
cp -a /root/. ` + homeMount + `/`
	}
	var out bytes.Buffer
	code, err := e.execIn(ctx, vcpPod, containerAdmin, []string{"sh", "-c", script}, nil, &out, &out)
	if err != nil {
		return fmt.Errorf("preparing /root of %s: %w", e.ns, err)
	}
	if code != 0 {
		return fmt.Errorf("preparing /root of %s: exit %d: %s", e.ns, code, lastLines(out.String(), 3))
	}
	return nil
}

// writeKubeconfig writes the learner's kubeconfig, whose server is the
// control plane's Service, to /root/.kube/config in the sandbox.
func (e *Learner) writeKubeconfig(ctx context.Context) error {
	ns := "default"
	if len(e.Lab.Cluster.Namespaces) > 0 {
		ns = e.Lab.Cluster.Namespaces[0]
	}
	server := fmt.Sprintf("https://%s.%s.svc:%d", vcpService, e.ns, vcpPort)
	token, err := e.learnerToken(ctx)
	if err != nil {
		return err
	}
	b, err := learnerKubeconfig(e.Lab.Metadata.Name, server, e.ca, token, ns)
	if err != nil {
		return err
	}
	script := `set -e; umask 077; mkdir -p /root/.kube; cat > /root/.kube/config.labctl; mv /root/.kube/config.labctl /root/.kube/config`
	var out bytes.Buffer
	code, err := e.execIn(ctx, sandboxPod, containerSandbox, []string{"sh", "-c", script}, bytes.NewReader(b), &out, &out)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit %d: %s", code, lastLines(out.String(), 3))
	}
	if err != nil {
		return fmt.Errorf("writing the learner kubeconfig in %s: %w", e.ns, err)
	}
	return nil
}

// execIn runs cmd in a container of the learner's namespace.
func (e *Learner) execIn(ctx context.Context, pod, container string, cmd []string, in io.Reader, out, errOut io.Writer) (int, error) {
	return podExec{Namespace: e.ns, Pod: pod, Container: container, Cmd: cmd, Stdin: in, Stdout: out, Stderr: errOut}.run(ctx, e.class.rest, e.class.cs)
}

// RunChecks runs one checker round in the grader container of the control
// plane Pod, with the grader's credentials on stdin. As with Env, the
// host keeps only the verdicts (checks.ReadResponse).
func (e *Learner) RunChecks(ctx context.Context, cs []lab.Check) ([]checks.Result, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	if err := e.renewGraderSoon(ctx); err != nil {
		return nil, err
	}
	req := checks.Request{
		Root: "/", Kube: e.grader, Areas: e.areas(), Lang: msg.Choose(e.Lab.Metadata.Language, os.Getenv), Checks: cs,
		ProbeStart: checks.ProbeStartFrom(ctx), AuditDir: vcpAuditDir, Since: e.auditWindows(cs),
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var out, errOut bytes.Buffer
	code, err := e.execIn(ctx, vcpPod, containerGrader, []string{checkerBin, "__check"}, bytes.NewReader(in), &out, &errOut)
	if err != nil {
		if ctx.Err() != nil {
			return roundOverran(cs, ctx.Err()), nil
		}
		return nil, fmt.Errorf("running checks for %s: %w", e.Name, err)
	}
	if code != 0 {
		return nil, docker.WithDetail(fmt.Errorf("the checker exited with status %d: %s", code, docker.FirstLine(errOut.Bytes())), errOut.Bytes())
	}
	return checks.ReadResponse(cs, out.Bytes())
}

// roundOverran reports every check as an error: a round cut short by its
// deadline is not trusted.
func roundOverran(cs []lab.Check, err error) []checks.Result {
	return checks.ErrorResults(cs, fmt.Sprintf("the checker did not finish before its deadline (%v)", err))
}

func (e *Learner) areas() []string {
	o := e.class.objects(e.Name)
	areas := []string{"/root"}
	for _, d := range []string{o.workDir(), o.fixturesDir()} {
		if !slices.Contains(areas, d) {
			areas = append(areas, d)
		}
	}
	return areas
}

// auditWindows reads the learner's progress as the instructor's labctl
// records it.
func (e *Learner) auditWindows(cs []lab.Check) []time.Time {
	dir, err := ClassStateDir(e.Lab.Metadata.Name, e.Name)
	if err != nil {
		return nil
	}
	p, err := progress.NewStore(dir).Load(e.Lab.Metadata.Name)
	if err != nil {
		return nil
	}
	return auditWindows(e.Lab, p, cs)
}

// loginCmd runs cmd as the learner's shell would: HOME=/root, in the lab's
// workDir (the exec API sets neither).
func (e *Learner) loginCmd(cmd []string) []string {
	return shellCommand(docker.ShellOptions{Cmd: cmd}, e.class.objects(e.Name).workDir())
}

// RunScript runs a bash script in the sandbox as the learner would.
func (e *Learner) RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	return e.execIn(ctx, sandboxPod, containerSandbox, e.loginCmd([]string{"bash", "-l", "-c", script}), nil, stdout, stderr)
}

// RunScripts runs scripts one after another in one exec, as Env's does.
func (e *Learner) RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (failed, code int, err error) {
	return runScripts(scripts, stdout, started, func(cmd []string, out io.Writer) (int, error) {
		return e.execIn(ctx, sandboxPod, containerSandbox, e.loginCmd(cmd), nil, out, stderr)
	})
}

// RunAdminScript runs a probe's script with the control plane's admin
// identity in the admin container, never in the sandbox.
func (e *Learner) RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error) {
	return e.execIn(ctx, vcpPod, containerAdmin, []string{"bash", "-c", `mkdir -p "$0" && cd "$0" && exec bash -c "$1"`, ProbeDir, script}, nil, out, out)
}

// BackupHome streams /root out as a tar (entries root/...), read from the
// admin container's mount of the home.
func (e *Learner) BackupHome(ctx context.Context, w io.Writer) error {
	var errOut bytes.Buffer
	code, err := e.execIn(ctx, vcpPod, containerAdmin, []string{"tar", "-C", "/", "--transform", "s,^home-vol,root,", "-cf", "-", "home-vol"}, nil, w, &errOut)
	if err == nil && code != 0 {
		err = fmt.Errorf("tar exited %d: %s", code, docker.FirstLine(errOut.Bytes()))
	}
	if err != nil {
		return fmt.Errorf("copying /root of %s: %w", e.ns, err)
	}
	return nil
}

// RecreateSandbox replaces the sandbox Pod by a new one over an emptied
// home (seeded with the image's /root), and writes the learner's
// kubeconfig in. Back up /root first (BackupHome) if it matters.
func (e *Learner) RecreateSandbox(ctx context.Context) error {
	if err := e.class.deletePod(ctx, e.ns, sandboxPod); err != nil {
		return err
	}
	if err := e.seedHome(ctx, true); err != nil {
		return err
	}
	if err := e.class.ensurePod(ctx, e.class.objects(e.Name).sandboxPod()); err != nil {
		return err
	}
	if err := e.class.waitControlPlane(ctx, e.ns); err != nil {
		return err
	}
	return e.writeKubeconfig(ctx)
}

// ResetNamespaces puts the lab's namespaces in the learner's control plane
// back to their starting state, as Env's does in kind.
func (e *Learner) ResetNamespaces(ctx context.Context) error {
	return resetNamespaces(ctx, e.admin, e.Lab, e.ns)
}

// RecreateCluster removes the learner's whole namespace and brings it up
// fresh; e then refers to the new one.
func (e *Learner) RecreateCluster(ctx context.Context) error {
	c := e.class
	e.Close()
	if err := c.Down(ctx, e.Name); err != nil {
		return err
	}
	if err := c.Up(ctx, e.Name); err != nil {
		return err
	}
	fresh, err := c.Connect(ctx, e.Name)
	if err != nil {
		return err
	}
	*e = *fresh
	return nil
}

// ExecLogin runs cmd in the sandbox like the learner's shell runs it.
func (e *Learner) ExecLogin(ctx context.Context, cmd []string, in io.Reader, out, errOut io.Writer) (int, error) {
	return e.execIn(ctx, sandboxPod, containerSandbox, e.loginCmd(cmd), in, out, errOut)
}

// ExecInTerminal runs cmd like ExecLogin, with a PTY on the user's terminal.
func (e *Learner) ExecInTerminal(ctx context.Context, cmd []string, in, out *os.File, term string) (int, error) {
	return execInTerminal(ctx, e.AttachShell, cmd, in, out, term)
}

// execInTerminal runs cmd on a PTY that attach makes, wired to the user's
// terminal, and returns its exit code.
func execInTerminal(ctx context.Context, attach func(context.Context, docker.ShellOptions) (*ExecShell, error), cmd []string, in, out *os.File, term string) (int, error) {
	o := docker.ShellOptions{Cmd: cmd}
	if term != "" {
		o.Env = []string{"TERM=" + term}
	}
	sh, err := attach(ctx, o)
	if err != nil {
		return -1, err
	}
	defer sh.Close()
	go func() { _, _ = io.Copy(sh, in) }()
	_, _ = io.Copy(out, sh)
	return sh.ExitCode(ctx)
}

// AttachShell starts the learner's login shell on a PTY in the sandbox.
func (e *Learner) AttachShell(ctx context.Context, o docker.ShellOptions) (*ExecShell, error) {
	return attachExecShell(ctx, e.class.rest, e.class.cs, e.ns, e.shellCmd(o), o)
}

func (e *Learner) shellCmd(o docker.ShellOptions) []string {
	return shellCommand(o, e.class.objects(e.Name).workDir())
}

// shellCommand is o's command with its environment and directory, as the
// exec API runs it.
func shellCommand(o docker.ShellOptions, workDir string) []string {
	cmd := o.Cmd
	if len(cmd) == 0 {
		cmd = []string{"bash", "-l"}
	}
	if o.WorkDir != "" {
		workDir = o.WorkDir
	}
	env := append([]string{"env", "HOME=/root"}, o.Env...)
	return append(append(env, "sh", "-c", `cd "$0" && exec "$@"`, workDir), cmd...)
}

// LearnerConfig is the learner's identity through labctl's port-forward.
func (e *Learner) LearnerConfig(ctx context.Context) (*rest.Config, error) {
	token, err := e.learnerToken(ctx)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host:            e.admin.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: e.ca, ServerName: "localhost"},
		Timeout:         e.admin.Timeout,
	}, nil
}

// Close ends the port-forward.
func (e *Learner) Close() error {
	if e.fwd != nil {
		e.fwd.Close()
		e.fwd = nil
	}
	return nil
}

// ExecShell is a login shell on a PTY in a Pod, through the Kubernetes
// exec API: reading gives its output, writing types into it.
type ExecShell struct {
	out    *io.PipeReader
	in     *io.PipeWriter
	sizes  *sizeQueue
	cancel context.CancelFunc
	done   chan struct{}
	code   int
	err    error
	close  sync.Once
}

func attachExecShell(ctx context.Context, cfg *rest.Config, cs kubernetes.Interface, ns string, cmd []string, o docker.ShellOptions) (*ExecShell, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &ExecShell{out: outR, in: inW, sizes: newSizeQueue(o.Rows, o.Cols), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.code, s.err = podExec{Namespace: ns, Pod: sandboxPod, Container: containerSandbox, Cmd: cmd,
			Stdin: inR, Stdout: outW, TTY: true, Sizes: s.sizes}.run(sctx, cfg, cs)
		s.sizes.close()
		outW.CloseWithError(io.EOF)
	}()
	return s, nil
}

func (s *ExecShell) Read(p []byte) (int, error)  { return s.out.Read(p) }
func (s *ExecShell) Write(p []byte) (int, error) { return s.in.Write(p) }

// Resize sets the PTY's size.
func (s *ExecShell) Resize(_ context.Context, rows, cols uint) error {
	s.sizes.set(rows, cols)
	return nil
}

// Close detaches: the stream ends and the output with it.
func (s *ExecShell) Close() error {
	s.close.Do(func() {
		s.in.Close()
		s.cancel()
		s.out.Close()
	})
	return nil
}

// ExitCode waits for the shell to end and returns its exit code.
func (s *ExecShell) ExitCode(ctx context.Context) (int, error) {
	select {
	case <-s.done:
		if s.err != nil && !errors.Is(s.err, context.Canceled) {
			return -1, s.err
		}
		return s.code, nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}
