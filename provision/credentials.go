package provision

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/atomicfile"
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
	Learner       identity               `json:"learner"`
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
		c.GraderExpires = tokenExpiry(c.Grader.Token)
	}
	return c, true
}

// saveCredentials writes c atomically, readable by its owner only. An
// unset GraderExpires is read from the grader's token.
func saveCredentials(dir string, c savedCredentials) error {
	if c.GraderExpires.IsZero() {
		c.GraderExpires = tokenExpiry(c.Grader.Token)
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

// graderRenewBefore is how much of the grader's token must be left for a
// check round to use it; a shorter rest is renewed first.
const graderRenewBefore = 10 * time.Minute

// graderTokenSlack tolerates the API server answering a lifetime a little
// longer than asked.
const graderTokenSlack = 5 * time.Minute

// graderNeedsRenewal reports whether a grader token expiring at expires
// must be replaced at now: its expiry is unknown, less than
// graderRenewBefore is left, or it lasts longer than labctl issues grader
// tokens for (one issued by an earlier labctl, valid for a year).
func graderNeedsRenewal(expires, now time.Time) bool {
	left := expires.Sub(now)
	return expires.IsZero() || left < graderRenewBefore || left > graderTokenLifetime+graderTokenSlack
}

// tokenExpiry reads the expiry (the exp claim) of a service account token,
// a JWT the API server issued to labctl over TLS; zero when the token is
// not a JWT with one. The signature is not checked: the API server does,
// and the expiry only decides when labctl asks for a new token.
func tokenExpiry(token string) time.Time {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}
	}
	var claims struct {
		Exp int64 `json:"exp"`
	}
	if json.Unmarshal(payload, &claims) != nil || claims.Exp <= 0 {
		return time.Time{}
	}
	return time.Unix(claims.Exp, 0).UTC()
}
