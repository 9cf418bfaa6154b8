package kind

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"

	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/internal/docker"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/sandbox"
)

// probeKubeconfigEnv carries the probe's kubeconfig to the probe
// container's process, in the exec's environment, never on a command line;
// the process writes it to its own /tmp and unsets the variable before the
// script starts.
const probeKubeconfigEnv = "LABCTL_PROBE_KUBECONFIG"

// probeCredentials grants the probe its rights again and issues it a token
// for one script (provision.ProbeKubeconfig) with the admin's credentials
// on the host, and returns the kubeconfig of the probe container: that
// token against the API server's address inside the kind network.
func (k *kindRuntime) probeCredentials(ctx context.Context) ([]byte, error) {
	admin, err := k.Admin(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("connecting to cluster %s: %w", k.cluster, err)
	}
	return provision.ProbeKubeconfig(ctx, cs, k.lab, ControlPlaneServer(k.lab.Metadata.Name), admin.CAData)
}

// probeCommand is the command of a probe container's exec: it writes the
// kubeconfig it is given in probeKubeconfigEnv to a file only it reads,
// unsets the variable, and runs script with bash in ProbeDir.
func probeCommand(script string) []string {
	driver := `umask 077 && printf '%s' "$` + probeKubeconfigEnv + `" > /tmp/kubeconfig && unset ` + probeKubeconfigEnv +
		` && export KUBECONFIG=/tmp/kubeconfig && cd "$0" && exec bash -c "$1"`
	return []string{"bash", "-c", driver, provision.ProbeDir, script}
}

// RunAdminScript runs a probe's setup or restore script, the lab author's,
// with the probe's identity: a ServiceAccount that is admin of the lab's
// namespaces and may keep ConfigMaps in provision.ProbeNamespace, nothing
// cluster-wide (provision.ProbeKubeconfig). The script runs in a container of its own
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
