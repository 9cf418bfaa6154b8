package docker

import (
	"os"
	"strings"
	"testing"
)

// TestInContainer: a host PID is signalled only when its control groups
// name the container; a PID an engine elsewhere reported names some other
// process here.
func TestInContainer(t *testing.T) {
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	if inContainer(self, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef") {
		t.Error("this test's own process is taken for a container's")
	}
	if inContainer(self, "") {
		t.Error("an exec without a container ID is taken as in its container")
	}
	if inContainer(1<<30, "x") {
		t.Error("a PID that does not exist is taken as in a container")
	}
	// The last path element of the process's own cgroup stands in for a
	// container's ID (a cgroup of "/" names nothing).
	line := strings.TrimSpace(strings.SplitN(string(cg), "\n", 2)[0])
	path := line[strings.LastIndex(line, ":")+1:]
	if elem := path[strings.LastIndex(path, "/")+1:]; elem != "" && !inContainer(self, elem) {
		t.Errorf("the process is not found in its own cgroup %q", path)
	}
}
