package checks

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A command check's processes run, when the checker is root (as it is in
// the grader), as a user of their own: a uid from commandUIDs that no
// process has, its own group, no supplementary groups, and of the checker's
// capabilities only DAC_OVERRIDE (ambient), so a program still reads every
// file of the learner's, whatever its mode. Such a process cannot signal,
// trace or open the /proc files of the checker or of another check's
// processes (each of another user, and it has neither KILL nor SYS_PTRACE):
// whatever the program runs (the learner's code, if the check runs it) can
// neither forge the checker's answer through its stdout nor read its
// request on stdin, even in the moment before the checker makes itself
// non-dumpable. It owns no file, so git refuses to read a repository of the
// learner's (the "dubious ownership" refusal): a repository's own
// configuration, hooks and filters never run. When the check ends, every
// process of that user is killed.
const (
	commandUIDBase = 30000
	commandUIDSpan = 30000
)

// commandStarter is argv[0] of the checker run again as the start of a
// command of another user: the kernel clears that user's effective
// capabilities until it executes a program, so only after an exec can it
// enter a directory the learner closed (their home is mode 0700); the start
// enters it, then executes the program.
const commandStarter = "labctl-command-start"

func init() {
	if len(os.Args) >= 3 && os.Args[0] == commandStarter {
		startCommand(os.Args[1], os.Args[2:])
	}
}

// startCommand enters dir and executes argv, or exits with status 127.
func startCommand(dir string, argv []string) {
	err := os.Chdir(dir)
	if err == nil {
		err = syscall.Exec(argv[0], argv, os.Environ())
	}
	os.Stderr.WriteString("labctl: starting " + argv[0] + " in " + dir + ": " + err.Error() + "\n")
	os.Exit(127)
}

// command is the process that runs prog with args in dir as u.
func (u commandUser) command(ctx context.Context, dir, prog string, args []string) *exec.Cmd {
	if u.uid == 0 {
		cmd := exec.CommandContext(ctx, prog, args...)
		cmd.Dir = dir
		return cmd
	}
	cmd := exec.CommandContext(ctx, "/proc/self/exe")
	cmd.Args = append([]string{commandStarter, dir, prog}, args...)
	cmd.Dir = "/"
	return cmd
}

// commandUser is who a command's processes run as; the zero value is the
// checker's own user (a checker that is not root has nothing to switch).
type commandUser struct {
	uid int
}

// commandCredential picks a user for one command.
func commandCredential() (commandUser, error) {
	if os.Geteuid() != 0 {
		return commandUser{}, nil
	}
	for range 32 {
		uid := commandUIDBase + rand.IntN(commandUIDSpan)
		if len(processesOf(uid)) == 0 {
			return commandUser{uid: uid}, nil
		}
	}
	return commandUser{}, errors.New("no free user to run the command as: too many processes of earlier commands are still running")
}

// attr runs the command in a process group of its own, as u.
func (u commandUser) attr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if u.uid != 0 {
		id := uint32(u.uid)
		a.Credential = &syscall.Credential{Uid: id, Gid: id, Groups: []uint32{}}
		a.AmbientCaps = []uintptr{unix.CAP_DAC_OVERRIDE}
	}
	return a
}

// kill kills the process group of pid (when pid > 0) and every process of
// u, until none is left (a process forking as fast as it can is bounded by
// the grader's limit of processes).
func (u commandUser) kill(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	if u.uid == 0 {
		return
	}
	for range 200 {
		left := processesOf(u.uid)
		if len(left) == 0 {
			return
		}
		for _, p := range left {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// processesOf lists the live processes (zombies aside) whose real uid is
// uid.
func processesOf(uid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := []byte("\nUid:\t" + strconv.Itoa(uid) + "\t")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil || !bytes.Contains(status, want) || bytes.Contains(status, []byte("\nState:\tZ")) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}
