package kind

import (
	"strings"
	"testing"

	"github.com/labctl/labctl/provision"
)

// The probe's kubeconfig reaches its process in the exec's environment,
// never in its arguments, and the script's environment no longer holds it.
func TestProbeCommandCarriesNoCredentials(t *testing.T) {
	cmd := probeCommand("kubectl -n gitops-lab scale deployment web --replicas=4")
	if cmd[0] != "bash" || cmd[len(cmd)-1] != "kubectl -n gitops-lab scale deployment web --replicas=4" || cmd[len(cmd)-2] != provision.ProbeDir {
		t.Fatalf("command = %q", cmd)
	}
	driver := cmd[2]
	for _, want := range []string{"umask 077", "> /tmp/kubeconfig", "unset " + probeKubeconfigEnv, "KUBECONFIG=/tmp/kubeconfig", `cd "$0"`} {
		if !strings.Contains(driver, want) {
			t.Errorf("driver %q lacks %q", driver, want)
		}
	}
	if strings.Index(driver, "unset") > strings.Index(driver, "exec bash") {
		t.Errorf("the variable is unset after the script starts: %q", driver)
	}
}
