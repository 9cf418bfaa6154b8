package images

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/labctl/labctl/internal/fsx"
	"github.com/labctl/labctl/lab"
)

// RecipeLabel is the label of a workload image built from a lab's recipe:
// the hash of the recipe (workloadHash), so that an unchanged recipe is
// never rebuilt and a changed one always is.
const RecipeLabel = "labctl.recipe"

// workloadRevision enters every workload image's hash: raise it whenever
// the way labctl builds a recipe (this file) changes what the image holds.
const workloadRevision = "2"

// workloadGoFlags is how a recipe's Go program is built (part of the hash).
var workloadGoFlags = []string{"-trimpath", "-ldflags=-s -w"}

// EnsureWorkloads makes the lab's workload images present in the local engine: an image
// present is used (a built one is rebuilt when its recipe changed: label labctl.recipe);
// one with Build is built from labDir/Build; a missing required one is an error naming the
// image and the ways to get it (`docker pull NAME` where a registry answers, `labctl install`
// of a bundle that holds it). It returns the references present (optional ones only when
// present). labDir is "" for a lab without a directory (the built-in lab): Build then fails.
//
// With opts.Pull, a missing image without Build is pulled first when a
// registry answers.
func EnsureWorkloads(ctx context.Context, opts Options, l *lab.Lab, labDir string) ([]string, error) {
	if len(l.Cluster.Images) == 0 {
		return nil, nil
	}
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	return b.ensureWorkloads(ctx, l, labDir)
}

func (b *builder) ensureWorkloads(ctx context.Context, l *lab.Lab, labDir string) ([]string, error) {
	w := &workloads{builder: b, labDir: labDir}
	defer w.unlock()
	var present []string
	for _, im := range l.Cluster.Images {
		var (
			ok  bool
			err error
		)
		if im.Build != "" {
			ok, err = w.ensureBuilt(ctx, im)
		} else {
			ok, err = w.ensurePresent(ctx, im)
		}
		if err != nil {
			return nil, err
		}
		if ok {
			present = append(present, im.Name)
		}
	}
	return present, nil
}

// workloads is one EnsureWorkloads: the build lock is taken once, when the
// first image needs building, and the registry asked once.
type workloads struct {
	*builder
	labDir  string
	release func()
	// answered is whether a registry answered, once asked.
	answered *bool
}

func (w *workloads) unlock() {
	if w.release != nil {
		w.release()
	}
}

func (w *workloads) lock(ctx context.Context) error {
	if w.release != nil {
		return nil
	}
	release, err := w.lockCache(ctx)
	if err != nil {
		return err
	}
	w.release = release
	return nil
}

// ensurePresent looks for an image labctl does not build, pulling it when
// asked to and a registry answers; it reports whether the image is there,
// and fails for a required one that is not.
func (w *workloads) ensurePresent(ctx context.Context, im lab.Image) (bool, error) {
	ok, err := w.imageExists(ctx, im.Name)
	if err != nil || ok {
		return ok, err
	}
	if w.opts.Pull && w.registryAnswers(ctx) {
		err := w.progress.phase(ctx, "Pulling "+im.Name, func(ctx context.Context) error {
			_, err := w.docker(ctx, pullTimeout, "pull", im.Name)
			return err
		})
		if err == nil {
			return true, nil
		}
		w.progress.note("pulling %s failed: %v", im.Name, err)
	}
	if im.Optional {
		return false, nil
	}
	return false, MissingImageError(im.Name)
}

func (w *workloads) registryAnswers(ctx context.Context) bool {
	if w.answered == nil {
		answers := w.registry(ctx)
		w.answered = &answers
	}
	return *w.answered
}

// MissingImageError says that the lab needs ref and the local engine lacks
// it, and how to get it there.
func MissingImageError(ref string) error {
	return fmt.Errorf("the lab needs image %s (cluster.images), and the local Docker engine does not have it: "+
		"`docker pull %s` where a registry answers, or `labctl install` a bundle that holds it; then run this again", ref, ref)
}

// hostToolFiles are names that tools run on the host read as their
// configuration from the directory they work in or its parents: version
// control directories (git runs core.fsmonitor and hooks from .git/config),
// Go workspaces and environment files, credentials, direnv. labctl builds a
// recipe in a container and never runs such a tool on it, but a recipe
// holding one is refused all the same, so that nothing of it reaches a
// host tool through a copy labctl makes.
var hostToolFiles = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".bzr": true, "_darcs": true, ".fossil": true, "_FOSSIL_": true,
	".gitconfig": true, ".gitmodules": true,
	"go.work": true, "go.work.sum": true, "go.env": true,
	".netrc": true, "_netrc": true, ".npmrc": true, ".envrc": true, ".docker": true,
}

