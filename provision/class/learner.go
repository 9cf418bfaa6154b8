package class

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/internal/podexec"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// learnerRuntime is the runtime of one learner's lab on a class cluster:
// the learner's namespace, with the control-plane Pod (the API server, the
// grader, the admin and the probe containers) and the sandbox Pod, reached through
// the class cluster's exec API. labctl reaches the learner's API server
// through a port-forward to the control-plane Pod, with the admin
// certificate it made.
type learnerRuntime struct {
	podSandbox
	lab     *lab.Lab
	learner string
	class   *Class
	fwd     *podexec.Forward
	// admin is the learner's control plane's admin config through fwd.
	admin   *rest.Config
	adminCS kubernetes.Interface
	// probeMu orders a probe's scripts; probing is true from a probe's
	// first script to its EndProbe.
	probeMu sync.Mutex
	probing bool
}

var _ provision.Runtime = (*learnerRuntime)(nil)

// Features: a probe's end empties the probe container (EndProbe); the
// identities are issued by each command, and a sandbox is recreated, never
// put back in place. In a node-access class the node command reaches the
// listener class up starts in the learner's node (writeNodeAccess).
func (e *learnerRuntime) Features() provision.Features {
	f := provision.Features{EndProbe: e.EndProbe}
	if e.class.objects(e.learner).nodeAccess() {
		f.NodeAccess = e.writeNodeAccess
	}
	return f
}

// StateDir is where the instructor's labctl keeps what it records of
// one learner of a class (progress, backups of /root).
func StateDir(labName, learner string) (string, error) {
	dir, err := statedir.Dir(os.Getenv, labName)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "class", learner), nil
}

// Connect reaches a learner's lab that is up (ErrNoLearner when there is
// no such learner, a *NotReadyError (provision.ErrNotUp) when it is not ready, after up to readyGrace
// for Pods that run and are not ready at the moment).
func (c *Class) Connect(ctx context.Context, learner string) (*provision.Live, error) {
	ns := c.Namespace(learner)
	n, err := c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil || !c.owns(n, learner) {
		return nil, fmt.Errorf("learner %s (namespace %s): %w", learner, ns, ErrNoLearner)
	}
	if p := c.waitReady(ctx, ns, readyGrace); p != "" {
		return nil, &NotReadyError{Learner: learner, Problem: p}
	}
	rt, err := c.connect(ctx, learner)
	if err != nil {
		return nil, err
	}
	// The grader's token is issued now; the learner's when first needed
	// (status and grade never need it).
	live := provision.NewLive(c.cfg.Lab, rt, provision.Identity{}, provision.Identity{})
	if _, err := live.GraderCredentials(ctx); err != nil {
		live.Close()
		return nil, fromControlPlane(err)
	}
	return live, nil
}

// controlPlaneError is an error the learner's control plane answered, its
// message escaped (textsafe) when it is made: the learner is admin there,
// and an admission webhook of theirs words its own denials. It unwraps to
// the answer.
type controlPlaneError struct {
	msg string
	err error
}

func (e *controlPlaneError) Error() string { return e.msg }
func (e *controlPlaneError) Unwrap() error { return e.err }

// fromControlPlane is err, an answer of the learner's control plane, as a
// controlPlaneError.
func fromControlPlane(err error) error {
	return &controlPlaneError{msg: textsafe.Escape(err.Error()), err: err}
}

// connect forwards a port to the learner's API server and makes the admin
// client; it issues no credentials.
func (c *Class) connect(ctx context.Context, learner string) (*learnerRuntime, error) {
	ns := c.Namespace(learner)
	s, err := c.cs.CoreV1().Secrets(ns).Get(ctx, certsSecret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the certificates of %s: %w", ns, err)
	}
	admin, err := clientcmd.RESTConfigFromKubeConfig(s.Data[certAdminConf])
	if err != nil {
		return nil, fmt.Errorf("reading the admin identity of %s: %w", ns, err)
	}
	fwd, err := podexec.PortForward(ctx, c.rest, c.cs, ns, vcpPod, vcpPort)
	if err != nil {
		return nil, err
	}
	admin.Host = fmt.Sprintf("https://127.0.0.1:%d", fwd.Port)
	admin.ServerName = "localhost"
	admin.CAData, admin.CAFile = s.Data[certCA], ""
	admin.QPS, admin.Burst = 200, 400
	admin.Timeout = 30 * time.Second
	admin.WarningHandler = rest.NoWarnings{}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		fwd.Close()
		return nil, err
	}
	return &learnerRuntime{podSandbox: podSandbox{c.pods(ns)},
		lab: c.cfg.Lab, learner: learner, class: c, fwd: fwd, admin: admin, adminCS: cs}, nil
}

func (e *learnerRuntime) Name() string { return e.ns }
func (e *learnerRuntime) SandboxServer() string {
	return fmt.Sprintf("https://%s.%s.svc:%d", vcpService, e.ns, vcpPort)
}
func (e *learnerRuntime) GraderServer() string { return vcpInternalServer }
func (e *learnerRuntime) AuditDir() string     { return vcpAuditDir }
func (e *learnerRuntime) StateDir() (string, error) {
	return StateDir(e.lab.Metadata.Name, e.learner)
}
func (e *learnerRuntime) Admin(context.Context) (*rest.Config, error) { return e.admin, nil }

