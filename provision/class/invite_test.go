package class

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

func TestInviteHasNoLearnerConfig(t *testing.T) {
	l := &lab.Lab{Metadata: lab.Metadata{Name: "shop"}}
	l.Cluster.Namespaces = []string{"shop"}
	live := provision.NewLive(l, &inviteRuntime{}, provision.Identity{}, provision.Identity{})
	if _, err := live.LearnerConfig(context.Background()); !errors.Is(err, provision.ErrInstructorOnly) {
		t.Errorf("an invite's LearnerConfig: %v, want ErrInstructorOnly", err)
	}
}

// inviteFile is an invite kubeconfig of learner ada whose token is a JWT
// with payload claims.
func inviteFile(t *testing.T, claims string) []byte {
	t.Helper()
	token := "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString([]byte(claims)) + ".c2ln"
	name := inviteContext("shop", "ada")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1"}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "labctl-ada"}
	cfg.CurrentContext = name
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An invite says when it expires, and an expired one is refused before
// labctl asks the class cluster, naming the command that makes a new one.
func TestInviteExpiry(t *testing.T) {
	at := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	t.Cleanup(func() { now = time.Now })
	now = func() time.Time { return at }
	exp := at.Add(time.Hour).Unix()
	v, err := OpenInvite(context.Background(), inviteFile(t, fmt.Sprintf(`{"exp":%d,"sub":"system:serviceaccount:labctl-ada:invite"}`, exp)))
	if err != nil {
		t.Fatal(err)
	}
	if !v.Expires().Equal(time.Unix(exp, 0)) {
		t.Errorf("Expires() = %v, want %v", v.Expires(), time.Unix(exp, 0))
	}
	now = func() time.Time { return at.Add(2 * time.Hour) }
	_, err = OpenInvite(context.Background(), inviteFile(t, fmt.Sprintf(`{"exp":%d}`, exp)))
	if !errors.Is(err, ErrInviteExpired) || !strings.Contains(err.Error(), "labctl class invite ada") {
		t.Errorf("an expired invite: %v", err)
	}
	// A token that says nothing of its expiry (not a JWT) is left to the
	// API server.
	v, err = OpenInvite(context.Background(), inviteFile(t, `not json`))
	if err != nil || !v.Expires().IsZero() {
		t.Errorf("a token without exp: %v, %v", v, err)
	}
}
