package provision

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/internal/docker"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/sandbox"
)

// ProbeDir is the directory a probe's setup and restore scripts run in;
// setup may leave notes there for restore.
const ProbeDir = sandbox.ProbeDir

// The probe's identity: what a probe's setup and restore scripts, the lab
// author's, may do in the lab's cluster.
const (
	// ProbeAccount is the probe's ServiceAccount, in SystemNamespace
	// beside the learner's and the grader's.
	ProbeAccount = "labctl-probe"
	// probeRole names the probe's RoleBindings, in each of the lab's
	// namespaces and in ProbeNamespace, and its Role in ProbeNamespace.
	probeRole = "labctl-probe"
	// probeAdminRole holds the rules of the built-in admin ClusterRole
	// (without writes on namespaces), which the probe has in each of the
	// lab's namespaces.
	probeAdminRole = "labctl-probe-admin"
	// ProbeNamespace is where a probe keeps what only the grader may read
	// (the answer the learner's script must find, for instance): the probe
	// may write ConfigMaps there, the learner may not read them, and the
	// grader reads those the lab's checks name.
	ProbeNamespace = "labctl-probe"
)

// probeTokenLifetime is how long the token of one probe script lasts: the
// API server's shortest. Each setup and restore gets its own.
const probeTokenLifetime = 10 * time.Minute

// probeKubeconfigEnv carries the probe's kubeconfig to the probe
// container's process, in the exec's environment, never on a command line;
// the process writes it to its own /tmp and unsets the variable before the
// script starts.
const probeKubeconfigEnv = "LABCTL_PROBE_KUBECONFIG"

// hasProbes reports whether a step of l has a probe.
func hasProbes(l *lab.Lab) bool {
	return slices.ContainsFunc(l.Steps, func(s lab.Step) bool { return s.Probe != nil })
}

// grantProbe gives the probe's account its rights: the built-in admin
// role's rules (without writes on namespaces) in each of the lab's
// namespaces, by a RoleBinding there, and ConfigMaps in ProbeNamespace,
// which it creates under restricted Pod Security. Nothing cluster-wide:
// the probe's scripts are the lab author's, and under the lab's Pod
// Security level (baseline unless the user consented to more) no Pod they
// make reaches the node. The learner, admin of the lab's namespaces, may
// delete or replace the bindings there, which would only make the probe
// fail; RunAdminScript grants them again before every script, so a
// binding removed does not last. It is idempotent.
func grantProbe(ctx context.Context, cs kubernetes.Interface, l *lab.Lab, labels map[string]string) error {
	if err := ensureAccount(ctx, cs, ProbeAccount, labels); err != nil {
		return err
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ProbeAccount, Namespace: SystemNamespace}}
	if len(l.Cluster.Namespaces) > 0 {
		if err := ensureAdminCopy(ctx, cs, probeAdminRole, labels); err != nil {
			return fmt.Errorf("granting the probe access: %w", err)
		}
	}
	for _, ns := range l.Cluster.Namespaces {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: probeRole, Namespace: ns, Labels: labels},
			Subjects:   subjects,
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: probeAdminRole},
		}
		if err := ensureRoleBinding(ctx, cs, rb); err != nil {
			return fmt.Errorf("granting the probe access in %s: %w", ns, err)
		}
	}
	nsLabels := map[string]string{
		sandbox.LabelLab:          labels[sandbox.LabelLab],
		podSecurityEnforce:        lab.PodSecurityRestricted,
		podSecurityEnforceVersion: "latest",
	}
	if err := ensureNamespace(ctx, cs, ProbeNamespace, nsLabels); err != nil {
		return err
	}
	rules := []rbacv1.PolicyRule{{
		APIGroups: []string{""},
		Resources: []string{"configmaps"},
		Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete"},
	}}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: probeRole, Namespace: ProbeNamespace, Labels: labels}, Rules: rules}
	if err := apply(ctx, cs.RbacV1().Roles(ProbeNamespace), role, func(cur *rbacv1.Role) { cur.Rules = rules; cur.Labels = labels }); err != nil {
		return fmt.Errorf("granting the probe access in %s: %w", ProbeNamespace, err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: probeRole, Namespace: ProbeNamespace, Labels: labels},
		Subjects:   subjects,
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: probeRole},
	}
	if err := ensureRoleBinding(ctx, cs, rb); err != nil {
		return fmt.Errorf("granting the probe access in %s: %w", ProbeNamespace, err)
	}
	return nil
}

