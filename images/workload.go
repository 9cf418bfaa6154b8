package images

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
const workloadRevision = "1"

// workloadGoFlags is how a recipe's Go program is built (part of the hash).
var workloadGoFlags = []string{"-trimpath", "-ldflags=-s -w"}

// workloadGoEnv is the environment of that build, added to labctl's:
// static, for Linux, with the Go found on PATH (never one it would
// download).
var workloadGoEnv = []string{"CGO_ENABLED=0", "GOOS=linux", "GOTOOLCHAIN=local"}

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

// recipe is a workload image's build directory as labctl reads it.
type recipe struct {
	dir string
	// tree is the hash of the directory's files (lab.TreeHash).
	tree string
	// goMod is set when the directory holds a Go module; goVersion is the
	// Go version its go directive asks for ("" when it names none).
	goMod     bool
	goVersion string
	// usesBase is set when the Dockerfile names the BASE_IMAGE argument.
	usesBase bool
}

func readRecipe(dir string) (recipe, error) {
	r := recipe{dir: dir}
	dockerfile, err := os.ReadFile(filepath.Join(dir, "Dockerfile"))
	if err != nil {
		return r, fmt.Errorf("reading the recipe: %w", err)
	}
	r.usesBase = strings.Contains(string(dockerfile), "BASE_IMAGE")
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	switch {
	case err == nil:
		r.goMod = true
		r.goVersion = goDirective(string(gomod))
	case !errors.Is(err, os.ErrNotExist):
		return r, fmt.Errorf("reading the recipe: %w", err)
	}
	if r.tree, err = lab.TreeHash(os.DirFS(dir)); err != nil {
		return r, fmt.Errorf("reading the recipe %s: %w", dir, err)
	}
	return r, nil
}

// goDirective returns the version of a go.mod's go directive, or "".
func goDirective(gomod string) string {
	sc := bufio.NewScanner(strings.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "go" {
			return f[1]
		}
	}
	return ""
}

