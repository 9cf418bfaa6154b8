//go:build !linux

package checks

import (
	"context"
	"os/exec"
	"syscall"
)

// commandUser is the checker's own user where labctl does not switch users
// (a system other than Linux runs no grader).
type commandUser struct{ uid int }

func commandCredential() (commandUser, error) { return commandUser{}, nil }

func (commandUser) attr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func (commandUser) kill(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

func (commandUser) command(ctx context.Context, dir, prog string, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	return cmd
}
