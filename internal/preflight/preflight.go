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

	"github.com/labctl/labctl/internal/msg"
)

// Finding is the result of one probe.
type Finding struct {
	Name string
	OK   bool
	// Message is the finding in English, for logs; Said is the same in
	// words to be put in the reader's language (see Words).
	Message string
	Said    msg.Text
	// Fix says what to do when OK is false (empty when OK); FixSaid is the
	// same in words to be put in the reader's language.
	Fix     string
	FixSaid msg.Text
}

// found makes a Finding from its texts; a fix with no key means none.
func found(name string, ok bool, said, fix msg.Text) Finding {
	f := Finding{Name: name, OK: ok, Message: said.String(), Said: said, FixSaid: fix}
	if fix.Key != "" {
		f.Fix = fix.String()
	}
	return f
}

// Words are the finding's message and fix in c's language (nil is English).
func (f Finding) Words(c *msg.Catalog) (message, fix string) {
	if c == nil {
		return f.Message, f.Fix
	}
	message = c.Render(f.Said)
	if f.FixSaid.Key != "" {
		fix = c.Render(f.FixSaid)
	}
	return message, fix
}

// noFix is the fix of a finding that needs none.
var noFix msg.Text

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
		return found("docker", false, msg.T(msg.PreflightDockerDown, msg.Detail(err.Error())),
			msg.T(msg.PreflightDockerFix, "hack/docker-engine.sh"))
	}
	return found("docker", true, msg.T(msg.PreflightDockerUp, info.serverVersion, info.defaultRuntime), noFix)
}

// capabilityFinding checks that privileged containers can get every
// capability: either the bounding set holds CAP_SYS_RESOURCE, or Docker's
// default runtime is one that filters capabilities.
func capabilityFinding(h host, info dockerInfo, dockerOK bool) Finding {
	const name = "capabilities"
	status, err := h.readFile("/proc/self/status")
	if err != nil {
		return found(name, true, msg.T(msg.PreflightCapsUnreadable), noFix)
	}
	mask, err := capBnd(string(status))
	if err != nil {
		return found(name, false, msg.T(msg.PreflightCapsBroken, msg.Detail(err.Error())), msg.T(msg.PreflightCapsBrokenFix, "/proc/self/status"))
	}
	if mask&(1<<capSysResource) != 0 {
		return found(name, true, msg.T(msg.PreflightCapsOK, "CAP_SYS_RESOURCE"), noFix)
	}
	if dockerOK && info.defaultRuntime != "" && info.defaultRuntime != "runc" && info.defaultRuntime != "io.containerd.runc.v2" {
		return found(name, true, msg.T(msg.PreflightCapsFiltered, "CAP_SYS_RESOURCE", info.defaultRuntime), noFix)
	}
	return found(name, false, msg.T(msg.PreflightCapsMissing, "CAP_SYS_RESOURCE", "unable to apply caps"),
		msg.T(msg.PreflightCapsFix, "hack/docker-engine.sh"))
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
		return found("cgroup", true, msg.T(msg.PreflightCgroup, "v2"), noFix)
	}
	if h.exists("/sys/fs/cgroup") {
		return found("cgroup", true, msg.T(msg.PreflightCgroupV1, "v1", "failCgroupV1: false", "v2"), noFix)
	}
	return found("cgroup", true, msg.T(msg.PreflightNoCgroup, "/sys/fs/cgroup"), noFix)
}

func inotifyFinding(h host) Finding {
	const name = "inotify"
	watches, errW := readInt(h, "/proc/sys/fs/inotify/max_user_watches")
	instances, errI := readInt(h, "/proc/sys/fs/inotify/max_user_instances")
	if errW != nil || errI != nil {
		return found(name, true, msg.T(msg.PreflightInotifyUnreadable), noFix)
	}
	limits := msg.T(msg.PreflightInotify, "fs.inotify.max_user_watches", watches, "max_user_instances", instances)
	if watches >= MinInotifyWatches && instances >= MinInotifyInstances {
		return found(name, true, limits, noFix)
	}
	sysctl := fmt.Sprintf("sudo sysctl -w fs.inotify.max_user_watches=%d fs.inotify.max_user_instances=%d",
		max(watches, MinInotifyWatches), max(instances, MinInotifyInstances))
	return found(name, false, msg.T(msg.PreflightInotifyLow, limits, MinInotifyWatches, MinInotifyInstances, "too many open files"),
		msg.T(msg.PreflightInotifyFix, sysctl, "/etc/sysctl.d/"))
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
		return found(name, true, msg.T(msg.PreflightDiskUnmeasurable, path, msg.Detail(err.Error())), noFix)
	}
	space := msg.T(msg.PreflightDisk, float64(free)/(1<<30), path)
	if free >= MinFreeDiskBytes {
		return found(name, true, space, noFix)
	}
	return found(name, false, msg.T(msg.PreflightDiskLow, space, MinFreeDiskBytes>>30),
		msg.T(msg.PreflightDiskFix, "`docker system prune`"))
}
