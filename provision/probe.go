package provision

import (
	"context"
	"io"

	"github.com/labctl/labctl/internal/docker"
)

// ProbeDir is the directory on the cluster's node a probe's setup and
// restore scripts run in; setup may leave notes there for restore.
const ProbeDir = "/run/labctl-probe"

// nodeAdminConfig is the admin kubeconfig kubeadm writes on the node.
const nodeAdminConfig = "/etc/kubernetes/admin.conf"

// RunAdminScript runs a probe's setup or restore script with the cluster's
// admin identity: bash on the lab's control-plane node (a container the
// learner cannot reach), as root, with KUBECONFIG set to the node's admin
// kubeconfig, in ProbeDir. The script's output goes to out; it returns the
// script's exit code. Nothing of it enters the sandbox.
func (e *Env) RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error) {
	return e.engine.Exec(ctx, controlPlaneNode(e.Lab.Metadata.Name), docker.ExecOptions{
		Cmd: []string{"bash", "-c", `mkdir -p "$0" && cd "$0" && exec bash -c "$1"`, ProbeDir, script},
		Env: []string{
			"KUBECONFIG=" + nodeAdminConfig,
			"HOME=/root",
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		},
		User:   "root",
		Stdout: out,
		Stderr: out,
	})
}
