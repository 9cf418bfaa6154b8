package reset

import (
	"context"
	"fmt"
	"io"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// Provisioned is the real Environment: a lab that provision brought up.
// It also runs checks, so check and grade can use it too.
type Provisioned struct {
	env *provision.Env
	// up brings the lab up again after a hard reset's Down.
	up provision.Options
}

// NewProvisioned wraps a live environment; up says how to bring the lab up
// again for a hard reset (its Lab and Fixtures at least).
func NewProvisioned(env *provision.Env, up provision.Options) *Provisioned {
	return &Provisioned{env: env, up: up}
}

// Close releases the environment.
func (p *Provisioned) Close() error { return p.env.Close() }

// BackupHome streams the sandbox's /root out as a tar (entries root/...).
func (p *Provisioned) BackupHome(ctx context.Context, w io.Writer) error {
	rc, err := p.env.Engine.CopyOut(ctx, p.env.Container, "/root")
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("copying /root out of %s: %w", p.env.Container, err)
	}
	return nil
}

// RecreateSandbox replaces the sandbox and its home volume.
func (p *Provisioned) RecreateSandbox(ctx context.Context) error {
	return provision.RecreateSandbox(ctx, p.env)
}

// ResetNamespaces puts the lab's namespaces back to their starting state.
func (p *Provisioned) ResetNamespaces(ctx context.Context) error {
	return provision.ResetNamespaces(ctx, p.env)
}

// RecreateCluster takes the whole lab down and brings it up fresh; the
// environment then refers to the new cluster and sandbox.
func (p *Provisioned) RecreateCluster(ctx context.Context) error {
	st := p.up.Status
	if st == nil {
		st = statusline.Discard()
	}
	st.Start(p.up.Catalog.Say(msg.StatusRemovingCluster))
	if err := provision.Down(ctx, p.env.Lab); err != nil {
		st.End(false)
		return err
	}
	st.End(true)
	up := p.up
	up.Lab = p.env.Lab
	up.CurrentStep = ""
	env, err := provision.Up(ctx, up)
	if err != nil {
		return err
	}
	p.env.Close()
	p.env = env
	return nil
}

// RunScript runs a bash script in the sandbox as the learner would.
func (p *Provisioned) RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	return p.env.RunScript(ctx, script, stdout, stderr)
}

// RunScripts runs scripts in order in one exec of the sandbox.
func (p *Provisioned) RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (int, int, error) {
	return p.env.RunScripts(ctx, scripts, stdout, stderr, started)
}

// RunChecks runs one checker round in the sandbox.
func (p *Provisioned) RunChecks(ctx context.Context, cs []lab.Check) ([]checks.Result, error) {
	return p.env.RunChecks(ctx, cs)
}
