package app

import (
	"syscall"
	"testing"
)

func TestHardenCheckerMakesTheProcessNonDumpable(t *testing.T) {
	dumpable := func() uintptr {
		v, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_DUMPABLE, 0, 0)
		if errno != 0 {
			t.Fatalf("PR_GET_DUMPABLE: %v", errno)
		}
		return v
	}
	if dumpable() != 1 {
		t.Skip("the test process is already non-dumpable: nothing to observe")
	}
	if err := hardenChecker(); err != nil {
		t.Fatal(err)
	}
	if got := dumpable(); got != 0 {
		t.Fatalf("after hardenChecker the process is dumpable (%d): the learner could ptrace the checker", got)
	}
}
