package sandbox

import (
	"fmt"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
)

// RoleProbe labels a probe's container and the volume it keeps its notes
// in.
const RoleProbe = "probe"

// ProbeDir is the directory a probe's setup and restore scripts run in, in
// the probe's container: the probe's volume, where setup may leave notes
// for restore.
const ProbeDir = "/run/labctl-probe"

// ProbeVolumeName is the volume that holds a lab's ProbeDir between a
// probe's setup and its restore.
func ProbeVolumeName(lab string) string { return "labctl-" + lab + "-probe" }

// ProbeName is the name of a probe container of a lab; id tells apart the
// containers of probes run at once.
func ProbeName(lab, id string) string { return "labctl-" + lab + "-probe-" + id }

// Limits of a probe's container: enough for bash, jq and a few kubectl
// processes at once.
const (
	ProbePidsLimit   int64 = 128
	ProbeMemoryLimit int64 = 512 << 20
)

// BuildProbeSpec returns the settings of the container a probe's setup or
// restore script runs in; id names it (ProbeName). A probe's scripts are
// the lab author's, so the container gets nothing of the machine's: the
// lab's sandbox image, no capability at all, no-new-privileges, a
// read-only root file system, a small /tmp, bounded pids and memory, its
// own namespaces, and of the host's storage only the lab's probe volume at
// ProbeDir. It shares nothing with the sandbox (not the learner's home)
// and joins the kind network to reach the API server, where its identity
// is the probe's, not the cluster's admin. Its process is root of the
// container without capabilities, which owns the probe volume's files and
// nothing else it can write. It is pure, like BuildSpec.
func BuildProbeSpec(s Settings, id string) (Spec, error) {
	if s.Lab == "" || s.Image == "" {
		return Spec{}, fmt.Errorf("probe settings need a lab name and an image (got lab %q, image %q)", s.Lab, s.Image)
	}
	if id == "" {
		return Spec{}, fmt.Errorf("probe settings need an id for the container's name")
	}
	netName := s.Network
	if netName == "" {
		netName = KindNetwork
	}
	pids := ProbePidsLimit
	init := true
	cfg := &container.Config{
		Hostname:   s.Lab + "-probe",
		Image:      s.Image,
		Entrypoint: []string{"sleep"},
		Cmd:        []string{"infinity"},
		Env:        []string{"LANG=C.UTF-8", "HOME=/tmp", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
		WorkingDir: ProbeDir,
		User:       "0:0",
		Labels:     Labels(s.Lab, RoleProbe),
		StopSignal: "SIGKILL",
	}
	host := &container.HostConfig{
		NetworkMode: container.NetworkMode(netName),
		Mounts: []mount.Mount{{
			Type:   mount.TypeVolume,
			Source: ProbeVolumeName(s.Lab),
			Target: ProbeDir,
		}},
		ReadonlyRootfs: true,
		Tmpfs:          map[string]string{"/tmp": "rw,noexec,nosuid,nodev,size=64m,mode=0700"},
		IpcMode:        container.IPCModePrivate,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		Init:           &init,
		RestartPolicy:  container.RestartPolicy{Name: container.RestartPolicyDisabled},
		Resources: container.Resources{
			PidsLimit:  &pids,
			Memory:     ProbeMemoryLimit,
			MemorySwap: ProbeMemoryLimit,
		},
	}
	return finishSpec(ProbeName(s.Lab, id), cfg, host, netName)
}
