package checks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// commandPath is the whole search path of a command check's program.
const commandPath = "/usr/sbin:/usr/bin:/sbin:/bin"

// maxOutput bounds how much of a command's output is kept.
const maxOutput = 1 << 20

// checkCommand runs a program with an empty environment except PATH and
// HOME=/root, in Dir (default /, resolved under Env.Root), in its own
// process group, which is killed at the check's deadline.
//
// pass: the exit code is the expected one (default 0) and stdout matches.
// fail: another exit code, stdout not matching, or no directory Dir. error: the program is
// not found or cannot start, the expression is invalid, or the deadline
// passed.
func checkCommand(ctx context.Context, env Env, cc *lab.CommandCheck) error {
	if len(cc.Run) == 0 {
		return errors.New("command check has an empty run list")
	}
	var stdoutRE *regexp.Regexp
	if cc.Stdout != "" {
		var err error
		if stdoutRE, err = compileMultiline(cc.Stdout); err != nil {
			return err
		}
	}
	prog, err := lookPath(env.Root, cc.Run[0])
	if err != nil {
		return err
	}
	dir := cc.Dir
	if dir == "" {
		dir = "/"
	}
	_, hostDir, err := resolveInRoot(env.Root, dir)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(hostDir); err != nil || !fi.IsDir() {
		return failf(msg.CommandNoDir, dir, shellWords(cc.Run))
	}

	cmd := exec.CommandContext(ctx, prog, cc.Run[1:]...)
	cmd.Dir = hostDir
	cmd.Env = []string{"PATH=" + commandPath, "HOME=/root"}
	var stdout, stderr cappedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%s killed: %w", shellWords(cc.Run), ctx.Err())
	}
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		return fmt.Errorf("running %s: %w", shellWords(cc.Run), err)
	}
	want := 0
	if cc.ExitCode != nil {
		want = *cc.ExitCode
	}
	if code != want {
		detail := strings.TrimSpace(stderr.String())
		if detail == "" {
			detail = strings.TrimSpace(stdout.String())
		}
		if detail != "" {
			return failf(msg.CommandExit, want, shellWords(cc.Run), code, msg.T(msg.OutputSuffix, quoteShort(detail)))
		}
		return failf(msg.CommandExit, want, shellWords(cc.Run), code, "")
	}
	if stdoutRE != nil && !stdoutRE.MatchString(stdout.String()) {
		return failf(msg.CommandStdout, shellWords(cc.Run), cc.Stdout, quoteShort(strings.TrimSpace(stdout.String())))
	}
	return nil
}

// lookPath finds name in commandPath (not in the checker's own PATH),
// under root. A name with a slash is used as it is.
func lookPath(root, name string) (string, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			return "", fmt.Errorf("program %q must be a bare name or an absolute path", name)
		}
		_, host, err := resolveInRoot(root, name)
		if err != nil {
			return "", err
		}
		if !isExecutable(host) {
			return "", fmt.Errorf("program %s not found or not executable", name)
		}
		return host, nil
	}
	for _, dir := range filepath.SplitList(commandPath) {
		_, host, err := resolveInRoot(root, filepath.Join(dir, name))
		if err == nil && isExecutable(host) {
			return host, nil
		}
	}
	return "", fmt.Errorf("program %q not found in %s", name, commandPath)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// shellWords shows a command line for messages.
func shellWords(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		quoted[i] = a
	}
	return "`" + strings.Join(quoted, " ") + "`"
}

// cappedBuffer keeps the first maxOutput bytes written to it and drops the
// rest, so a chatty program cannot exhaust the checker's memory.
type cappedBuffer struct{ bytes.Buffer }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); room > 0 {
		if len(p) > room {
			c.Buffer.Write(p[:room])
		} else {
			c.Buffer.Write(p)
		}
	}
	return len(p), nil
}
