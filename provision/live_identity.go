package provision

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
)

// adminConfig is the runtime's admin config, asked for once.
func (e *Live) adminConfig(ctx context.Context) (*rest.Config, error) {
	if e.admin != nil {
		return e.admin, nil
	}
	cfg, err := e.rt.Admin(ctx)
	if err != nil {
		return nil, err
	}
	e.admin = cfg
	return cfg, nil
}

// issue issues account a token of lifetime through the admin's credentials.
func (e *Live) issue(ctx context.Context, account string, lifetime time.Duration) (Identity, error) {
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return Identity{}, err
	}
	cs, err := clientFor(admin)
	if err != nil {
		return Identity{}, fmt.Errorf("connecting to cluster %s: %w", e.rt.Name(), err)
	}
	id, err := issueToken(ctx, cs, account, admin.CAData, lifetime)
	if err != nil {
		return Identity{}, fmt.Errorf("cluster %s: %w", e.rt.Name(), err)
	}
	return id, nil
}

// SetIdentities gives e the cluster's admin config and the learner's and
// the grader's identities a setup issued (SetupCluster), and hands them to
// a runtime that keeps them.
func (e *Live) SetIdentities(admin *rest.Config, learner, grader Identity) {
	e.admin, e.learner, e.grader = admin, learner, grader
	e.keep()
}

// keep hands the identities to a runtime that keeps them.
func (e *Live) keep() {
	if e.feat.Keep != nil && e.learner.Token != "" && e.grader.Token != "" {
		e.feat.Keep(e.learner, e.grader)
	}
}

// LearnerIdentity is the learner's identity, issued the first time.
func (e *Live) LearnerIdentity(ctx context.Context) (Identity, error) {
	if e.learner.Token == "" {
		id, err := e.issue(ctx, LearnerAccount, learnerTokenLifetime)
		if err != nil {
			return Identity{}, err
		}
		e.learner = id
		e.keep()
	}
	return e.learner, nil
}

// learnerNeedsRenewal reports whether a learner token expiring at expires
// must be replaced at now; an unknown expiry is left as it is.
func learnerNeedsRenewal(expires, now time.Time) bool {
	return !expires.IsZero() && expires.Sub(now) < learnerRenewBefore
}

// RenewCredentials renews, at now, the learner's token if it expired or
// nearly has, and the grader's (GraderCredentials), as a lab started again
// after a while needs; it reports whether the learner's was renewed (its
// kubeconfig must then be written again).
func (e *Live) RenewCredentials(ctx context.Context, now time.Time) (learnerRenewed bool, err error) {
	expires := e.learner.Expires
	if expires.IsZero() && e.learner.Token != "" {
		expires = TokenExpiry(e.learner.Token)
	}
	if e.learner.Token == "" || learnerNeedsRenewal(expires, now) {
		id, err := e.issue(ctx, LearnerAccount, learnerTokenLifetime)
		if err != nil {
			return false, fmt.Errorf("renewing the learner's credentials: %w", err)
		}
		e.learner = id
		e.keep()
		learnerRenewed = true
	}
	if _, err := e.GraderCredentials(ctx); err != nil {
		return learnerRenewed, err
	}
	return learnerRenewed, nil
}

// GraderCredentials are the checker's credentials; a token near its end
// (graderNeedsRenewal) is renewed first: a shell may stay open for hours.
func (e *Live) GraderCredentials(ctx context.Context) (*checks.KubeCredentials, error) {
	if graderNeedsRenewal(e.graderExpiry(), time.Now()) {
		id, err := e.issue(ctx, GraderAccount, graderTokenLifetime)
		if err != nil {
			return nil, fmt.Errorf("renewing the grader's credentials: %w", err)
		}
		e.grader = id
		e.keep()
	}
	return &checks.KubeCredentials{Server: e.rt.GraderServer(), Token: e.grader.Token, CAData: e.grader.CAData}, nil
}

// graderExpiry is when the grader's token ends: as the API server said, or
// as the token says.
func (e *Live) graderExpiry() time.Time {
	if e.grader.Token == "" {
		return time.Time{}
	}
	if !e.grader.Expires.IsZero() {
		return e.grader.Expires
	}
	return TokenExpiry(e.grader.Token)
}

// WriteKubeconfig writes the learner's kubeconfig to /root/.kube/config:
// the learner's token against the API server as the sandbox reaches it,
// in the lab's sandbox.namespace (firstNamespace).
//
// A lab with no cluster gets no kubeconfig: kubectl is replaced by a
// command that says so (writeNoCluster).
func (e *Live) WriteKubeconfig(ctx context.Context) error {
	if !e.Lab.HasCluster() {
		return e.writeNoCluster(ctx)
	}
	learner, err := e.LearnerIdentity(ctx)
	if err != nil {
		return err
	}
	ca := learner.CAData
	if len(ca) == 0 && e.admin != nil {
		ca = e.admin.CAData
	}
	b, err := learnerKubeconfig(e.Lab.Metadata.Name, e.rt.SandboxServer(), ca, learner.Token, FirstNamespace(e.Lab))
	if err != nil {
		return err
	}
	if err := e.rt.WriteFile(ctx, "/root/.kube/config", b); err != nil {
		return fmt.Errorf("writing the learner kubeconfig: %w", err)
	}
	if e.Lab.Cluster.NodeAccess {
		if e.feat.NodeAccess != nil {
			return e.feat.NodeAccess(ctx)
		}
		return e.writeNodeCommand(ctx)
	}
	return nil
}

// LearnerConfig is the learner's identity for a client on the host: the
// learner's token against the API server's host-facing address, as the
// browser page's previews of the lab's Services use it.
func (e *Live) LearnerConfig(ctx context.Context) (*rest.Config, error) {
	if !e.Lab.HasCluster() {
		return nil, ErrNoCluster
	}
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return nil, err
	}
	learner, err := e.LearnerIdentity(ctx)
	if err != nil {
		return nil, err
	}
	ca := learner.CAData
	if len(ca) == 0 {
		ca = admin.CAData
	}
	return &rest.Config{
		Host:            admin.Host,
		BearerToken:     learner.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca, ServerName: admin.TLSClientConfig.ServerName},
		Timeout:         admin.Timeout,
	}, nil
}
