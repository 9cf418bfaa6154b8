package images

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// recipe is a workload image's build directory as labctl reads it.
type recipe struct {
	dir string
	// tree is the hash of the directory's files (lab.TreeHash).
	tree string
	// goMod is set when the directory holds a Go module; goVersion is the
	// Go version its go directive asks for ("" when it names none), and
	// vendor is set when it vendors its modules (vendor/modules.txt).
	goMod     bool
	goVersion string
	vendor    bool
	// usesBase is set when the Dockerfile names the BASE_IMAGE argument.
	usesBase bool
	// images are the images the Dockerfile needs from the local engine.
	images []dockerfileImage
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

// readRecipe reads the recipe build (a slash path) of the lab in labDir.
// It refuses a recipe reached through a link, one holding links or other
// files that are neither regular files nor directories, files that host
// tools read as configuration (hostToolFiles), a Dockerfile asking the
// builder for what a lab may not have (checkDockerfile), and a Go module
// that needs modules it does not vendor.
func readRecipe(labDir, build string) (recipe, error) {
	dir := filepath.Join(labDir, filepath.FromSlash(build))
	r := recipe{dir: dir}
	p := labDir
	for _, part := range strings.Split(build, "/") {
		p = filepath.Join(p, part)
		info, err := os.Lstat(p)
		if err != nil {
			return r, fmt.Errorf("reading the recipe: %w", err)
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return r, fmt.Errorf("the recipe %s is reached through the symbolic link %s: a lab's images are built from its own directories; replace the link with the directory", build, p)
		}
		if !info.IsDir() {
			return r, fmt.Errorf("the recipe %s: %s is not a directory", build, p)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return r, fmt.Errorf("reading the recipe: %w", err)
	}
	defer root.Close()
	fsys := root.FS()
	if err := checkRecipeFiles(dir, fsys); err != nil {
		return r, err
	}
	dockerfile, err := fs.ReadFile(fsys, "Dockerfile")
	if err != nil {
		return r, fmt.Errorf("reading the recipe: %w", err)
	}
	r.usesBase = strings.Contains(string(dockerfile), "BASE_IMAGE")
	if r.images, err = checkDockerfile(filepath.Join(dir, "Dockerfile"), string(dockerfile)); err != nil {
		return r, err
	}
	gomod, err := fs.ReadFile(fsys, "go.mod")
	switch {
	case err == nil:
		r.goMod = true
		r.goVersion = goDirective(string(gomod))
		if _, err := fs.Stat(fsys, "vendor/modules.txt"); err == nil {
			r.vendor = true
		} else if req := firstRequire(string(gomod)); req != "" {
			return r, fmt.Errorf("the Go program in %s needs module %s (go.mod requires it) and does not vendor it; a lab's program is built offline from its own files: "+
				"run `go mod vendor` in %s and keep vendor/ in the lab", dir, req, dir)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return r, fmt.Errorf("reading the recipe: %w", err)
	}
	if r.tree, err = lab.TreeHash(fsys); err != nil {
		return r, fmt.Errorf("reading the recipe %s: %w", dir, err)
	}
	return r, nil
}

// maxRecipeSize bounds the files of a recipe, which labctl copies and
// hashes.
const maxRecipeSize = 1 << 30

// checkRecipeFiles refuses what a recipe may not hold: links, devices,
// FIFOs and sockets (the copy a build uses holds regular files and
// directories only, so nothing leads out of the recipe), and host tools'
// configuration; and a recipe beyond maxRecipeSize.
func checkRecipeFiles(dir string, fsys fs.FS) error {
	var (
		problems []string
		size     int64
	)
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			if size += info.Size(); size > maxRecipeSize {
				return fmt.Errorf("the recipe is larger than %d MiB (sparse files count at their full length): keep only what the image is built from", maxRecipeSize>>20)
			}
		}
		if p != "." && hostToolFiles[d.Name()] {
			problems = append(problems, fmt.Sprintf("%s is configuration that host tools (git, go, credential helpers) read and run: remove it from the recipe", p))
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir() || d.Type().IsRegular():
		case d.Type()&fs.ModeSymlink != 0:
			problems = append(problems, fmt.Sprintf("%s is a symbolic link: a recipe's files are its own; replace the link with the file it names", p))
		default:
			problems = append(problems, fmt.Sprintf("%s is not a regular file (%s): remove it from the recipe", p, d.Type()))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the recipe %s: %w", dir, err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("the recipe %s holds what labctl does not build from:\n  %s", dir, strings.Join(problems, "\n  "))
	}
	return nil
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

// firstRequire returns the first module a go.mod requires, "" when it
// requires none.
func firstRequire(gomod string) string {
	block := false
	for _, line := range strings.Split(gomod, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case block && f[0] == ")":
			block = false
		case block:
			return f[0]
		case f[0] == "require" && len(f) >= 2 && f[1] == "(":
			block = true
		case f[0] == "require" && len(f) >= 2:
			return f[1]
		}
	}
	return ""
}

// workloadHash identifies a workload image: its recipe's files, the Go
// that builds its program (goVersion, the host GOROOT's that the build
// container runs; "" for a recipe without one) and how, and the Debian
// base when the recipe builds on it.
func workloadHash(r recipe, goVersion string) string {
	h := sha256.New()
	fmt.Fprintf(h, "labctl-workload %s\ntree %s\n", workloadRevision, r.tree)
	if r.goMod {
		fmt.Fprintf(h, "go %s %q %q\n", goVersion, workloadGoFlags, goBuildEnv(r, "/goroot"))
	}
	if r.usesBase {
		fmt.Fprintf(h, "base %s\n", baseRef())
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// errNoGo says that the go command is not on PATH.
var errNoGo = errors.New("no go command on PATH")

// goToolchain is the host's Go as a build container runs it: its GOROOT,
// mounted read-only at the same path, with the directories its top-level
// links lead to (Debian's golang packages link src and pkg elsewhere).
type goToolchain struct {
	root    string
	version string
	mounts  []string
}

// hostGo finds the Go on PATH. The go command runs outside any lab's
// directory, with no toolchain switch and no user configuration.
func (b *builder) hostGo(ctx context.Context) (goToolchain, error) {
	var tc goToolchain
	if _, err := exec.LookPath("go"); err != nil {
		return tc, errNoGo
	}
	out, err := command{
		args: []string{"go", "env", "GOROOT", "GOVERSION"}, dir: "/",
		env:     []string{"GOTOOLCHAIN=local", "GOENV=off", "GOWORK=off", "GOFLAGS="},
		timeout: time.Minute,
	}.run(ctx)
	if err != nil {
		return tc, fmt.Errorf("asking Go for its version: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		return tc, fmt.Errorf("asking Go for its GOROOT and version: unexpected answer %q", out)
	}
	if tc.root, err = filepath.EvalSymlinks(strings.TrimSpace(lines[0])); err != nil {
		return tc, fmt.Errorf("finding Go's GOROOT: %w", err)
	}
	tc.version = strings.TrimSpace(lines[1])
	tc.mounts = []string{tc.root}
	entries, err := os.ReadDir(tc.root)
	if err != nil {
		return tc, fmt.Errorf("reading Go's GOROOT: %w", err)
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(filepath.Join(tc.root, e.Name()))
		if err != nil || within(tc.root, target) {
			continue
		}
		if !slices.Contains(tc.mounts, target) {
			tc.mounts = append(tc.mounts, target)
		}
	}
	for _, m := range tc.mounts {
		if strings.ContainsAny(m, ",=\n") || m == "/" {
			return tc, fmt.Errorf("Go's GOROOT %s (or a directory it links to, %s) cannot be mounted into a build container: install Go in a directory of its own, e.g. /usr/local/go", tc.root, m)
		}
	}
	return tc, nil
}

// within reports whether path is dir or below it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// goBuildEnv is the whole environment of a recipe's go build in its
// container, with GOROOT at root: a static program for Linux from the
// local toolchain only (GOTOOLCHAIN=local: a toolchain line never makes Go
// fetch or pick another), no VCS stamping (Go would run git), modules from
// vendor/ or none at all (GOPROXY=off), no configuration file, no
// workspace, caches in the container's tmpfs.
func goBuildEnv(r recipe, root string) []string {
	mod := "-mod=readonly"
	if r.vendor {
		mod = "-mod=vendor"
	}
	return []string{
		"PATH=" + root + "/bin:/usr/bin:/bin", "HOME=/tmp", "GOROOT=" + root,
		"CGO_ENABLED=0", "GOOS=linux", "GOFLAGS=-buildvcs=false " + mod,
		"GOTOOLCHAIN=local", "GOENV=off", "GOWORK=off", "GOPROXY=off", "GOSUMDB=off",
		"GOCACHE=/tmp/cache", "GOPATH=/tmp/gopath", "GOTMPDIR=/tmp",
	}
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

// buildGoProgram builds the recipe's Go program from ctxDir (the recipe's copy)
// into ctxDir/app, in a container: the host's GOROOT and ctxDir mounted
// read-only, only an output directory writable, no network, no
// capabilities, not root, caches in a tmpfs, memory, pids and time
// bounded. Nothing of the recipe is read by a tool on the host.
func (b *builder) buildGoProgram(ctx context.Context, r recipe, tc goToolchain, work, ctxDir string) error {
	image, err := b.goBuildImage(ctx)
	if err != nil {
		return err
	}
	out := filepath.Join(work, "out")
	if err := os.Mkdir(out, 0o700); err != nil {
		return fmt.Errorf("creating the build's output directory: %w", err)
	}
	// The build's user writes out and reads the copy; work, 0700, keeps
	// both from the host's other users.
	if err := os.Chmod(out, 0o777); err != nil {
		return fmt.Errorf("creating the build's output directory: %w", err)
	}
	if err := os.Chmod(ctxDir, 0o755); err != nil {
		return fmt.Errorf("preparing the recipe's copy: %w", err)
	}
	name := "labctl-workload-go-" + randomSuffix()
	args := goBuildArgs(name, image, r, tc, ctxDir, out)
	_, err = command{args: append([]string{"docker"}, args...), timeout: goBuildTimeout, log: b.opts.Log}.run(ctx)
	if err != nil {
		// A docker run cut short leaves its container: remove it.
		rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_, _ = b.docker(rmCtx, time.Minute, "rm", "-f", name)
		var ce *CommandError
		if errors.As(err, &ce) && strings.Contains(ce.Output, "GOPROXY=off") {
			return fmt.Errorf("go build of %s needs modules it does not vendor (builds are offline): run `go mod vendor` there and keep vendor/ in the lab: %w", r.dir, err)
		}
		return fmt.Errorf("go build in a container: %w", err)
	}
	if err := os.Rename(filepath.Join(out, "app"), filepath.Join(ctxDir, "app")); err != nil {
		return fmt.Errorf("taking the built program: %w", err)
	}
	return nil
}

// goBuildArgs is the docker run of a recipe's go build (see buildGoProgram).
func goBuildArgs(name, image string, r recipe, tc goToolchain, src, out string) []string {
	args := []string{"run", "--rm", "--name", name,
		"--label", "dev.labctl.role=workload-build",
		"--network", "none", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
		"--user", goBuildUser, "--read-only",
		"--memory", goBuildMemory, "--memory-swap", goBuildMemory, "--pids-limit", goBuildPids,
		"--tmpfs", "/tmp:rw,nosuid,nodev,size=" + goBuildTmpfs,
		"--workdir", "/src", "--entrypoint", tc.root + "/bin/go",
	}
	for _, m := range tc.mounts {
		args = append(args, "--mount", "type=bind,src="+m+",dst="+m+",readonly")
	}
	args = append(args,
		"--mount", "type=bind,src="+src+",dst=/src,readonly",
		"--mount", "type=bind,src="+out+",dst=/out")
	for _, e := range goBuildEnv(r, tc.root) {
		args = append(args, "--env", e)
	}
	args = append(args, image, "build")
	return append(append(args, workloadGoFlags...), "-o", "/out/app", ".")
}

// goBuildImage is the image a recipe's go build runs in: only a root file
// system for the host's Go, which is static. The Debian base when the
// engine has it, else the sandbox image, else the base ensured.
func (b *builder) goBuildImage(ctx context.Context) (string, error) {
	for _, ref := range []string{baseRef(), SandboxRef()} {
		if ok, err := b.imageExists(ctx, ref); err != nil || ok {
			return ref, err
		}
	}
	return b.ensureBase(ctx)
}

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
