package class

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// EndProbe's `kill -KILL -1` ends every process of the probe container but
// its first: that first process, the container's command, must outlive
// it. Were it to end with its children, the container would end (and be
// restarted, in back-off after a few probes), taking EndProbe's own shell
// with it before it empties ProbeDir and /tmp. The command is run here as
// the container's first process and every other process it has is killed
// as the kernel kills them on `kill -KILL -1` in the container's PID
// namespace; it must keep waiting, and still end at once on SIGTERM.
func TestProbeContainerOutlivesEndProbe(t *testing.T) {
	for _, o := range []classObjects{testObjects(), nodeObjects()} {
		p := o.controlPlanePod()
		if sp := p.Spec.ShareProcessNamespace; sp != nil && *sp {
			t.Fatal("the control-plane Pod shares one PID namespace: the probe's kill -KILL -1 would reach etcd and the API server")
		}
		probe := container(p, containerProbe)
		if probe == nil {
			t.Fatal("no probe container")
		}
		cmd := exec.Command(probe.Command[0], probe.Command[1:]...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		pid := cmd.Process.Pid
		kids := waitChildren(t, pid)
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
		select {
		case err := <-done:
			t.Fatalf("the probe container's command %q ended (%v) once the rest of the container was killed, as EndProbe kills it: the container would restart and EndProbe's cleanup be cut short", probe.Command, err)
		case <-time.After(500 * time.Millisecond):
		}
		_ = syscall.Kill(pid, syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the probe container's command on SIGTERM: %v, want exit 0", err)
			}
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("the probe container's command %q did not end on SIGTERM", probe.Command)
		}
		for _, k := range childrenOf(pid) {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
	}
}

// waitChildren waits until pid has a child and returns its children.
func waitChildren(t *testing.T, pid int) []int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if kids := childrenOf(pid); len(kids) > 0 {
			return kids
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d started no child", pid)
	return nil
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}
