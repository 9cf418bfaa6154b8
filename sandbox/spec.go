// Package sandbox defines the lab's two containers as pure data: the
// learner's sandbox and the grader beside it (image, mounts, capabilities,
// limits, names and labels). provision/docker makes them.
package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
)

// Labels every Docker object labctl creates carries, so state is found by
// listing labels rather than kept in a file.
const (
	LabelLab      = "dev.labctl.lab"
	LabelRole     = "dev.labctl.role"
	LabelSpecHash = "dev.labctl.spec-hash"

	RoleSandbox = "sandbox"
	RoleHome    = "home"
)

// CheckerMount is where the host's checker directory appears, read-only, in
// the grader container. The sandbox does not have it.
const CheckerMount = "/.labctl"

// NoNetwork is Docker's network of no network: the sandbox and the grader
// of a lab with no cluster have only their loopback.
const NoNetwork = "none"

// KindNetwork is the Docker network kind puts its nodes on; the sandbox joins
// it to reach the API server by the control-plane container's name.
const KindNetwork = "kind"

// Hardening limits of the sandbox.
const (
	PidsLimit   int64 = 512
	MemoryLimit int64 = 1 << 30
)

// Capabilities are the only ones the sandbox keeps: what a root shell needs
// to own, chmod and chown files, signal its own processes and switch users.
// Not SYS_ADMIN, SYS_PTRACE, NET_RAW, NET_ADMIN, SETPCAP, MKNOD or SYS_CHROOT.
var capabilities = []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID"}

// Capabilities returns the capabilities the sandbox keeps after dropping ALL.
func Capabilities() []string { return append([]string(nil), capabilities...) }

// ContainerName is the sandbox container's name for a lab.
func ContainerName(lab string) string { return "labctl-" + lab + "-sandbox" }

// VolumeName is the learner's home volume's name for a lab.
func VolumeName(lab string) string { return "labctl-" + lab + "-home" }

// Labels returns the labels of a lab's object in a role.
func Labels(lab, role string) map[string]string {
	return map[string]string{LabelLab: lab, LabelRole: role}
}

// Settings are the inputs of the sandbox container's configuration.
type Settings struct {
	// Lab is the lab's name (a DNS label).
	Lab string
	// Image is the sandbox image reference.
	Image string
	// FixturesDir is the host directory holding the lab's fixtures; empty
	// means the lab has none and nothing is mounted.
	FixturesDir string
	// FixturesMount is where the fixtures appear, read-only, in the sandbox.
	FixturesMount string
	// WorkDir is the learner's starting directory.
	WorkDir string
	// Network is the Docker network to join; empty means KindNetwork.
	Network string
	// CheckerDir is the host directory the grader container (not the
	// sandbox) mounts read-only at CheckerMount, where the host puts the
	// checker binary for each round. Without it the lab cannot be graded.
	CheckerDir string
	// AuditDir is the host directory of the API server's audit log, which
	// the grader container (not the sandbox) mounts read-only at
	// AuditMount for audit checks; empty mounts nothing.
	AuditDir string
}

// AuditMount is where the grader container sees the API server's audit
// log. The sandbox does not have it.
const AuditMount = "/var/log/labctl-audit"

// Spec is everything ContainerCreate needs for the sandbox.
type Spec struct {
	Name    string
	Config  *container.Config
	Host    *container.HostConfig
	Network *network.NetworkingConfig
	// Hash identifies the settings; a running container whose spec-hash
	// label differs is recreated.
	Hash string
}

// BuildSpec returns the hardened sandbox container's settings. It is pure:
// the same Settings always give the same Spec.
func BuildSpec(s Settings) (Spec, error) {
	if s.Lab == "" || s.Image == "" {
		return Spec{}, fmt.Errorf("sandbox settings need a lab name and an image (got lab %q, image %q)", s.Lab, s.Image)
	}
	if s.FixturesDir != "" && s.FixturesMount == "" {
		return Spec{}, fmt.Errorf("sandbox settings: fixtures directory %s has no mount path: set sandbox.fixtures in lab.yaml", s.FixturesDir)
	}
	netName := s.Network
	if netName == "" {
		netName = KindNetwork
	}
	workDir := s.WorkDir
	if workDir == "" {
		workDir = "/root"
	}
	labels := Labels(s.Lab, RoleSandbox)
	mounts := []mount.Mount{{
		Type:   mount.TypeVolume,
		Source: VolumeName(s.Lab),
		Target: "/root",
	}}
	if s.FixturesDir != "" {
		mounts = append(mounts, mount.Mount{
			Type:     mount.TypeBind,
			Source:   s.FixturesDir,
			Target:   s.FixturesMount,
			ReadOnly: true,
		})
	}
	pids := PidsLimit
	init := true
	cfg := &container.Config{
		Hostname:   s.Lab,
		Image:      s.Image,
		Entrypoint: []string{"sleep"},
		Cmd:        []string{"infinity"},
		Env:        []string{"LANG=C.UTF-8", "HOME=/root"},
		WorkingDir: workDir,
		Labels:     labels,
		StopSignal: "SIGKILL",
	}
	host := &container.HostConfig{
		NetworkMode:   container.NetworkMode(netName),
		Mounts:        mounts,
		Privileged:    false,
		CapDrop:       []string{"ALL"},
		CapAdd:        Capabilities(),
		SecurityOpt:   []string{"no-new-privileges"},
		Init:          &init,
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyDisabled},
		Resources: container.Resources{
			PidsLimit:  &pids,
			Memory:     MemoryLimit,
			MemorySwap: MemoryLimit,
		},
	}
	return finishSpec(ContainerName(s.Lab), cfg, host, netName)
}

// finishSpec joins the container to netName and stamps its configuration
// with the hash of all of it.
func finishSpec(name string, cfg *container.Config, host *container.HostConfig, netName string) (Spec, error) {
	netCfg := &network.NetworkingConfig{
		EndpointsConfig: map[string]*network.EndpointSettings{netName: {}},
	}
	hash, err := specHash(cfg, host, netCfg)
	if err != nil {
		return Spec{}, err
	}
	cfg.Labels[LabelSpecHash] = hash
	return Spec{Name: name, Config: cfg, Host: host, Network: netCfg, Hash: hash}, nil
}

func specHash(parts ...any) (string, error) {
	b, err := json.Marshal(parts)
	if err != nil {
		return "", fmt.Errorf("hashing sandbox settings: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:16], nil
}