// maxRecipeSize bounds the files of a recipe, which labctl copies and
// hashes.
const maxRecipeSize = 1 << 30

// errNoGo says that the go command is not on PATH.
var errNoGo = errors.New("no go command on PATH")

// ensureBuilt makes an image built from the lab's recipe present, building
// it unless an image of the same recipe is. Without Go, or with a Go older
// than its go.mod asks for, a recipe with a Go program uses whatever image
// of that name is present (a bundle's).
func (w *workloads) ensureBuilt(ctx context.Context, im lab.Image) (bool, error) {
	if w.labDir == "" {
		return false, fmt.Errorf("image %s is built from %s, but this lab has no directory to build it in (a lab built into labctl): "+
			"use the lab from its directory (--lab DIR)", im.Name, im.Build)
	}
	if err := checkWorkloadName(im.Name); err != nil {
		return false, err
	}
	r, err := readRecipe(w.labDir, im.Build)
	if err != nil {
		return false, fmt.Errorf("building %s: %w", im.Name, err)
	}
	var tc goToolchain
	if r.goMod {
		tc, err = w.hostGo(ctx)
		if err != nil && !errors.Is(err, errNoGo) {
			return false, err
		}
		if errors.Is(err, errNoGo) || !goAtLeast(tc.version, r.goVersion) {
			ok, err := w.imageExists(ctx, im.Name)
			if err != nil || ok {
				return ok, err
			}
			return false, noGoError(im.Name, r, tc.version)
		}
	}
	want := workloadHash(r, tc.version)
	if built, err := w.recipeOf(ctx, im.Name); err != nil || built == want {
		return err == nil, err
	}
	if err := w.lock(ctx); err != nil {
		return false, err
	}
	// Another labctl may have built it while this one waited for the lock.
	if built, err := w.recipeOf(ctx, im.Name); err != nil || built == want {
		return err == nil, err
	}
	if err := w.checkReplaceable(ctx, im.Name); err != nil {
		return false, err
	}
	if err := w.checkDockerfileImages(ctx, r); err != nil {
		return false, fmt.Errorf("building %s: %w", im.Name, err)
	}
	err = w.progress.phase(ctx, "Building workload image "+im.Name, func(ctx context.Context) error {
		return w.buildWorkload(ctx, im.Name, r, tc, want)
	})
	if err != nil {
		return false, fmt.Errorf("building %s from %s: %w", im.Name, r.dir, err)
	}
	return true, nil
}

// checkWorkloadName refuses to build a lab's image under a name of
// labctl's own images (node, sandbox, Debian base) or kind's.
func checkWorkloadName(ref string) error {
	n := lab.NormalizeImageName(ref)
	for _, own := range []string{"docker.io/labctl/", "docker.io/kindest/", "docker.io/library/debian:"} {
		if strings.HasPrefix(n, own) {
			return fmt.Errorf("image %s is built from a lab's recipe under a name of labctl's own images (%s…), which every lab on this machine runs: give the lab's image a name of its own, e.g. labctl.local/<lab>/<name>:<tag>", ref, strings.TrimPrefix(own, "docker.io/"))
		}
	}
	return nil
}

// checkReplaceable refuses to replace an image present in the engine that
// was not built from a lab's recipe (one pulled or loaded, which other labs
// may run as it is).
func (b *builder) checkReplaceable(ctx context.Context, ref string) error {
	out, ok, err := b.inspectImage(ctx, ref, `{{index .Config.Labels "`+RecipeLabel+`"}}`)
	if err != nil || !ok {
		return err
	}
	if strings.TrimSpace(out) == "" {
		return fmt.Errorf("the local Docker engine has an image %s that was not built from a lab's recipe (pulled or loaded), and a lab's build does not replace it: "+
			"give the lab's image a name of its own, e.g. labctl.local/<lab>/<name>:<tag>, or remove the image (`docker rmi %s`) if it is this lab's", ref, ref)
	}
	return nil
}

// checkDockerfileImages refuses images the recipe's Dockerfile starts from
// or copies from that the local engine lacks (the builder would pull them,
// outside the build's network) or that carry ONBUILD instructions.
func (b *builder) checkDockerfileImages(ctx context.Context, r recipe) error {
	for _, im := range r.images {
		out, ok, err := b.inspectImage(ctx, im.ref, "{{len .Config.OnBuild}}")
		switch {
		case err != nil:
			return err
		case !ok:
			return fmt.Errorf("%s line %d names image %s, which the local Docker engine does not have, and a lab's build pulls nothing: "+
				"`docker pull %s` (or `docker load` it) first, or build on ${BASE_IMAGE}", filepath.Join(r.dir, "Dockerfile"), im.line, im.ref, im.ref)
		case strings.TrimSpace(out) != "0":
			return fmt.Errorf("%s line %d: image %s %w: build on another image", filepath.Join(r.dir, "Dockerfile"), im.line, im.ref, errOnBuild)
		}
	}
	return nil
}

