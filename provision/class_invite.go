package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/docker"
	"github.com/labctl/labctl/internal/grading"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// Invited is a learner's own sandbox reached with an invite kubeconfig
// (Class.Invite): a shell and commands in the sandbox, nothing else. The
// checks and the grade are the instructor's.
type Invited struct {
	// Lab is the lab the learner works on (the invite names it; the
	// caller loads it): RunChecks needs its directories.
	Lab     *lab.Lab
	cfg     *rest.Config
	cs      kubernetes.Interface
	ns      string
	lab     string
	learner string
}

// OpenInvite reads an invite kubeconfig.
func OpenInvite(_ context.Context, kubeconfig []byte) (*Invited, error) {
	raw, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("reading the invite: %w", err)
	}
	parts := strings.Split(raw.CurrentContext, ":")
	kctx := raw.Contexts[raw.CurrentContext]
	if len(parts) != 3 || parts[0] != "labctl" || kctx == nil || kctx.Namespace == "" {
		return nil, fmt.Errorf("this file is not a labctl invite: ask your instructor for the file `labctl class invite` wrote")
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*raw, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the invite: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("reading the invite: %w", err)
	}
	return &Invited{cfg: cfg, cs: cs, ns: kctx.Namespace, lab: parts[1], learner: parts[2]}, nil
}

// Learner is the learner's name the invite was made for.
func (v *Invited) Learner() string { return v.learner }

// LabName is the name of the lab the invite was made for.
func (v *Invited) LabName() string { return v.lab }

// AttachShell starts a login shell on a PTY in the learner's sandbox.
func (v *Invited) AttachShell(ctx context.Context, o docker.ShellOptions) (*ExecShell, error) {
	return attachExecShell(ctx, v.cfg, v.cs, v.ns, shellCommand(o, v.workDir()), o)
}

// RunScript runs a bash script in the learner's sandbox.
func (v *Invited) RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	return podExec{Namespace: v.ns, Pod: sandboxPod, Container: containerSandbox,
		Cmd: shellCommand(docker.ShellOptions{Cmd: []string{"bash", "-l", "-c", script}}, v.workDir()), Stdout: stdout, Stderr: stderr}.run(ctx, v.cfg, v.cs)
}

// Close releases nothing: each call has its own stream.
func (v *Invited) Close() error { return nil }

// ErrInstructorOnly says an invited learner asked for what only the
// instructor's labctl does.
var ErrInstructorOnly = errors.New("your instructor does this for you: ask them (labctl class reset, labctl class grade)")

// instructorChecked is the message of a check only the instructor's grader
// judges (grading.InstructorOnly).
const instructorChecked = "checked by your instructor's labctl (labctl class grade): your sandbox does not hold what it reads"

// RunChecks runs checks for the learner's own feedback: in their sandbox,
// with the checker the sandbox holds read-only and the learner's own
// credentials (their kubeconfig). Checks that only the instructor's grader
// can judge (grading.InstructorOnly) are not run: they come back as errors
// saying so, and grading.Practice makes them optional. Nothing here counts
// toward the grade, which the instructor's labctl makes.
func (v *Invited) RunChecks(ctx context.Context, cs []lab.Check) ([]checks.Result, error) {
	var run []lab.Check
	for i := range cs {
		if !grading.InstructorOnly(&cs[i]) {
			run = append(run, cs[i])
		}
	}
	var got []checks.Result
	if len(run) > 0 {
		kube, err := v.learnerCredentials(ctx)
		if err != nil {
			return nil, err
		}
		areas := []string{"/root"}
		if v.Lab != nil {
			for _, d := range []string{v.Lab.Sandbox.WorkDir, v.Lab.Sandbox.Fixtures} {
				if d != "" && !slices.Contains(areas, d) {
					areas = append(areas, d)
				}
			}
		}
		lang := msg.English
		if v.Lab != nil {
			lang = msg.Choose(v.Lab.Metadata.Language, os.Getenv)
		}
		in, err := json.Marshal(checks.Request{Root: "/", Kube: kube, Areas: areas, Lang: lang, Checks: run})
		if err != nil {
			return nil, err
		}
		var out, errOut bytes.Buffer
		code, err := podExec{Namespace: v.ns, Pod: sandboxPod, Container: containerSandbox,
			Cmd: []string{practiceDir + "/labctl", "__check"}, Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errOut}.run(ctx, v.cfg, v.cs)
		if err != nil {
			if ctx.Err() != nil {
				return roundOverran(cs, ctx.Err()), nil
			}
			return nil, fmt.Errorf("running checks in your sandbox: %w", err)
		}
		if code != 0 {
			return nil, fmt.Errorf("the checker in your sandbox exited with status %d: %s", code, docker.FirstLine(errOut.Bytes()))
		}
		if got, err = checks.ReadResponse(run, out.Bytes()); err != nil {
			return nil, err
		}
	}
	results := make([]checks.Result, 0, len(cs))
	for i := range cs {
		c := &cs[i]
		if grading.InstructorOnly(c) {
			results = append(results, checks.ErrorResult(c, instructorChecked))
			continue
		}
		results = append(results, got[0])
		got = got[1:]
	}
	return results, nil
}

