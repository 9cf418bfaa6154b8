// Package preflight probes the machine for what a lab needs: a Docker
// engine that answers and can run privileged kind nodes, the cgroup
// version, inotify limits and free disk. Probes return data (one Finding
// each, with the fix when something is wrong); they never change the
// machine. `labctl doctor` prints them and `labctl up` runs them first.
package preflight

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Finding is the result of one probe.
type Finding struct {
	Name    string
	OK      bool
	Message string
	// Fix says what to do when OK is false (empty when OK).
	Fix string
}

// Thresholds the probes hold the machine to.
const (
	MinInotifyWatches   = 524288
	MinInotifyInstances = 512
	MinFreeDiskBytes    = 10 << 30
)

// capSysResource is the capability whose absence from the bounding set
// makes runc fail every --privileged container.
const capSysResource = 24

// host is what the probes read; tests replace it.
type host struct {
	readFile  func(name string) ([]byte, error)
	exists    func(name string) bool
	freeBytes func(path string) (uint64, error)
	docker    func(ctx context.Context, args ...string) (string, error)
}

// Run runs every probe against this machine and its Docker engine.
func Run(ctx context.Context) []Finding {
	return run(ctx, realHost())
}

func realHost() host {
	return host{
		readFile: os.ReadFile,
		exists: func(name string) bool {
			_, err := os.Stat(name)
			return err == nil
		},
		freeBytes: func(path string) (uint64, error) {
			var st syscall.Statfs_t
			if err := syscall.Statfs(path, &st); err != nil {
				return 0, err
			}
			return uint64(st.Bavail) * uint64(st.Bsize), nil
		},
		docker: func(ctx context.Context, args ...string) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
			if err != nil {
				return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
			}
			return strings.TrimSpace(string(out)), nil
		},
	}
}

// dockerInfo is what the probes need from `docker info`.
type dockerInfo struct {
	serverVersion  string
	defaultRuntime string
	rootDir        string
}

func run(ctx context.Context, h host) []Finding {
	info, dockerErr := probeDocker(ctx, h)
	findings := []Finding{dockerFinding(info, dockerErr)}
	findings = append(findings, capabilityFinding(h, info, dockerErr == nil))
	findings = append(findings, cgroupFinding(h))
	findings = append(findings, inotifyFinding(h))
	findings = append(findings, diskFinding(h, info, dockerErr == nil))
	return findings
}

func probeDocker(ctx context.Context, h host) (dockerInfo, error) {
	out, err := h.docker(ctx, "info", "--format", "{{.ServerVersion}}\t{{.DefaultRuntime}}\t{{.DockerRootDir}}")
	if err != nil {
		return dockerInfo{}, err
	}
	f := strings.Split(out, "\t")
	if len(f) != 3 || f[0] == "" {
		return dockerInfo{}, fmt.Errorf("unexpected answer from docker info: %q", out)
	}
	return dockerInfo{serverVersion: f[0], defaultRuntime: f[1], rootDir: f[2]}, nil
}

func dockerFinding(info dockerInfo, err error) Finding {
	if err != nil {
		return Finding{Name: "docker", Message: fmt.Sprintf("the Docker engine does not answer: %v", err),
			Fix: "install and start Docker (Debian: run hack/docker-engine.sh as root), and make sure your user may use it (the docker group)"}
	}
	return Finding{Name: "docker", OK: true, Message: fmt.Sprintf("Docker engine %s answers (default runtime %s)", info.serverVersion, info.defaultRuntime)}
}

