package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
)

// CheckerPath is the PATH of the checker's process: nothing else of the
// container's environment reaches it.
const CheckerPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

// ErrNotStatic says the labctl binary cannot run inside the sandbox.
var ErrNotStatic = errors.New("labctl must be built static (CGO_ENABLED=0 make build)")

// CheckerBinary returns the path of the binary copied into the sandbox to
// run checks: override when set (the checker-binary setting), else the
// running labctl. It must be a static ELF executable, since the sandbox's
// libraries are the learner's.
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

// CheckerRound is the outcome of one run of the checker in a container.
type CheckerRound struct {
	Stdout, Stderr []byte
	ExitCode       int
	// Overran is set when ctx ended before the checker did; its output is
	// then incomplete and must not be trusted.
	Overran bool
}

// runChecker copies the static binary at checkerPath into a fresh
// directory of the container, runs it once as root in / with only
// CheckerPath in its environment and stdin as its input, and removes it.
func (e *Engine) runChecker(ctx context.Context, containerName, checkerPath string, args []string, stdin []byte) (CheckerRound, error) {
	bin, err := os.Open(checkerPath)
	if err != nil {
		return CheckerRound{}, fmt.Errorf("opening the checker binary: %w", err)
	}
	defer bin.Close()
	st, err := bin.Stat()
	if err != nil {
		return CheckerRound{}, fmt.Errorf("opening the checker binary: %w", err)
	}
	env, err := e.clearedEnv(ctx, containerName)
	if err != nil {
		return CheckerRound{}, err
	}
	var rnd [12]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return CheckerRound{}, fmt.Errorf("naming the checker directory: %w", err)
	}
	dirName := "labctl-check-" + hex.EncodeToString(rnd[:])
	dir := "/run/" + dirName
	if err := e.copyChecker(ctx, containerName, dirName, bin, st.Size()); err != nil {
		return CheckerRound{}, err
	}
	defer e.removeDir(containerName, dir)

	var out, errOut bytes.Buffer
	code, err := e.Exec(ctx, containerName, ExecOptions{
		Cmd:     append([]string{dir + "/labctl"}, args...),
		Env:     env,
		WorkDir: "/",
		User:    "root",
		Stdin:   bytes.NewReader(stdin),
		Stdout:  &out,
		Stderr:  &errOut,
	})
	round := CheckerRound{Stdout: out.Bytes(), Stderr: errOut.Bytes(), ExitCode: code}
	if err != nil {
		if ctx.Err() != nil {
			round.Overran = true
			return round, nil
		}
		return round, fmt.Errorf("running the checker: %w", err)
	}
	return round, nil
}

// copyChecker puts the binary at /run/<dirName>/labctl, the directory mode
// 0700 and the binary 0500.
func (e *Engine) copyChecker(ctx context.Context, containerName, dirName string, bin io.Reader, size int64) error {
	cctx, cancel := context.WithTimeout(ctx, copyTimeout)
	defer cancel()
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeTar(pw, []string{dirName}, 0o700, dirName+"/labctl", 0o500, bin, size))
	}()
	err := e.cli.CopyToContainer(cctx, containerName, "/run", pr, container.CopyToContainerOptions{})
	pr.Close()
	if err != nil {
		return fmt.Errorf("copying the checker into %s: %w", containerName, err)
	}
	return nil
}

// removeDir deletes the checker's directory after a round, even when the
// round's context has ended.
func (e *Engine) removeDir(containerName, dir string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _ = e.Exec(ctx, containerName, ExecOptions{
		Cmd: []string{"/bin/rm", "-rf", "--", dir},
		Env: []string{CheckerPath}, WorkDir: "/", User: "root",
	})
}

// clearedEnv returns an exec environment that overrides every variable the
// container defines, since Docker exec inherits them: PATH is CheckerPath,
// HOME is / (Docker would otherwise fill it from the container's
// /etc/passwd, which the learner controls) and every other variable,
// HOSTNAME included, is empty.
func (e *Engine) clearedEnv(ctx context.Context, containerName string) ([]string, error) {
	ctx, cancel := bounded(ctx)
	defer cancel()
	c, err := e.cli.ContainerInspect(ctx, containerName)
	if err != nil {
		return nil, fmt.Errorf("inspecting container %s: %w", containerName, err)
	}
	env := []string{CheckerPath, "HOME=/", "HOSTNAME="}
	if c.Config != nil {
		for _, kv := range c.Config.Env {
			k, _, _ := strings.Cut(kv, "=")
			if k != "PATH" && k != "HOME" && k != "HOSTNAME" && k != "" {
				env = append(env, k+"=")
			}
		}
	}
	return env, nil
}
