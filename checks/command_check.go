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
	"time"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// commandPath is the whole search path of a command check's program.
const commandPath = "/usr/sbin:/usr/bin:/sbin:/bin"

// maxOutput bounds how much of a command's output is kept.
const maxOutput = 1 << 20

// commandHome is a command's HOME: a directory that is not there, and that
// no one can make in the grader, whose root file system is read-only. The
// learner's home is not the program's: nothing the learner left there
// (~/.gitconfig, ~/.bashrc, a .pth file in ~/.local/lib/python3.*) runs.
const commandHome = "/nonexistent"

// gitOverrides are git settings given on git's command-line level (through
// GIT_CONFIG_COUNT), above any repository's own .git/config: none of the
// commands a repository's configuration names runs. They are a second wall:
// the first is that a command runs as a user that owns no repository, so git
// refuses to read the learner's (see commandCredential).
var gitOverrides = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"core.editor", "false"},
	{"core.sshCommand", "false"},
	{"core.askPass", "false"},
	{"credential.helper", ""},
	{"sequence.editor", "false"},
	{"protocol.ext.allow", "never"},
}

// commandEnv is a command's whole environment, labctl's own: PATH, a HOME
// and XDG directories that are not there, git without system, global or
// repository hooks, Python without the user's site directory and without the
// working directory on its module path (a json.py beside the learner's work
// is not imported in place of the standard library's).
func commandEnv() []string {
	env := []string{
		"PATH=" + commandPath,
		"HOME=" + commandHome,
		"XDG_CONFIG_HOME=" + commandHome + "/.config",
		"XDG_DATA_HOME=" + commandHome + "/.local/share",
		"XDG_STATE_HOME=" + commandHome + "/.local/state",
		"XDG_CACHE_HOME=" + commandHome + "/.cache",
		"XDG_CONFIG_DIRS=" + commandHome,
		"XDG_DATA_DIRS=" + commandHome,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_PAGER=cat",
		"PAGER=cat",
		"PYTHONNOUSERSITE=1",
		"PYTHONSAFEPATH=1",
		"PYTHONDONTWRITEBYTECODE=1",
		fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(gitOverrides)),
	}
	for i, kv := range gitOverrides {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, kv[0]), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, kv[1]))
	}
	return env
}

// checkCommand runs a program with labctl's environment (commandEnv), in Dir
// (default /, resolved under Env.Root), in its own process group, as a user
// of its own when the checker is root (commandCredential); its processes are
// killed at the check's deadline, and every one left when it ends.
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

	user, err := commandCredential()
	if err != nil {
		return err
	}
	cmd := user.command(ctx, hostDir, prog, cc.Run[1:])
	cmd.Env = commandEnv()
	var stdout, stderr cappedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = user.attr()
	cmd.Cancel = func() error {
		user.kill(cmd.Process.Pid)
		return nil
	}
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	user.kill(0)
	if ctx.Err() != nil {
		return fmt.Errorf("%s killed: %w", shellWords(cc.Run), ctx.Err())
	}
	code := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil && user.uid != 0 && errors.Is(err, os.ErrPermission):
		return fmt.Errorf("running %s: the grader may not run it as a user of its own (%w): run `labctl up` to recreate the grader", shellWords(cc.Run), err)
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