// recipeOf returns the recipe label of the image ref, "" when the image has
// none or is missing.
func (b *builder) recipeOf(ctx context.Context, ref string) (string, error) {
	out, _, err := b.inspectImage(ctx, ref, `{{index .Config.Labels "`+RecipeLabel+`"}}`)
	return strings.TrimSpace(out), err
}

// buildWorkload builds ref from recipe r in a copy of its directory: its Go
// program first, when it has one, in a container (buildGoProgram), then the
// Dockerfile, with no network.
func (b *builder) buildWorkload(ctx context.Context, ref string, r recipe, tc goToolchain, hash string) error {
	work, err := os.MkdirTemp("", "labctl-workload-")
	if err != nil {
		return fmt.Errorf("creating a build directory: %w", err)
	}
	defer os.RemoveAll(work)
	ctxDir := filepath.Join(work, "context")
	root, err := os.OpenRoot(r.dir)
	if err != nil {
		return fmt.Errorf("copying the recipe: %w", err)
	}
	err = fsx.CopyTree(root.FS(), ctxDir, fsx.ExecBit)
	root.Close()
	if err != nil {
		return fmt.Errorf("copying the recipe: %w", err)
	}
	if r.goMod {
		b.progress.step("go build")
		if err := b.buildGoProgram(ctx, r, tc, work, ctxDir); err != nil {
			return err
		}
	}
	args := []string{"--network", "none", "--label", RecipeLabel + "=" + hash, "-t", ref}
	if r.usesBase {
		base, err := b.ensureBase(ctx)
		if err != nil {
			return err
		}
		args = append(args, "--build-arg", "BASE_IMAGE="+base)
	}
	_, err = b.dockerBuild(ctx, 30*time.Minute, append(args, ctxDir)...)
	return err
}

// Limits of a recipe's go build container.
const (
	goBuildTimeout = 10 * time.Minute
	goBuildMemory  = "2g"
	goBuildTmpfs   = "1g"
	goBuildPids    = "512"
	// goBuildUser is the build's user: nobody's, not root.
	goBuildUser = "65532:65532"
)

// randomSuffix returns 8 random hex digits.
func randomSuffix() string {
	var buf [4]byte
	_, _ = rand.Read(buf[:])
	return hex.EncodeToString(buf[:])
}

// Workload is one of a lab's workload images as the local engine has it.
type Workload struct {
	lab.Image
	Present bool
	// ID, Size and Created describe a present image.
	ID, Size, Created string
}

// Workloads lists the lab's workload images and which of them the local
// engine has.
func Workloads(ctx context.Context, opts Options, l *lab.Lab) ([]Workload, error) {
	if len(l.Cluster.Images) == 0 {
		return nil, nil
	}
	b, err := newBuilder(opts)
	if err != nil {
		return nil, err
	}
	out, err := b.docker(ctx, time.Minute, "image", "ls", "--format", imageListFormat)
	if err != nil {
		return nil, fmt.Errorf("listing images: %w", err)
	}
	engine := map[string]Image{}
	for _, im := range splitImageList(out) {
		engine[lab.NormalizeImageName(im.Ref)] = im
	}
	list := make([]Workload, 0, len(l.Cluster.Images))
	for _, im := range l.Cluster.Images {
		w := Workload{Image: im}
		if e, ok := engine[lab.NormalizeImageName(im.Name)]; ok {
			w.Present, w.ID, w.Size, w.Created = true, e.ID, e.Size, e.Created
		}
		list = append(list, w)
	}
	return list, nil
}

// imageListFormat is the `docker image ls --format` splitImageList reads.
const imageListFormat = "{{.Repository}}:{{.Tag}}\t{{.ID}}\t{{.Size}}\t{{.CreatedSince}}"

// splitImageList reads `docker image ls --format imageListFormat`, leaving
// out untagged images and lines it cannot read.
func splitImageList(out string) []Image {
	var images []Image
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if len(f) != 4 || strings.HasSuffix(f[0], ":<none>") || strings.HasPrefix(f[0], "<none>") {
			continue
		}
		images = append(images, Image{Ref: f[0], ID: f[1], Size: f[2], Created: f[3]})
	}
	return images
}
