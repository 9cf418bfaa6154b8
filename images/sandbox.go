package images

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ensureSandbox returns the learner's image, building it on the Debian base
// (pulled or debootstrap'd) with the kubectl built for the cluster.
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
	err = b.progress.phase(ctx, "Building the sandbox image "+ref, func(ctx context.Context) error {
		return b.buildSandbox(ctx, base, ref, filepath.Join(kubeDir, "kubectl"))
	})
	return ref, err
}

func (b *builder) buildSandbox(ctx context.Context, base, ref, kubectl string) error {
	ctxDir, err := os.MkdirTemp("", "labctl-sandbox-")
	if err != nil {
		return fmt.Errorf("creating a build directory: %w", err)
	}
	defer os.RemoveAll(ctxDir)
	if err := writeRecipeDir("sandbox", ctxDir); err != nil {
		return fmt.Errorf("writing the sandbox recipe: %w", err)
	}
	if err := linkOrCopy(kubectl, filepath.Join(ctxDir, "kubectl")); err != nil {
		return err
	}
	if _, err := b.dockerBuild(ctx, 30*time.Minute,
		"--build-arg", "BASE_IMAGE="+base,
		"--label", "labctl.recipe="+sandboxHash(base),
		"-t", ref, ctxDir); err != nil {
		return fmt.Errorf("building %s: %w", ref, err)
	}
	return nil
}
