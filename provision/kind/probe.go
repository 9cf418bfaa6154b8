package kind

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
	"github.com/labctl/labctl/sandbox"
)

// probeKubeconfigEnv carries the probe's kubeconfig to the probe
// container's process, in the exec's environment, never on a command line;
// the process writes it to its own /tmp and unsets the variable before the
// script starts.
const probeKubeconfigEnv = "LABCTL_PROBE_KUBECONFIG"

// probeCredentials grants the probe its rights and issues it a token for
// one script (provision.ProbeKubeconfig; every right on a probe's first
// script, first) with the admin's credentials on the host, and returns the
// kubeconfig of the probe container: that token against the API server's
// address inside the kind network.
func (k *kindRuntime) probeCredentials(ctx context.Context, first bool) ([]byte, error) {
	admin, err := k.Admin(ctx)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return nil, fmt.Errorf("connecting to cluster %s: %w", k.cluster, err)
	}
	return provision.ProbeKubeconfig(ctx, cs, k.lab, ControlPlaneServer(k.lab.Metadata.Name), admin.CAData, first)
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
// credentials never leave the host. The probe's first script starts the
// container; its later ones (a broken world's, the restore) run in it too,
// each with a token of its own, and EndProbe removes it, with whatever
// the scripts left running. The script's output goes to out; it returns
// the script's exit code.
func (k *kindRuntime) RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error) {
	k.probeMu.Lock()
	defer k.probeMu.Unlock()
	first := k.probe == ""
	var startErr error
	started := make(chan struct{})
	if first {
		// The container starts while the rights are granted.
		go func() { defer close(started); k.probe, startErr = k.startProbe(ctx) }()
	} else {
		close(started)
	}
	kubeconfig, err := k.probeCredentials(ctx, first)
	<-started
	if err = errors.Join(err, startErr); err != nil {
		return -1, err
	}
	return k.engine.Exec(ctx, k.probe, docker.ExecOptions{
		Cmd:    probeCommand(script),
		Env:    []string{probeKubeconfigEnv + "=" + string(kubeconfig)},
		User:   "0:0",
		Stdout: out,
		Stderr: out,
	})
}

// startProbe starts a probe's container, with the lab's probe volume, and
// returns its name. A container an earlier probe left (its labctl stopped
// before EndProbe) is removed first: the lab's probe lock says no other
// probe of the lab runs now.
func (k *kindRuntime) startProbe(ctx context.Context) (string, error) {
	name := k.lab.Metadata.Name
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", fmt.Errorf("naming the probe's container: %w", err)
	}
	spec, err := sandbox.BuildProbeSpec(sandbox.Settings{Lab: name, Image: k.settings.Image, Network: k.settings.Network}, hex.EncodeToString(nonce[:]))
	if err != nil {
		return "", err
	}
	if err := k.removeProbes(ctx); err != nil {
		return "", err
	}
	if _, err := k.engine.EnsureVolume(ctx, sandbox.ProbeVolumeName(name), sandbox.Labels(name, sandbox.RoleProbe)); err != nil {
		return "", err
	}
	if _, err := k.engine.EnsureSandbox(ctx, spec); err != nil {
		k.engine.Remove(context.WithoutCancel(ctx), spec.Name)
		return "", fmt.Errorf("starting the probe's container: %w", err)
	}
	return spec.Name, nil
}

// removeProbes removes every probe container of the lab.
func (k *kindRuntime) removeProbes(ctx context.Context) error {
	objs, err := k.engine.ListByLabel(ctx, sandbox.Labels(k.lab.Metadata.Name, sandbox.RoleProbe))
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range objs {
		if o.Kind == "container" {
			errs = append(errs, k.engine.Remove(ctx, o.Name))
		}
	}
	return errors.Join(errs...)
}

// EndProbe ends a probe once its restore has run: its container is
// removed, and ProbeDir emptied with the lab's probe volume; the next
// probe's first script starts anew.
func (k *kindRuntime) EndProbe(ctx context.Context) error {
	k.probeMu.Lock()
	defer k.probeMu.Unlock()
	var err error
	if k.probe != "" {
		err = k.engine.Remove(ctx, k.probe)
		k.probe = ""
	}
	return errors.Join(err, k.engine.RemoveVolume(ctx, sandbox.ProbeVolumeName(k.lab.Metadata.Name)))
}
