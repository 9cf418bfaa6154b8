// Package statedir finds a lab's state directory on the host: the
// learner's progress, the cluster's kubeconfigs and credentials, the audit
// log and the backups of /root live there.
package statedir

import (
	"fmt"
	"os"
	"path/filepath"
)

// Dir returns the state directory of labName: $LABCTL_STATE_DIR/<lab> when
// LABCTL_STATE_DIR is set, else $XDG_STATE_HOME/labctl/<lab>, else
// ~/.local/state/labctl/<lab>. getenv is os.Getenv outside tests.
func Dir(getenv func(string) string, labName string) (string, error) {
	if labName == "" || labName == "." || labName == ".." || filepath.Base(labName) != labName {
		return "", fmt.Errorf("invalid lab name %q for a state directory", labName)
	}
	if d := getenv("LABCTL_STATE_DIR"); d != "" {
		return filepath.Join(d, labName), nil
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "labctl", labName), nil
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the state directory: %w (set XDG_STATE_HOME or LABCTL_STATE_DIR)", err)
		}
		home = h
	}
	return filepath.Join(home, ".local", "state", "labctl", labName), nil
}