// setUp makes the lab inside the learner's control plane as `up` makes it
// in kind (namespaces, identities, Pod Security), seeds a fresh home,
// writes the learner's kubeconfig and, the first time, runs the first
// step's setup.
func (e *learnerRuntime) setUp(ctx context.Context) error {
	// A class serves node access itself, from the learner node's container.
	learner, grader, err := provision.SetupCluster(provision.NodeAccessServed(ctx), e.adminCS, e.admin.CAData, e.lab)
	if err != nil {
		return fromControlPlane(fmt.Errorf("setting up the control plane of %s: %w", e.ns, err))
	}
	if err := provision.WaitBuiltinRoles(ctx, e.adminCS, provision.BuiltinRolesWait); err != nil {
		return fromControlPlane(fmt.Errorf("setting up the control plane of %s: %w", e.ns, err))
	}
	if e.class.nodeImage() != "" {
		if err := checkNodeSafe(ctx, e.adminCS, e.lab); err != nil {
			return err
		}
		if err := waitNode(ctx, e.adminCS, classWait); err != nil {
			return fromControlPlane(fmt.Errorf("%s: %w", e.ns, err))
		}
		if err := ensureNodeDNS(ctx, e.admin, e.class.cp.DNS); err != nil {
			return fromControlPlane(fmt.Errorf("%s: %w", e.ns, err))
		}
		if err := e.loadNodeImages(ctx, e.class.cfg.Images); err != nil {
			return err
		}
		if err := waitNodeDNS(ctx, e.adminCS, classWait); err != nil {
			return fromControlPlane(fmt.Errorf("%s: %w", e.ns, err))
		}
		if e.class.objects(e.learner).nodeAccess() {
			if err := e.startNodeListener(ctx); err != nil {
				return err
			}
		}
	}
	live := provision.NewLive(e.lab, e, learner, grader)
	if err := e.seedHome(ctx, false); err != nil {
		return err
	}
	if err := live.WriteKubeconfig(ctx); err != nil {
		return err
	}
	nss := e.class.cs.CoreV1().Namespaces()
	n, err := nss.Get(ctx, e.ns, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if n.Annotations[annotationDone] == "" {
		if err := grading.RunLabSetup(ctx, live, e.lab, "", grading.InClass(e.learner), io.Discard); err != nil {
			return err
		}
		patch := []byte(`{"metadata":{"annotations":{"` + annotationDone + `":"true"}}}`)
		if _, err := nss.Patch(ctx, e.ns, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("marking %s set up: %w", e.ns, err)
		}
	}
	return nil
}

// seedHome fills an empty home (or, with wipe, an emptied one) with the
// sandbox image's /root, from the admin container.
func (e *learnerRuntime) seedHome(ctx context.Context, wipe bool) error {
	script := `set -e
[ -z "$(ls -A ` + homeMount + `)" ] || exit 0
cp -a /root/. ` + homeMount + `/`
	if wipe {
		script = `set -e
find ` + homeMount + ` -mindepth 1 -delete
cp -a /root/. ` + homeMount + `/`
	}
	code, out, err := e.run(ctx, podCommand{pod: vcpPod, container: containerAdmin, cmd: []string{"sh", "-c", script}, wait: homeWait})
	if err != nil {
		return fmt.Errorf("preparing /root of %s: %w", e.ns, err)
	}
	if code != 0 {
		return fmt.Errorf("preparing /root of %s: exit %d: %s", e.ns, code, out.LastLines(3))
	}
	return nil
}

// execIn runs cmd in a container of the learner's control-plane Pod, its
// output to out and errOut as it comes, as long as ctx allows.
func (e *learnerRuntime) execIn(ctx context.Context, container string, cmd []string, in io.Reader, out, errOut io.Writer) (int, error) {
	code, _, err := e.run(ctx, podCommand{pod: vcpPod, container: container, cmd: cmd, stdin: in, stdout: out, stderr: errOut})
	return code, err
}

// ExecChecker runs the checker once in the grader container of the
// control-plane Pod (provision.RunChecker runs the round).
func (e *learnerRuntime) ExecChecker(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	code, _, err := e.run(ctx, podCommand{pod: vcpPod, container: containerGrader, cmd: []string{checkerBin, "__check"},
		stdin: stdin, stdout: stdout, stderr: stderr})
	if err != nil {
		return code, fmt.Errorf("running checks for %s: %w", e.learner, err)
	}
	return code, nil
}

// RunAdminScript runs a probe's setup or restore script, the lab
// author's, with the probe's identity, as kind runs it: a service account
// that is admin of the lab's namespaces and may keep ConfigMaps in
// provision.ProbeNamespace, nothing cluster-wide (provision.ProbeKubeconfig,
// every right again on a probe's first script). It runs in the probe
// container of the control-plane Pod (the sandbox image, no capabilities,
// a read-only root, no certificate of the control plane's, no home), in
// ProbeDir, which keeps what setup leaves for restore until EndProbe. Its
// kubeconfig (a token of its own for each script) comes on the exec's
// stdin, never on a command line. Its kubectl starts in the lab's first
// namespace.
func (e *learnerRuntime) RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error) {
	e.probeMu.Lock()
	defer e.probeMu.Unlock()
	kubeconfig, err := provision.ProbeKubeconfig(ctx, e.adminCS, e.lab, vcpInternalServer, e.admin.CAData, !e.probing)
	if err != nil {
		return -1, fromControlPlane(err)
	}
	e.probing = true
	code, err := e.execIn(ctx, containerProbe, []string{"bash", "-c", probeScriptDriver, provision.ProbeDir, script}, bytes.NewReader(kubeconfig), out, out)
	if err != nil && strings.Contains(err.Error(), "container "+containerProbe+" is not valid for pod") {
		// A control plane an earlier labctl made, which class up keeps
		// while it runs: its probes ran with the admin identity.
		return code, fmt.Errorf("the control plane of learner %s was made by an earlier labctl and has no probe container: "+
			"at a quiet moment run `labctl class up --renew-outdated` (their shell ends; their /root and their cluster's objects are kept), then try again", e.learner)
	}
	return code, err
}

