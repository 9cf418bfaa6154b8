package provision

import (
	"bytes"
	"context"
	"fmt"
)

// NoClusterKubectl is where a lab with no cluster puts its stand-in for
// kubectl in the sandbox: before /usr/local/bin, kubectl's directory, on
// every PATH of root's.
const NoClusterKubectl = "/usr/local/sbin/kubectl"

// noClusterKubectl is the stand-in: it says why there is no cluster and
// fails, so that a learner's habit (or a step's script) never meets
// kubectl's own "connection to localhost:8080 refused".
const noClusterKubectl = `#!/bin/sh
echo "kubectl: this lab has no Kubernetes cluster (its lab.yaml says cluster: {provider: none}): its steps are done with the files and tools of this sandbox. Run lab step to see what to do." >&2
exit 1
`

// writeNoCluster puts the stand-in for kubectl in the sandbox of a lab
// with no cluster, and removes a kubeconfig an earlier version of the lab
// left.
func (e *Live) writeNoCluster(ctx context.Context) error {
	var out bytes.Buffer
	code, err := e.rt.Exec(ctx, e.login([]string{"sh", "-c",
		`cat > "$1" && chmod 755 "$1" && rm -f /root/.kube/config`, "sh", NoClusterKubectl}, bytes.NewReader([]byte(noClusterKubectl)), &out, &out))
	if err != nil {
		return fmt.Errorf("writing the sandbox's kubectl of a lab with no cluster: %w", err)
	}
	if code != 0 {
		return fmt.Errorf("writing the sandbox's kubectl of a lab with no cluster: exit %d: %s", code, LastLines(out.String(), 3))
	}
	return nil
}
