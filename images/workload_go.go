package images

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

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