// probeCredentials grants the probe its rights again (grantProbe) with the
// admin's credentials on the host, issues it a token for one script, and
// returns the kubeconfig of the probe container: that token against the
// API server's address inside the kind network.
func (k *kindRuntime) probeCredentials(ctx context.Context) ([]byte, error) {
	admin, err := k.Admin(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("connecting to cluster %s: %w", k.cluster, err)
	}
	if err := grantProbe(ctx, cs, k.lab, map[string]string{sandbox.LabelLab: k.lab.Metadata.Name}); err != nil {
		return nil, fmt.Errorf("the probe's rights could not be granted: %w", err)
	}
	id, err := issueToken(ctx, cs, ProbeAccount, admin.CAData, probeTokenLifetime)
	if err != nil {
		return nil, err
	}
	return kubeconfig(k.lab.Metadata.Name, ControlPlaneServer(k.lab.Metadata.Name), id.CAData, ProbeAccount, id.Token, firstNamespace(k.lab))
}

// probeCommand is the command of a probe container's exec: it writes the
// kubeconfig it is given in probeKubeconfigEnv to a file only it reads,
// unsets the variable, and runs script with bash in ProbeDir.
func probeCommand(script string) []string {
	driver := `umask 077 && printf '%s' "$` + probeKubeconfigEnv + `" > /tmp/kubeconfig && unset ` + probeKubeconfigEnv +
		` && export KUBECONFIG=/tmp/kubeconfig && cd "$0" && exec bash -c "$1"`
	return []string{"bash", "-c", driver, ProbeDir, script}
}

// RunAdminScript runs a probe's setup or restore script, the lab author's,
// with the probe's identity: a ServiceAccount that is admin of the lab's
// namespaces and may keep ConfigMaps in ProbeNamespace, nothing
// cluster-wide (grantProbe). The script runs in a container of its own
// (sandbox.BuildProbeSpec: the lab's sandbox image, no capabilities, a
// read-only root, bounded) on the kind network, in ProbeDir, the lab's
// probe volume, which keeps what setup leaves for restore until EndProbe.
// Neither the node nor the sandbox runs it, and the cluster's admin
// credentials never leave the host. The container is removed when the
// script ends. The script's output goes to out; it returns the script's
// exit code.
func (k *kindRuntime) RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error) {
	name := k.lab.Metadata.Name
	kubeconfig, err := k.probeCredentials(ctx)
	if err != nil {
		return -1, err
	}
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return -1, fmt.Errorf("naming the probe's container: %w", err)
	}
	spec, err := sandbox.BuildProbeSpec(sandbox.Settings{Lab: name, Image: k.settings.Image, Network: k.settings.Network}, hex.EncodeToString(nonce[:]))
	if err != nil {
		return -1, err
	}
	if _, err := k.engine.EnsureVolume(ctx, sandbox.ProbeVolumeName(name), sandbox.Labels(name, sandbox.RoleProbe)); err != nil {
		return -1, err
	}
	defer k.engine.Remove(context.WithoutCancel(ctx), spec.Name)
	if _, err := k.engine.EnsureSandbox(ctx, spec); err != nil {
		return -1, fmt.Errorf("starting the probe's container: %w", err)
	}
	return k.engine.Exec(ctx, spec.Name, docker.ExecOptions{
		Cmd:    probeCommand(script),
		Env:    []string{probeKubeconfigEnv + "=" + string(kubeconfig)},
		User:   "0:0",
		Stdout: out,
		Stderr: out,
	})
}

// EndProbe empties ProbeDir once a probe's restore has run: the lab's
// probe volume is removed, and the next probe's setup gets a new one.
func (k *kindRuntime) EndProbe(ctx context.Context) error {
	return k.engine.RemoveVolume(ctx, sandbox.ProbeVolumeName(k.lab.Metadata.Name))
}