// capabilityFinding checks that privileged containers can get every
// capability: either the bounding set holds CAP_SYS_RESOURCE, or Docker's
// default runtime is one that filters capabilities.
func capabilityFinding(h host, info dockerInfo, dockerOK bool) Finding {
	const name = "capabilities"
	status, err := h.readFile("/proc/self/status")
	if err != nil {
		return Finding{Name: name, OK: true, Message: "capability bounding set not readable here (not Linux?): assuming privileged containers work"}
	}
	mask, err := capBnd(string(status))
	if err != nil {
		return Finding{Name: name, Message: err.Error(), Fix: "check /proc/self/status"}
	}
	if mask&(1<<capSysResource) != 0 {
		return Finding{Name: name, OK: true, Message: "capability bounding set includes CAP_SYS_RESOURCE: privileged containers work"}
	}
	if dockerOK && info.defaultRuntime != "" && info.defaultRuntime != "runc" && info.defaultRuntime != "io.containerd.runc.v2" {
		return Finding{Name: name, OK: true, Message: fmt.Sprintf("capability bounding set lacks CAP_SYS_RESOURCE; Docker's default runtime %s filters capabilities", info.defaultRuntime)}
	}
	return Finding{Name: name,
		Message: "capability bounding set lacks CAP_SYS_RESOURCE: privileged containers (kind nodes) will fail with \"unable to apply caps\"",
		Fix:     "run hack/docker-engine.sh or register a capability-filtering runtime as Docker's default runtime"}
}

// capBnd parses the CapBnd line of /proc/self/status.
func capBnd(status string) (uint64, error) {
	for _, line := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("parsing the capability bounding set %q: %w", strings.TrimSpace(v), err)
			}
			return mask, nil
		}
	}
	return 0, fmt.Errorf("no CapBnd line in /proc/self/status")
}

func cgroupFinding(h host) Finding {
	if h.exists("/sys/fs/cgroup/cgroup.controllers") {
		return Finding{Name: "cgroup", OK: true, Message: "cgroup v2"}
	}
	if h.exists("/sys/fs/cgroup") {
		return Finding{Name: "cgroup", OK: true, Message: "cgroup v1: supported (the kubelet is configured with failCgroupV1: false); cgroup v2 is preferred"}
	}
	return Finding{Name: "cgroup", OK: true, Message: "no /sys/fs/cgroup here (not Linux?): the Docker engine's VM provides cgroups"}
}

func inotifyFinding(h host) Finding {
	const name = "inotify"
	watches, errW := readInt(h, "/proc/sys/fs/inotify/max_user_watches")
	instances, errI := readInt(h, "/proc/sys/fs/inotify/max_user_instances")
	if errW != nil || errI != nil {
		return Finding{Name: name, OK: true, Message: "inotify limits not readable here (not Linux?)"}
	}
	msg := fmt.Sprintf("fs.inotify.max_user_watches=%d, max_user_instances=%d", watches, instances)
	if watches >= MinInotifyWatches && instances >= MinInotifyInstances {
		return Finding{Name: name, OK: true, Message: msg}
	}
	return Finding{Name: name,
		Message: msg + fmt.Sprintf(" (below %d and %d: kubelet and pods may fail with \"too many open files\")", MinInotifyWatches, MinInotifyInstances),
		Fix:     fmt.Sprintf("sudo sysctl -w fs.inotify.max_user_watches=%d fs.inotify.max_user_instances=%d (persist in /etc/sysctl.d/)", max(watches, MinInotifyWatches), max(instances, MinInotifyInstances))}
}

func readInt(h host, name string) (int, error) {
	data, err := h.readFile(name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

func diskFinding(h host, info dockerInfo, dockerOK bool) Finding {
	const name = "disk"
	path := "/var/lib/docker"
	if dockerOK && info.rootDir != "" {
		path = info.rootDir
	}
	free, err := h.freeBytes(path)
	if err != nil {
		return Finding{Name: name, OK: true, Message: fmt.Sprintf("free space under %s not measurable from here (%v)", path, err)}
	}
	msg := fmt.Sprintf("%.1f GiB free under %s", float64(free)/(1<<30), path)
	if free >= MinFreeDiskBytes {
		return Finding{Name: name, OK: true, Message: msg}
	}
	return Finding{Name: name, Message: msg + fmt.Sprintf(" (a lab needs %d GiB)", MinFreeDiskBytes>>30),
		Fix: "free disk space there (for example `docker system prune`)"}
}