// probeScriptDriver writes the kubeconfig on its stdin to a file only it
// reads, runs the script $1 in the directory $0 with it (no stdin), and
// removes the file.
const probeScriptDriver = `umask 077 && kc=$(mktemp) && cat > "$kc" && cd "$0" || exit 1
KUBECONFIG="$kc" bash -c "$1" < /dev/null
rc=$?
rm -f "$kc"
exit $rc`

// EndProbe ends a probe once its restore has run: whatever its scripts
// left running in the probe container is stopped, and ProbeDir and /tmp
// there are emptied; the next probe's first script gets every right again.
func (e *learnerRuntime) EndProbe(ctx context.Context) error {
	e.probeMu.Lock()
	defer e.probeMu.Unlock()
	e.probing = false
	code, out, err := e.run(ctx, podCommand{pod: vcpPod, container: containerProbe, cmd: []string{"sh", "-c", probeEndScript}})
	if err == nil && code != 0 {
		err = fmt.Errorf("exit %d: %s", code, out.LastLines(3))
	}
	if err != nil {
		return fmt.Errorf("ending the probe of %s: %w", e.ns, err)
	}
	return nil
}

// probeEndScript stops every process of the probe container but its first
// (which only waits, and outlives this: probeIdle) and this shell, and
// empties what the probe wrote.
const probeEndScript = `kill -KILL -1 2>/dev/null
find ` + provision.ProbeDir + ` /tmp -mindepth 1 -delete`

// BackupHome streams /root out as a tar (entries root/...), read from the
// admin container's mount of the home.
func (e *learnerRuntime) BackupHome(ctx context.Context, w io.Writer) error {
	code, errOut, err := e.run(ctx, podCommand{pod: vcpPod, container: containerAdmin,
		cmd:    []string{"tar", "-C", "/", "--transform", "s,^home-vol,root,", "-cf", "-", "home-vol"},
		stdout: w, wait: homeWait})
	if err == nil && code != 0 {
		err = fmt.Errorf("tar exited %d: %s", code, errOut.FirstLine("(it printed nothing)"))
	}
	if err != nil {
		return fmt.Errorf("copying /root of %s: %w", e.ns, err)
	}
	return nil
}

// RecreateSandbox replaces the sandbox Pod by a new one over an emptied
// home, seeded with the image's /root.
func (e *learnerRuntime) RecreateSandbox(ctx context.Context) error {
	if err := e.class.deletePod(ctx, e.ns, sandboxPod); err != nil {
		return err
	}
	if err := e.seedHome(ctx, true); err != nil {
		return err
	}
	if err := e.class.ensurePod(ctx, e.class.objects(e.learner).sandboxPod()); err != nil {
		return err
	}
	return e.class.waitControlPlane(ctx, e.ns)
}

// RecreateCluster removes the learner's whole namespace and brings it up
// fresh.
func (e *learnerRuntime) RecreateCluster(ctx context.Context) (*provision.Live, error) {
	c := e.class
	e.Close()
	if err := c.Down(ctx, e.learner); err != nil {
		return nil, err
	}
	if err := c.Up(ctx, e.learner); err != nil {
		return nil, err
	}
	return c.Connect(ctx, e.learner)
}

// Close ends the port-forward.
func (e *learnerRuntime) Close() error {
	if e.fwd != nil {
		e.fwd.Close()
		e.fwd = nil
	}
	return nil
}

// learnerOf names the learner of a live lab on a class cluster ("" for
// another runtime).
func learnerOf(e *provision.Live) string {
	if rt, ok := e.Runtime().(*learnerRuntime); ok {
		return rt.learner
	}
	return ""
}
