package reset

import (
	"context"
	"io"
)

// RunAdminScript runs a probe's setup or restore script with the cluster's
// admin identity, out of the sandbox (provision.Env.RunAdminScript).
func (p *Provisioned) RunAdminScript(ctx context.Context, script string, out io.Writer) (int, error) {
	return p.env.RunAdminScript(ctx, script, out)
}
