package docker

import (
	"context"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/mount"

	"github.com/labctl/labctl/sandbox"
)

// ErrNotStatic says the labctl binary cannot run in the grader, whose
// libraries are the sandbox image's.
var ErrNotStatic = errors.New("labctl must be built static (CGO_ENABLED=0 make build)")

// CheckerBinary returns the path of the binary placed in the grader to
// run checks: override when set (the checker-binary setting), else the
// running labctl. It must be a static ELF executable, since the grader's
// libraries are the sandbox image's, not the host's.
func CheckerBinary(override string) (string, error) {
	p := override
	if p == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("finding the labctl binary: %w", err)
		}
		p = exe
	}
	if err := checkStatic(p); err != nil {
		return "", err
	}
	return p, nil
}

// BinaryArch is the architecture of an ELF executable, as GOARCH and the
// Kubernetes label kubernetes.io/arch name it (amd64, arm64, ...).
func BinaryArch(p string) (string, error) {
	f, err := elf.Open(p)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", p, err)
	}
	defer f.Close()
	arch, ok := elfArch[f.Machine]
	if !ok {
		return "", fmt.Errorf("%s is built for %s, which labctl does not know", p, f.Machine)
	}
	if arch == "ppc64" && f.Data == elf.ELFDATA2LSB {
		arch = "ppc64le"
	}
	return arch, nil
}

var elfArch = map[elf.Machine]string{
	elf.EM_X86_64: "amd64", elf.EM_AARCH64: "arm64", elf.EM_386: "386", elf.EM_ARM: "arm",
	elf.EM_PPC64: "ppc64", elf.EM_S390: "s390x", elf.EM_RISCV: "riscv64",
}

func checkStatic(p string) error {
	f, err := elf.Open(p)
	if err != nil {
		return fmt.Errorf("checker binary %s is not an ELF executable (%v): %w", p, err, ErrNotStatic)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return fmt.Errorf("checker binary %s is dynamically linked: %w", p, ErrNotStatic)
		}
	}
	return nil
}

// ExecChecker places the static binary at checkerPath, under a fresh name,
// in the host directory that the grader container mounts read-only at
// CheckerMount, runs it once there with args, as root in / with only
// sandbox.CheckerPath in its environment, stdin as its input and its
// output to stdout and stderr, removes it on the host, and returns its exit
// code. The grader shares no namespace with the sandbox: no process of the
// learner's can see the checker, its pipes or that directory. It knows
// nothing of what the checker says: provision.RunChecker reads that.
func (e *Engine) ExecChecker(ctx context.Context, containerName, checkerPath string, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	dir, env, err := e.checkerSetting(ctx, containerName)
	if err != nil {
		return -1, err
	}
	var rnd [12]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return -1, fmt.Errorf("naming the checker: %w", err)
	}
	name := "labctl-check-" + hex.EncodeToString(rnd[:])
	hostPath := filepath.Join(dir, name)
	if err := placeChecker(checkerPath, hostPath); err != nil {
		return -1, err
	}
	defer os.Remove(hostPath)

	code, err := e.Exec(ctx, containerName, ExecOptions{
		Cmd:     append([]string{sandbox.CheckerMount + "/" + name}, args...),
		Env:     env,
		Bare:    true,
		WorkDir: "/",
		User:    "0:0",
		Stdin:   stdin,
		Stdout:  stdout,
		Stderr:  stderr,
	})
	if err != nil {
		return code, fmt.Errorf("running the checker: %w", err)
	}
	return code, nil
}

// checkerSetting inspects the container once for the host directory it has
// mounted read-only at CheckerMount and the checker's cleared environment.
func (e *Engine) checkerSetting(ctx context.Context, containerName string) (dir string, env []string, err error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	c, err := e.cli.ContainerInspect(ctx, containerName)
	if err != nil {
		return "", nil, fmt.Errorf("inspecting container %s: %w", containerName, err)
	}
	for _, m := range c.Mounts {
		if m.Destination == sandbox.CheckerMount && m.Type == mount.TypeBind && !m.RW {
			dir = m.Source
		}
	}
	if dir == "" {
		return "", nil, fmt.Errorf("container %s has no read-only checker mount at %s: run `labctl up` to recreate it", containerName, sandbox.CheckerMount)
	}
	var defined []string
	if c.Config != nil {
		defined = c.Config.Env
	}
	return dir, clearedEnv(defined), nil
}

// placeChecker puts a copy of the binary at dst (mode 0555): a hard link
// when both are on one file system, else a full copy.
func placeChecker(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("opening the checker binary: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o555)
	if err != nil {
		return fmt.Errorf("placing the checker in %s: %w", filepath.Dir(dst), err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		os.Remove(dst)
		return fmt.Errorf("placing the checker in %s: %w", filepath.Dir(dst), err)
	}
	if err := out.Close(); err != nil {
		os.Remove(dst)
		return fmt.Errorf("placing the checker in %s: %w", filepath.Dir(dst), err)
	}
	return nil
}

// clearedEnv returns an exec environment that overrides every variable the
// container defines (defined), since Docker exec inherits them: PATH is
// sandbox.CheckerPath, HOME is / (Docker would otherwise fill it from the
// container's /etc/passwd, which the learner controls) and every other
// variable, HOSTNAME included, is empty.
func clearedEnv(defined []string) []string {
	env := []string{sandbox.CheckerPath, "HOME=/", "HOSTNAME="}
	for _, kv := range defined {
		k, _, _ := strings.Cut(kv, "=")
		if k != "PATH" && k != "HOME" && k != "HOSTNAME" && k != "" {
			env = append(env, k+"=")
		}
	}
	return env
}
