package app

import (
	"fmt"
	"syscall"
)

// hardenChecker makes the checker process non-dumpable before it reads its
// request, so that the learner's processes in the sandbox, though also root,
// can neither ptrace it nor open its /proc files (its stdin, holding the
// grader's credentials, included) without CAP_SYS_PTRACE, which the sandbox
// does not have.
func hardenChecker() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); errno != 0 {
		return fmt.Errorf("making the checker non-dumpable: %w", errno)
	}
	return nil
}