// workloadHash identifies a workload image: its recipe's files, the Go
// that builds its program (goVersion, "" for a recipe without one) and
// how, and the Debian base when the recipe builds on it.
func workloadHash(r recipe, goVersion string) string {
	h := sha256.New()
	fmt.Fprintf(h, "labctl-workload %s\ntree %s\n", workloadRevision, r.tree)
	if r.goMod {
		fmt.Fprintf(h, "go %s %q %q\n", goVersion, workloadGoFlags, workloadGoEnv)
	}
	if r.usesBase {
		fmt.Fprintf(h, "base %s\n", baseRef())
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// errNoGo says that the go command is not on PATH.
var errNoGo = errors.New("no go command on PATH")

// hostGoVersion is the version of the Go on PATH, e.g. go1.26.8.
func (b *builder) hostGoVersion(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", errNoGo
	}
	out, err := command{args: []string{"go", "env", "GOVERSION"}, env: workloadGoEnv, timeout: time.Minute}.run(ctx)
	if err != nil {
		return "", fmt.Errorf("asking Go for its version: %w", err)
	}
	return strings.TrimSpace(out), nil
}

// noGoError says that building ref needs Go, which the machine lacks
// (have is "") or has in too old a version.
func noGoError(ref string, r recipe, have string) error {
	want := "Go"
	if r.goVersion != "" {
		want = "Go " + r.goVersion + " or later"
	}
	lacks := "there is no go command on PATH"
	if have != "" {
		lacks = "the go command on PATH is " + have
	}
	return fmt.Errorf("building %s needs %s (%s holds a Go program) and %s: "+
		"install Go, or `labctl install` a bundle that holds the image", ref, want, r.dir, lacks)
}

// goAtLeast reports whether the Go version have (go1.26.8) is want (a go
// directive: 1.26, 1.22.1) or later; a version it cannot read passes.
func goAtLeast(have, want string) bool {
	h := goVersionNumbers(strings.TrimPrefix(have, "go"))
	w := goVersionNumbers(want)
	if h == nil || w == nil {
		return true
	}
	for i := range w {
		if i >= len(h) {
			return false
		}
		if h[i] != w[i] {
			return h[i] > w[i]
		}
	}
	return true
}

// goVersionNumbers reads 1.26.8 as [1 26 8], stopping at a pre-release
// (1.27rc1 is [1 27]); nil when it starts with no number.
func goVersionNumbers(v string) []int {
	var nums []int
	for _, part := range strings.Split(v, ".") {
		n, digits := 0, 0
		for _, c := range part {
			if c < '0' || c > '9' {
				break
			}
			n, digits = n*10+int(c-'0'), digits+1
		}
		if digits == 0 {
			break
		}
		nums = append(nums, n)
		if digits < len(part) {
			break
		}
	}
	return nums
}

// ensureBuilt makes an image built from the lab's recipe present, building
// it unless an image of the same recipe is. Without Go, or with a Go older
// than its go.mod asks for, a recipe with a Go program uses whatever image
// of that name is present (a bundle's).
func (w *workloads) ensureBuilt(ctx context.Context, im lab.Image) (bool, error) {
	if w.labDir == "" {
		return false, fmt.Errorf("image %s is built from %s, but this lab has no directory to build it in (a lab built into labctl): "+
			"use the lab from its directory (--lab DIR)", im.Name, im.Build)
	}
	r, err := readRecipe(filepath.Join(w.labDir, filepath.FromSlash(im.Build)))
	if err != nil {
		return false, fmt.Errorf("building %s: %w", im.Name, err)
	}
	goVersion := ""
	if r.goMod {
		goVersion, err = w.hostGoVersion(ctx)
		if err != nil && !errors.Is(err, errNoGo) {
			return false, err
		}
		if errors.Is(err, errNoGo) || !goAtLeast(goVersion, r.goVersion) {
			ok, err := w.imageExists(ctx, im.Name)
			if err != nil || ok {
				return ok, err
			}
			return false, noGoError(im.Name, r, goVersion)
		}
	}
	want := workloadHash(r, goVersion)
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
	err = w.progress.phase(ctx, "Building workload image "+im.Name, func(ctx context.Context) error {
		return w.buildWorkload(ctx, im.Name, r, want)
	})
	if err != nil {
		return false, fmt.Errorf("building %s from %s: %w", im.Name, r.dir, err)
	}
	return true, nil
}

// recipeOf returns the recipe label of the image ref, "" when the image has
// none or is missing.
func (b *builder) recipeOf(ctx context.Context, ref string) (string, error) {
	out, _, err := b.inspectImage(ctx, ref, `{{index .Config.Labels "`+RecipeLabel+`"}}`)
	return strings.TrimSpace(out), err
}

// buildWorkload builds ref from recipe r in a copy of its directory: its Go
// program first, when it has one, then the Dockerfile.
func (b *builder) buildWorkload(ctx context.Context, ref string, r recipe, hash string) error {
	ctxDir, err := os.MkdirTemp("", "labctl-workload-")
	if err != nil {
		return fmt.Errorf("creating a build directory: %w", err)
	}
	defer os.RemoveAll(ctxDir)
	if err := fsx.CopyTree(os.DirFS(r.dir), ctxDir, fsx.ExecBit); err != nil {
		return fmt.Errorf("copying the recipe: %w", err)
	}
	if r.goMod {
		b.progress.step("go build")
		args := append(append([]string{"go", "build"}, workloadGoFlags...), "-o", filepath.Join(ctxDir, "app"), ".")
		if _, err := (command{args: args, dir: r.dir, env: workloadGoEnv, timeout: 10 * time.Minute, log: b.opts.Log}).run(ctx); err != nil {
			return err
		}
	}
	args := []string{"--label", RecipeLabel + "=" + hash, "-t", ref}
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
