package labstore

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labctl/labctl/lab"
)

// AllowHostAccessFlag is the flag by which the user consents to a lab that
// reaches the host (lab.Lab.Risks).
const AllowHostAccessFlag = "--allow-host-access"

// HostAccessError refuses a lab that asks for what reaches the host (its
// risks) without the user's consent.
type HostAccessError struct {
	// Lab names the lab; Action is what was refused, e.g. "installed".
	Lab, Action string
	Risks       []lab.Risk
}

func (e *HostAccessError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lab %s asks for what reaches beyond its own cluster, to this machine, so it was not %s:\n", e.Lab, e.Action)
	for _, r := range e.Risks {
		fmt.Fprintf(&b, "  %s\n", r)
	}
	fmt.Fprintf(&b, "if you trust the lab's author with root on this machine, run the command again with %s", AllowHostAccessFlag)
	return b.String()
}

// consent refuses l, which is being installed, when it has risks and
// allow is false; else it records the risks consented to in m.
func consent(l *lab.Lab, allow bool, m *Meta) error {
	risks := l.Risks()
	if len(risks) > 0 && !allow {
		return &HostAccessError{Lab: l.Metadata.Name, Action: "installed", Risks: risks}
	}
	m.HostAccess = riskKeys(risks)
	return nil
}

// Consented reports whether the install record of the lab installed in
// dir says that the user consented to every one of risks when installing
// it. A lab without risks needs no consent.
func Consented(dir string, risks []lab.Risk) bool {
	if len(risks) == 0 {
		return true
	}
	m, err := readMeta(dir)
	if err != nil || m == nil {
		return false
	}
	for _, k := range riskKeys(risks) {
		if !slices.Contains(m.HostAccess, k) {
			return false
		}
	}
	return true
}

func riskKeys(risks []lab.Risk) []string {
	var keys []string
	for _, r := range risks {
		keys = append(keys, r.Key())
	}
	return keys
}
