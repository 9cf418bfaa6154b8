package kind

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/provision"
)

func TestSavedCredentialsBelongToOneNode(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if _, ok := loadCredentials(dir, "node-1"); ok {
		t.Fatal("credentials loaded before any were saved")
	}
	c := savedCredentials{
		Node:    "node-1",
		Grader:  checks.KubeCredentials{Server: "https://lab-control-plane:6443", Token: "grader-token", CAData: []byte("ca")},
		Learner: provision.Identity{Token: "learner-token", CAData: []byte("ca")},
	}
	if err := saveCredentials(dir, c); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, credentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %v, want 0600", fi.Mode().Perm())
	}
	got, ok := loadCredentials(dir, "node-1")
	if !ok || got.Grader.Token != "grader-token" || got.Learner.Token != "learner-token" || string(got.Grader.CAData) != "ca" {
		t.Errorf("loaded %+v, %v; want what was saved", got, ok)
	}
	// A recreated cluster's node has another ID: its tokens are others.
	if _, ok := loadCredentials(dir, "node-2"); ok {
		t.Error("credentials of node-1 were used for node-2")
	}
	if _, ok := loadCredentials(dir, ""); ok {
		t.Error("credentials were used for a node without an ID")
	}
	if err := os.WriteFile(filepath.Join(dir, credentialsFile), []byte(`{"node":"node-1","grader":{"token":""}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := loadCredentials(dir, "node-1"); ok {
		t.Error("credentials without tokens were used")
	}
	if err := os.WriteFile(filepath.Join(dir, credentialsFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := loadCredentials(dir, "node-1"); ok {
		t.Error("an unreadable credentials file was used")
	}
	if err := forgetCredentials(dir); err != nil {
		t.Fatal(err)
	}
	if err := forgetCredentials(dir); err != nil {
		t.Errorf("forgetting credentials twice: %v", err)
	}
	if _, ok := loadCredentials(dir, "node-1"); ok {
		t.Error("credentials loaded after they were forgotten")
	}
}

func TestSetupPendingMarker(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "lab")
	if setupPending(dir) {
		t.Fatal("a new state directory has a pending setup")
	}
	if err := markSetupPending(dir); err != nil {
		t.Fatal(err)
	}
	if !setupPending(dir) {
		t.Fatal("the mark was not kept")
	}
	for range 2 {
		if err := clearSetupPending(dir); err != nil {
			t.Fatal(err)
		}
	}
	if setupPending(dir) {
		t.Error("the mark outlived its clearing")
	}
}

// The saved grader token's expiry is written with it, read from the token
// when not given, and read from the token of a file that lacks it.
func TestSavedGraderExpiry(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c := savedCredentials{
		Node:    "node-1",
		Grader:  checks.KubeCredentials{Token: jwt(at.Unix())},
		Learner: provision.Identity{Token: "learner-token"},
	}
	if err := saveCredentials(dir, c); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, credentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"graderExpires":"2030-01-02T03:04:05Z"`) {
		t.Errorf("saved %s, want the grader's expiry in it", b)
	}
	given := at.Add(-30 * time.Minute)
	c.GraderExpires = given
	if err := saveCredentials(dir, c); err != nil {
		t.Fatal(err)
	}
	if got, ok := loadCredentials(dir, "node-1"); !ok || !got.GraderExpires.Equal(given) {
		t.Errorf("loaded expiry %v, %v; want the one saved, %v", got.GraderExpires, ok, given)
	}
	old := fmt.Sprintf(`{"node":"node-1","grader":{"token":%q},"learner":{"token":"l"}}`, jwt(at.Unix()))
	if err := os.WriteFile(filepath.Join(dir, credentialsFile), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := loadCredentials(dir, "node-1"); !ok || !got.GraderExpires.Equal(at) {
		t.Errorf("a file without the expiry: loaded %v, %v; want the token's, %v", got.GraderExpires, ok, at)
	}
}
func jwt(exp int64) string {
	claims := `{"iss":"https://kubernetes.default.svc","sub":"system:serviceaccount:labctl-system:grader"}`
	if exp != 0 {
		claims = fmt.Sprintf(`{"exp":%d,"sub":"system:serviceaccount:labctl-system:grader"}`, exp)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256"}`)) + "." + enc([]byte(claims)) + ".c2ln"
}
