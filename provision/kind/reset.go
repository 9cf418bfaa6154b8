package kind

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/labctl/labctl/internal/docker"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/sandbox"
)

// RecreateSandbox replaces the sandbox container, its home volume and the
// grader container with new ones made with the same settings (the home
// empty).
func (k *kindRuntime) RecreateSandbox(ctx context.Context) error {
	name := k.lab.Metadata.Name
	spec, err := sandbox.BuildSpec(k.settings)
	if err != nil {
		return err
	}
	graderSpec, err := sandbox.BuildGraderSpec(k.settings)
	if err != nil {
		return err
	}
	// The grader mounts the home volume too: both go before the volume,
	// and both come back, at the same time.
	if err := both(ctx,
		func(ctx context.Context) error { return k.engine.Remove(ctx, k.container) },
		func(ctx context.Context) error { return k.engine.Remove(ctx, k.grader) }); err != nil {
		return err
	}
	vol := sandbox.VolumeName(name)
	if err := k.engine.RemoveVolume(ctx, vol); err != nil {
		return err
	}
	if _, err := k.engine.EnsureVolume(ctx, vol, sandbox.Labels(name, sandbox.RoleHome)); err != nil {
		return err
	}
	return both(ctx,
		func(ctx context.Context) error { _, err := k.engine.EnsureSandbox(ctx, spec); return err },
		func(ctx context.Context) error { _, err := k.engine.EnsureSandbox(ctx, graderSpec); return err })
}

// copyHome streams /root of container out as a tar (entries root/...).
func copyHome(ctx context.Context, engine *docker.Engine, container string, w io.Writer) error {
	rc, err := engine.CopyOut(ctx, container, "/root")
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("copying /root out of %s: %w", container, err)
	}
	return nil
}

// RecreateCluster takes the whole lab down and brings it up fresh, with
// the options it was brought up with (Up's, or WithUpOptions) and the first
// step's setup. It prints its progress on those options' status lines.
func (k *kindRuntime) RecreateCluster(ctx context.Context) (*provision.Live, error) {
	up := k.up
	up.Lab = k.lab
	up.CurrentStep = ""
	st := up.Status
	if st == nil {
		st = statusline.Discard()
	}
	st.Start(up.Catalog.Say(msg.StatusRemovingCluster))
	if err := Down(ctx, k.lab); err != nil {
		st.End(false)
		return nil, err
	}
	st.End(true)
	fresh, err := Up(ctx, up)
	if err != nil {
		return nil, err
	}
	k.engine.Close()
	return fresh, nil
}

// both runs f and g at the same time and returns their errors joined.
func both(ctx context.Context, f, g func(context.Context) error) error {
	errc := make(chan error, 1)
	go func() { errc <- g(ctx) }()
	err := f(ctx)
	return errors.Join(err, <-errc)
}
