package kind

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	"sigs.k8s.io/yaml"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// The API server's audit log on a kind cluster: the host directory
// <state dir>/audit holds the policy (written by the host before the
// cluster is made) and the log (written by the API server); the node mounts
// it at NodeAuditDir, the grader container reads it, and the sandbox never
// sees it.

// NodeAuditDir is where the node and the API server's Pod see the host's
// audit directory.
const NodeAuditDir = "/etc/kubernetes/labctl-audit"

// AuditDir is the host directory of a lab's audit policy and log, made
// when missing: the grader container's bind mount needs it, even beside a
// cluster made before labctl kept an audit log.
func AuditDir(labName string) (string, error) {
	state, err := stateDir(labName)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(state, "audit")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating the audit directory %s: %w", dir, err)
	}
	return dir, nil
}

// WriteAuditPolicy writes l's audit policy into dir, which it creates; the
// API server refuses to start without the file, so it is written before
// the cluster is made.
func WriteAuditPolicy(dir string, l *lab.Lab) error {
	return writeAuditPolicy(dir, provision.AuditPolicy(l, false))
}

func writeAuditPolicy(dir string, policy []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the audit directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, provision.AuditPolicyFile)
	if err := os.WriteFile(path, policy, 0o600); err != nil {
		return fmt.Errorf("writing the audit policy %s: %w", path, err)
	}
	return nil
}

// startAuditLog prepares dir for a new cluster: its policy written, the log
// of an earlier cluster removed (a new cluster starts a new record).
func startAuditLog(dir string, policy []byte) error {
	if err := writeAuditPolicy(dir, policy); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "audit*.log"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing the audit log of an earlier cluster: %w", err)
		}
	}
	return nil
}

// auditPatch is the kubeadm patch that turns the API server's audit log on
// and mounts the audit directory into its Pod.
func auditPatch() string {
	return fmt.Sprintf(`apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
apiServer:
  extraArgs:
  - name: audit-policy-file
    value: %[1]s/%[2]s
  - name: audit-log-path
    value: %[1]s/%[3]s
  - name: audit-log-format
    value: json
  - name: audit-log-maxsize
    value: "%[4]d"
  - name: audit-log-maxbackup
    value: "%[5]d"
  - name: audit-log-maxage
    value: "0"
  extraVolumes:
  - name: labctl-audit
    hostPath: %[1]s
    mountPath: %[1]s
    readOnly: false
    pathType: DirectoryOrCreate
`, NodeAuditDir, provision.AuditPolicyFile, provision.AuditLogFile, provision.AuditMaxSizeMB, provision.AuditMaxBackups)
}

// addAudit gives cfg the audit directory mount and the API server's audit
// settings.
func addAudit(cfg *v1alpha4.Cluster, hostDir string) {
	for i := range cfg.Nodes {
		if cfg.Nodes[i].Role != v1alpha4.ControlPlaneRole {
			continue
		}
		cfg.Nodes[i].ExtraMounts = append(cfg.Nodes[i].ExtraMounts, v1alpha4.Mount{
			HostPath:      hostDir,
			ContainerPath: NodeAuditDir,
		})
	}
	cfg.KubeadmConfigPatches = append(cfg.KubeadmConfigPatches, auditPatch())
}

// KindConfigFile is the kind cluster file `labctl up` uses for l on
// nodeImage (see clusterConfig), rendered from the configuration kind is
// given. It writes l's audit policy to the lab's audit directory first,
// since the file names it.
func KindConfigFile(l *lab.Lab, nodeImage string) ([]byte, error) {
	dir, err := AuditDir(l.Metadata.Name)
	if err != nil {
		return nil, err
	}
	if err := WriteAuditPolicy(dir, l); err != nil {
		return nil, err
	}
	out, err := yaml.Marshal(kindConfig(clusterConfig(l, nodeImage, dir)))
	if err != nil {
		return nil, fmt.Errorf("rendering the kind cluster file: %w", err)
	}
	return out, nil
}