// learnerCredentials reads the learner's kubeconfig in the sandbox: the
// checker reads their API server as they do.
func (v *Invited) learnerCredentials(ctx context.Context) (*checks.KubeCredentials, error) {
	var out, errOut bytes.Buffer
	code, err := v.RunScript(ctx, "cat /root/.kube/config", &out, &errOut)
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("your sandbox has no /root/.kube/config: ask your instructor to run `labctl class up` again")
	}
	raw, err := clientcmd.Load(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("reading /root/.kube/config in your sandbox: %w", err)
	}
	kctx := raw.Contexts[raw.CurrentContext]
	if kctx == nil || raw.Clusters[kctx.Cluster] == nil || raw.AuthInfos[kctx.AuthInfo] == nil {
		return nil, fmt.Errorf("/root/.kube/config in your sandbox has no current context")
	}
	cl, user := raw.Clusters[kctx.Cluster], raw.AuthInfos[kctx.AuthInfo]
	return &checks.KubeCredentials{Server: cl.Server, Token: user.Token, CAData: cl.CertificateAuthorityData}, nil
}

// RunScripts runs scripts one after another in the sandbox, as Env's does.
func (v *Invited) RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (failed, code int, err error) {
	return runScripts(scripts, stdout, started, func(cmd []string, out io.Writer) (int, error) {
		return v.ExecLogin(ctx, cmd, nil, out, stderr)
	})
}

func (v *Invited) workDir() string {
	if v.Lab != nil && v.Lab.Sandbox.WorkDir != "" {
		return v.Lab.Sandbox.WorkDir
	}
	return "/root"
}

// ExecLogin runs cmd in the sandbox like the learner's shell runs it.
func (v *Invited) ExecLogin(ctx context.Context, cmd []string, in io.Reader, out, errOut io.Writer) (int, error) {
	return podExec{Namespace: v.ns, Pod: sandboxPod, Container: containerSandbox, Cmd: shellCommand(docker.ShellOptions{Cmd: cmd}, v.workDir()),
		Stdin: in, Stdout: out, Stderr: errOut}.run(ctx, v.cfg, v.cs)
}

// ExecInTerminal runs cmd like ExecLogin, with a PTY on the user's terminal.
func (v *Invited) ExecInTerminal(ctx context.Context, cmd []string, in, out *os.File, term string) (int, error) {
	return execInTerminal(ctx, v.AttachShell, cmd, in, out, term)
}

// The instructor's: an invited learner cannot reset, probe or reach the
// API server from their own machine.
func (v *Invited) RunAdminScript(context.Context, string, io.Writer) (int, error) {
	return -1, ErrInstructorOnly
}
func (v *Invited) BackupHome(context.Context, io.Writer) error { return ErrInstructorOnly }
func (v *Invited) RecreateSandbox(context.Context) error       { return ErrInstructorOnly }
func (v *Invited) ResetNamespaces(context.Context) error       { return ErrInstructorOnly }
func (v *Invited) RecreateCluster(context.Context) error       { return ErrInstructorOnly }
func (v *Invited) LearnerConfig(context.Context) (*rest.Config, error) {
	return nil, fmt.Errorf("the lab's API server is reached from your sandbox only: %w", ErrInstructorOnly)
}
