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

// Policy is what a container may do, as a table each runtime renders:
// Docker's container spec (BuildGraderSpec) and a Kubernetes container's
// security context and limits (provision's class objects).
type Policy struct {
	// UID and GID the processes run as.
	UID, GID int64
	// Capabilities are the only ones kept; every other is dropped.
	Capabilities []string
	// BaselineCapabilities replace Capabilities where Pod Security's
	// baseline level is enforced (a class's namespaces), which admits
	// only its own short list: the least of that list that does the same.
	BaselineCapabilities []string
	// ReadOnlyRoot makes the root file system read-only.
	ReadOnlyRoot bool
	// NoNewPrivileges stops a process from gaining privileges (setuid
	// files, file capabilities).
	NoNewPrivileges bool
	// DeniedSyscalls are refused (EPERM) whatever the capabilities, by a
	// seccomp profile derived from the engine's default. Docker only: a
	// Kubernetes container keeps the runtime's default profile
	// (RuntimeDefault), which allows these only with capabilities the
	// policy does not keep.
	DeniedSyscalls []string
	// Memory is the memory limit in bytes, swap included.
	Memory int64
	// Pids bounds the processes and threads. Kubernetes has no limit per
	// container: there the kubelet's limit per Pod holds.
	Pids int64
	// Env is the whole environment, PATH first; WorkDir the working
	// directory.
	Env     []string
	WorkDir string
}

// GraderPolicy is the grader's policy, the one both runtimes render. The
// grader reads every file of the learner's home, whatever its owner and
// mode (a learner who chmods their work to 000 gets a fail that says so,
// not a check that cannot run), and writes none: DAC_OVERRIDE lets root
// read and search every file and directory, and everything it mounts is
// read-only and its root file system too, which leaves it nothing to write.
// SETUID, SETGID and KILL let the checker run each command check as a user
// of its own (with DAC_OVERRIDE alone) and kill what it leaves (see checks'
// commandUser). All four are in Pod Security baseline's list, so both
// runtimes keep the same.
//
// It never keeps DAC_READ_SEARCH: with it, open_by_handle_at opens any file
// of a file system the container has a mount of (its bind mounts are the
// user's own directories) by a forged handle, outside every mount. The two
// file handle syscalls are denied outright besides (DeniedSyscalls).
func GraderPolicy() Policy {
	return Policy{
		UID:                  0,
		GID:                  0,
		Capabilities:         []string{"DAC_OVERRIDE", "KILL", "SETGID", "SETUID"},
		BaselineCapabilities: []string{"DAC_OVERRIDE", "KILL", "SETGID", "SETUID"},
		ReadOnlyRoot:         true,
		NoNewPrivileges:      true,
		DeniedSyscalls:       []string{"name_to_handle_at", "open_by_handle_at"},
		Memory:               GraderMemoryLimit,
		Pids:                 GraderPidsLimit,
		Env:                  []string{CheckerPath, "HOME=/", "LANG=C.UTF-8"},
		WorkDir:              "/",
	}
}

// User is the policy's user as Docker's User setting: "UID:GID".
func (p Policy) User() string { return fmt.Sprintf("%d:%d", p.UID, p.GID) }

// SecurityOpt are the policy's Docker security options: no new
// privileges, and a seccomp profile denying DeniedSyscalls.
func (p Policy) SecurityOpt() ([]string, error) {
	var opts []string
	if p.NoNewPrivileges {
		opts = append(opts, "no-new-privileges")
	}
	if len(p.DeniedSyscalls) > 0 {
		profile, err := seccompProfile(p.DeniedSyscalls)
		if err != nil {
			return nil, err
		}
		if profile != "" {
			opts = append(opts, "seccomp="+profile)
		}
	}
	return opts, nil
}

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
	p := GraderPolicy()
	secOpt, err := p.SecurityOpt()
	if err != nil {
		return Spec{}, err
	}
	pids := p.Pids
	init := true
	cfg := &container.Config{
		Hostname:   s.Lab + "-grader",
		Image:      s.Image,
		Entrypoint: []string{"sleep"},
		Cmd:        []string{"infinity"},
		Env:        p.Env,
		WorkingDir: p.WorkDir,
		User:       p.User(),
		Labels:     Labels(s.Lab, RoleGrader),
		StopSignal: "SIGKILL",
	}
	host := &container.HostConfig{
		NetworkMode:    container.NetworkMode(netName),
		Mounts:         mounts,
		ReadonlyRootfs: p.ReadOnlyRoot,
		Tmpfs:          map[string]string{"/tmp": "rw,noexec,nosuid,nodev,size=16m"},
		IpcMode:        container.IPCModePrivate,
		CapDrop:        []string{"ALL"},
		CapAdd:         p.Capabilities,
		SecurityOpt:    secOpt,
		Init:           &init,
		RestartPolicy:  container.RestartPolicy{Name: container.RestartPolicyDisabled},
		Resources: container.Resources{
			PidsLimit:  &pids,
			Memory:     p.Memory,
			MemorySwap: p.Memory,
		},
	}
	return finishSpec(GraderName(s.Lab), cfg, host, netName)
}

// CheckerPath is the PATH of the checker's process: nothing else of the
// container's environment reaches it.
const CheckerPath = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
