package sandbox

import (
	"fmt"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
)

// RoleGrader labels the grader container: the checks run there, apart from
// every process the learner can start.
const RoleGrader = "grader"

// GraderName is the grader container's name for a lab.
func GraderName(lab string) string { return "labctl-" + lab + "-grader" }

// Limits of the grader container: enough for the checker (one process, a
// few threads, files read with bounds), small enough that nothing it is
// made to read can starve the machine.
const (
	GraderPidsLimit   int64 = 128
	GraderMemoryLimit int64 = 512 << 20
)

// graderCapabilities are the only ones the grader keeps: reading every file
// of the learner's home whatever its owner and mode (a learner who chmods
// their work to 000 gets a fail that says so, not a check that cannot run).
var graderCapabilities = []string{"DAC_READ_SEARCH"}

// BuildGraderSpec returns the grader container's settings. The grader runs
// the checker for every round: it sees the learner's home volume and the
// fixtures read-only at the paths the sandbox has them, joins the same
// network to reach the API server, and shares no namespace with the sandbox
// (its own PID, IPC, mount and UTS namespaces), so no process of the
// learner's can see, signal, trace or open the checker or its pipes. Its
// root file system is read-only; the host puts the checker binary on the
// read-only CheckerMount. With AuditDir it reads the API server's audit log
// at AuditMount, read-only. It is pure, like BuildSpec.
func BuildGraderSpec(s Settings) (Spec, error) {
	if s.Lab == "" || s.Image == "" {
		return Spec{}, fmt.Errorf("grader settings need a lab name and an image (got lab %q, image %q)", s.Lab, s.Image)
	}
	if s.CheckerDir == "" {
		return Spec{}, fmt.Errorf("grader settings need the host's checker directory")
	}
	netName := s.Network
	if netName == "" {
		netName = KindNetwork
	}
	mounts := []mount.Mount{{
		Type:          mount.TypeVolume,
		Source:        VolumeName(s.Lab),
		Target:        "/root",
		ReadOnly:      true,
		VolumeOptions: &mount.VolumeOptions{NoCopy: true},
	}, {
		Type:     mount.TypeBind,
		Source:   s.CheckerDir,
		Target:   CheckerMount,
		ReadOnly: true,
	}}
	if s.FixturesDir != "" {
		if s.FixturesMount == "" {
			return Spec{}, fmt.Errorf("grader settings: fixtures directory %s has no mount path: set sandbox.fixtures in lab.yaml", s.FixturesDir)
		}
		mounts = append(mounts, mount.Mount{
			Type:     mount.TypeBind,
			Source:   s.FixturesDir,
			Target:   s.FixturesMount,
			ReadOnly: true,
		})
	}
	if s.AuditDir != "" {
		mounts = append(mounts, mount.Mount{
			Type:     mount.TypeBind,
			Source:   s.AuditDir,
			Target:   AuditMount,
			ReadOnly: true,
		})
	}
	pids := GraderPidsLimit
	init := true
	cfg := &container.Config{
		Hostname:   s.Lab + "-grader",
		Image:      s.Image,
		Entrypoint: []string{"sleep"},
		Cmd:        []string{"infinity"},
		Env:        []string{CheckerPath, "HOME=/", "LANG=C.UTF-8"},
		WorkingDir: "/",
		User:       "0:0",
		Labels:     Labels(s.Lab, RoleGrader),
		StopSignal: "SIGKILL",
	}
	host := &container.HostConfig{
		NetworkMode:    container.NetworkMode(netName),
		Mounts:         mounts,
		ReadonlyRootfs: true,
		Tmpfs:          map[string]string{"/tmp": "rw,noexec,nosuid,nodev,size=16m"},
		IpcMode:        container.IPCModePrivate,
		CapDrop:        []string{"ALL"},
		CapAdd:         append([]string(nil), graderCapabilities...),
		SecurityOpt:    []string{"no-new-privileges"},
		Init:           &init,
		RestartPolicy:  container.RestartPolicy{Name: container.RestartPolicyDisabled},
		Resources: container.Resources{
			PidsLimit:  &pids,
			Memory:     GraderMemoryLimit,
			MemorySwap: GraderMemoryLimit,
		},
	}
	return finishSpec(GraderName(s.Lab), cfg, host, netName)
}

// CheckerPath is the PATH of the checker's process: nothing else of the
// container's environment reaches it.
const CheckerPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
