package e2etest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// heavyLock is the file whose lock one test at a time holds while it runs a
// cluster of several nodes (workers, add-ons, a class's learners). make e2e
// runs two packages at once on two cores: two such clusters side by side
// slow each other down several times over (their Pods outlive the checks'
// deadlines), while one beside the single-node tests does not.
var heavyLock = filepath.Join(os.TempDir(), "labctl-e2e-heavy.lock")

// Heavy waits until no other test process runs a cluster of several nodes,
// then holds that place until t and its subtests end. It logs how long it
// waited.
func Heavy(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(heavyLock, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatalf("opening %s: %v", heavyLock, err)
	}
	began := time.Now()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatalf("locking %s: %v", heavyLock, err)
	}
	if waited := time.Since(began); waited > time.Second {
		t.Logf("waited %s for another package's cluster of several nodes to go", waited.Round(time.Second))
	}
	// Closing the file releases the lock, also when the process dies.
	t.Cleanup(func() { f.Close() })
}
