package kind

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/atomicfile"
	"github.com/labctl/labctl/provision"
)

// credentialsFile holds, in the lab's host state directory (mode 0600, like
// the admin kubeconfig beside it), the grader's and the learner's tokens,
// so that a check round need not read them from the cluster each time.
const credentialsFile = "credentials.json"

// savedCredentials are the tokens of one cluster: Node is the ID of its
// control-plane container, so that credentials of a cluster since
// recreated are never used. GraderExpires is when the grader's short-lived
// token expires.
type savedCredentials struct {
	Node          string                 `json:"node"`
	Grader        checks.KubeCredentials `json:"grader"`
	GraderExpires time.Time              `json:"graderExpires,omitzero"`
	Learner       provision.Identity     `json:"learner"`
}

// loadCredentials returns the saved credentials of the cluster whose
// control-plane container has ID node; ok is false when there are none
// for it (never saved, another cluster, or unreadable).
func loadCredentials(dir, node string) (c savedCredentials, ok bool) {
	b, err := os.ReadFile(filepath.Join(dir, credentialsFile))
	if err != nil {
		return savedCredentials{}, false
	}
	if err := json.Unmarshal(b, &c); err != nil || node == "" || c.Node != node ||
		c.Grader.Token == "" || c.Learner.Token == "" {
		return savedCredentials{}, false
	}
	if c.GraderExpires.IsZero() {
		c.GraderExpires = provision.TokenExpiry(c.Grader.Token)
	}
	return c, true
}

// saveCredentials writes c atomically, readable by its owner only. An
// unset GraderExpires is read from the grader's token.
func saveCredentials(dir string, c savedCredentials) error {
	if c.GraderExpires.IsZero() {
		c.GraderExpires = provision.TokenExpiry(c.Grader.Token)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encoding the lab's credentials: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving the lab's credentials: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, credentialsFile), b, 0o600); err != nil {
		return fmt.Errorf("saving the lab's credentials in %s: %w", dir, err)
	}
	return nil
}

// forgetCredentials removes the saved credentials; a missing file is fine.
func forgetCredentials(dir string) error {
	if err := os.Remove(filepath.Join(dir, credentialsFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the lab's credentials: %w", err)
	}
	return nil
}
