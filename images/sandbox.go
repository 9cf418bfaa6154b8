package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ensureSandbox returns the learner's image, building it on the Debian base
// (pulled or debootstrap'd) with the kubectl built for the cluster, helm and
// yq.
func (b *builder) ensureSandbox(ctx context.Context) (string, error) {
	if ok, err := b.imageExists(ctx, SandboxRef()); err != nil || ok {
		return SandboxRef(), err
	}
	base, err := b.ensureBase(ctx)
	if err != nil {
		return "", err
	}
	ref := "labctl/sandbox:" + sandboxHash(base)
	if ok, err := b.imageExists(ctx, ref); err != nil || ok {
		return ref, err
	}
	kubeDir, err := b.binaries(ctx, kubernetesBuild())
	if err != nil {
		return "", err
	}
	tools := map[string]string{"kubectl": filepath.Join(kubeDir, "kubectl")}
	for _, g := range sandboxToolBuilds() {
		dir, err := b.binaries(ctx, g)
		if err != nil {
			return "", err
		}
		for name := range g.outputs {
			tools[name] = filepath.Join(dir, name)
		}
	}
	err = b.progress.phase(ctx, "Building the sandbox image "+ref, func(ctx context.Context) error {
		return b.buildSandbox(ctx, base, ref, tools)
	})
	return ref, err
}

// sandboxToolBuilds are the tools the sandbox ships beside kubectl.
func sandboxToolBuilds() []goBuild { return []goBuild{helmBuild(), yqBuild()} }

// buildSandbox builds ref on base with tools (name -> built binary) in
// the build context.
func (b *builder) buildSandbox(ctx context.Context, base, ref string, tools map[string]string) error {
	ctxDir, err := os.MkdirTemp("", "labctl-sandbox-")
	if err != nil {
		return fmt.Errorf("creating a build directory: %w", err)
	}
	defer os.RemoveAll(ctxDir)
	if err := writeRecipeDir("sandbox", ctxDir); err != nil {
		return fmt.Errorf("writing the sandbox recipe: %w", err)
	}
	// COPY keeps the mode: 0755 here spares the image a chmod layer that
	// would hold every binary a second time.
	for name, bin := range tools {
		dest := filepath.Join(ctxDir, name)
		if err := linkOrCopy(bin, dest); err != nil {
			return err
		}
		if err := os.Chmod(dest, 0o755); err != nil {
			return fmt.Errorf("making %s executable: %w", dest, err)
		}
	}
	if _, err := b.dockerBuild(ctx, 30*time.Minute,
		"--build-arg", "BASE_IMAGE="+base,
		"--label", "labctl.recipe="+sandboxHash(base),
		"-t", ref, ctxDir); err != nil {
		return fmt.Errorf("building %s: %w", ref, err)
	}
	return nil
}
