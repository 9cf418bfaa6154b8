package app

import (
	"fmt"
	"syscall"
)

// hardenChecker makes the checker process non-dumpable before it reads its
// request. The checker runs in the grader container, which no learner
// process shares a namespace with; this is a second wall: even a process of
// the same uid in the grader could neither ptrace it nor open its /proc
// files (its stdin, holding the grader's credentials) without
// CAP_SYS_PTRACE.
func hardenChecker() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); errno != 0 {
		return fmt.Errorf("making the checker non-dumpable: %w", errno)
	}
	return nil
}
