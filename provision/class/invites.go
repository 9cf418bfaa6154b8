package class

import (
	"context"
	"fmt"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// inviteContext names the context of an invite kubeconfig: the lab and
// the learner, which `labctl shell --invite` reads back.
func inviteContext(labName, learner string) string { return "labctl:" + labName + ":" + learner }

// Invite bounds: a token lives at least MinInviteTTL and at most
// MaxInviteTTL (the class cluster may cut it shorter).
const (
	MinInviteTTL = 10 * time.Minute
	MaxInviteTTL = 7 * 24 * time.Hour
)

// Invite returns a kubeconfig for the class cluster that may only exec into
// and port-forward to the learner's sandbox Pod, with a token that expires
// after ttl, and when it expires as the class cluster says.
func (c *Class) Invite(ctx context.Context, learner string, ttl time.Duration) ([]byte, time.Time, error) {
	if ttl < MinInviteTTL || ttl > MaxInviteTTL {
		return nil, time.Time{}, fmt.Errorf("an invite lasts from %v to %v, not %v", MinInviteTTL, MaxInviteTTL, ttl)
	}
	ns, err := c.learnerNamespace(ctx, learner)
	if err != nil {
		return nil, time.Time{}, err
	}
	secs := int64(ttl / time.Second)
	tr, err := c.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, inviteAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) {
		return nil, time.Time{}, fmt.Errorf("learner %s has no invite identity: run `labctl class up` again", learner)
	}
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("making the invite token of %s: %w", learner, err)
	}
	ca := c.rest.CAData
	if len(ca) == 0 && c.rest.CAFile != "" {
		if ca, err = os.ReadFile(c.rest.CAFile); err != nil {
			return nil, time.Time{}, err
		}
	}
	name := inviteContext(c.cfg.Lab.Metadata.Name, learner)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: c.rest.Host, CertificateAuthorityData: ca, TLSServerName: c.rest.ServerName}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: ns}
	cfg.CurrentContext = name
	out, err := clientcmd.Write(*cfg)
	return out, tr.Status.ExpirationTimestamp.Time, err
}

// RevokeInvites makes the learner's invite identity anew: every invite
// written for them before stops working at once (their tokens are bound to
// the old account).
func (c *Class) RevokeInvites(ctx context.Context, learner string) error {
	ns, err := c.learnerNamespace(ctx, learner)
	if err != nil {
		return err
	}
	accounts := c.cs.CoreV1().ServiceAccounts(ns)
	if err := accounts.Delete(ctx, inviteAccount, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("revoking the invites of %s: %w", learner, err)
	}
	sa, _, _ := c.objects(learner).inviteObjects()
	return c.poll(ctx, time.Minute, "the new invite identity of "+ns, func() (bool, error) {
		_, err := accounts.Create(ctx, sa, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return false, nil // the old one is still being deleted
		}
		return err == nil, err
	})
}
