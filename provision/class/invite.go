package class

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// Invite is what an invite kubeconfig (Class.Invite) names: a learner's own
// sandbox on a class cluster, and the lab it holds.
type Invite struct {
	sandbox podSandbox
	lab     string
	learner string
	expires time.Time
}

// OpenInvite reads an invite kubeconfig.
func OpenInvite(_ context.Context, kubeconfig []byte) (*Invite, error) {
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
	expires := provision.TokenExpiry(cfg.BearerToken)
	if !expires.IsZero() && !now().Before(expires) {
		return nil, fmt.Errorf("%w at %s: ask your instructor for a new one (`labctl class invite %s`)",
			ErrInviteExpired, expires.Local().Format("2006-01-02 15:04 MST"), parts[2])
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("reading the invite: %w", err)
	}
	return &Invite{sandbox: podSandbox{learnerPods{cfg: cfg, cs: cs, ns: kctx.Namespace, learner: parts[2]}}, lab: parts[1], learner: parts[2], expires: expires}, nil
}

// ErrInviteExpired: the invite's token has expired.
var ErrInviteExpired = errors.New("this invite expired")

// now is the clock invites are judged by.
var now = time.Now

// Expires is when the invite stops working (zero: it does not say).
func (v *Invite) Expires() time.Time { return v.expires }

// Learner is the learner's name the invite was made for.
func (v *Invite) Learner() string { return v.learner }

// LabName is the name of the lab the invite was made for.
func (v *Invite) LabName() string { return v.lab }

// Live is the invited learner's live lab l (the lab the invite names, which
// the caller loads): a shell and commands in the sandbox, and checks for
// feedback only. The grade and everything else is the instructor's.
func (v *Invite) Live(l *lab.Lab) *provision.Live {
	return provision.NewLive(l, &inviteRuntime{podSandbox: v.sandbox, learner: v.learner}, provision.Identity{}, provision.Identity{})
}

// inviteRuntime is a learner's sandbox reached with an invite: it has no
// grader (Practice) and no admin side; what only the instructor's labctl
// does answers ErrInstructorOnly.
type inviteRuntime struct {
	podSandbox
	learner string
}

var _ provision.Runtime = (*inviteRuntime)(nil)

// Features: an invite's checks run in the sandbox with the learner's own
// credentials (LearnerCredentials); it keeps nothing and runs no probe.
func (v *inviteRuntime) Features() provision.Features {
	return provision.Features{Practice: v.LearnerCredentials}
}

// ExecChecker runs, for the learner's own feedback, the checker the
// sandbox holds read-only, in their sandbox (provision.RunChecker runs the
// round).
func (v *inviteRuntime) ExecChecker(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	code, _, err := v.run(ctx, podCommand{pod: sandboxPod, container: containerSandbox,
		cmd: []string{practiceDir + "/labctl", "__check"}, stdin: stdin, stdout: stdout, stderr: stderr})
	if err != nil {
		return code, fmt.Errorf("running checks in your sandbox: %w", err)
	}
	return code, nil
}

// LearnerCredentials reads the learner's kubeconfig in the sandbox: the
// checker reads their API server as they do.
func (v *inviteRuntime) LearnerCredentials(ctx context.Context) (*checks.KubeCredentials, error) {
	var out, errOut bytes.Buffer
	code, err := v.Exec(ctx, provision.ExecOptions{Cmd: []string{"cat", "/root/.kube/config"}, WorkDir: "/root", Stdout: &out, Stderr: &errOut})
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

func (v *inviteRuntime) Name() string              { return v.ns }
func (v *inviteRuntime) SandboxServer() string     { return "" }
func (v *inviteRuntime) GraderServer() string      { return "" }
func (v *inviteRuntime) AuditDir() string          { return "" }
func (v *inviteRuntime) StateDir() (string, error) { return "", provision.ErrInstructorOnly }
func (v *inviteRuntime) Close() error              { return nil }

// The instructor's: an invited learner cannot reset, probe or reach the
// API server from their own machine.
func (v *inviteRuntime) RunAdminScript(context.Context, string, io.Writer) (int, error) {
	return -1, provision.ErrInstructorOnly
}
func (v *inviteRuntime) BackupHome(context.Context, io.Writer) error {
	return provision.ErrInstructorOnly
}
func (v *inviteRuntime) RecreateSandbox(context.Context) error { return provision.ErrInstructorOnly }
func (v *inviteRuntime) RecreateCluster(context.Context) (*provision.Live, error) {
	return nil, provision.ErrInstructorOnly
}
func (v *inviteRuntime) Admin(context.Context) (*rest.Config, error) {
	return nil, fmt.Errorf("the lab's API server is reached from your sandbox only: %w", provision.ErrInstructorOnly)
}
