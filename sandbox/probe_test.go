package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
)

func TestBuildProbeSpecGetsNothingOfTheMachine(t *testing.T) {
	s, err := BuildProbeSpec(testSettings(), "0a1b2c")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "labctl-gitops-probe-0a1b2c" {
		t.Errorf("name = %q", s.Name)
	}
	c, h := s.Config, s.Host
	if c.Labels[LabelLab] != "gitops" || c.Labels[LabelRole] != RoleProbe || c.Labels[LabelSpecHash] != s.Hash {
		t.Errorf("labels = %v (down removes what carries the lab's label)", c.Labels)
	}
	if c.Image != testSettings().Image || c.WorkingDir != ProbeDir {
		t.Errorf("image %q workdir %q", c.Image, c.WorkingDir)
	}
	if h.Privileged || h.PidMode != "" || h.IpcMode != container.IPCModePrivate || h.UTSMode != "" || h.UsernsMode != "" || h.NetworkMode.IsHost() {
		t.Errorf("namespaces: privileged %v pid %q ipc %q uts %q userns %q net %q", h.Privileged, h.PidMode, h.IpcMode, h.UTSMode, h.UsernsMode, h.NetworkMode)
	}
	if string(h.NetworkMode) != KindNetwork {
		t.Errorf("network = %q, want the kind network, to reach the API server", h.NetworkMode)
	}
	if !slices.Equal(h.CapDrop, []string{"ALL"}) || len(h.CapAdd) != 0 {
		t.Errorf("capabilities: drop %v add %v, want none kept", h.CapDrop, h.CapAdd)
	}
	if !slices.Contains(h.SecurityOpt, "no-new-privileges") || !h.ReadonlyRootfs {
		t.Errorf("SecurityOpt %v, read-only root %v", h.SecurityOpt, h.ReadonlyRootfs)
	}
	if h.PidsLimit == nil || *h.PidsLimit != ProbePidsLimit || h.Memory != ProbeMemoryLimit || h.MemorySwap != ProbeMemoryLimit {
		t.Errorf("limits: pids %v memory %d swap %d", h.PidsLimit, h.Memory, h.MemorySwap)
	}
	if len(h.Binds) != 0 || len(h.Devices) != 0 || len(h.VolumesFrom) != 0 {
		t.Errorf("binds %v devices %v volumes-from %v", h.Binds, h.Devices, h.VolumesFrom)
	}
	// The probe volume, and nothing of the learner's: not the home, not
	// the fixtures, not the checker, not the audit log.
	want := []mount.Mount{{Type: mount.TypeVolume, Source: "labctl-gitops-probe", Target: ProbeDir}}
	if len(h.Mounts) != 1 || h.Mounts[0].Type != want[0].Type || h.Mounts[0].Source != want[0].Source || h.Mounts[0].Target != want[0].Target {
		t.Errorf("mounts = %+v, want %+v", h.Mounts, want)
	}
	for k, v := range h.Tmpfs {
		if k != "/tmp" || !strings.Contains(v, "noexec") || !strings.Contains(v, "size=") {
			t.Errorf("tmpfs %s: %s", k, v)
		}
	}
	for _, e := range c.Env {
		if strings.Contains(strings.ToUpper(e), "KUBECONFIG") || strings.Contains(strings.ToUpper(e), "TOKEN") {
			t.Errorf("the container's configuration carries credentials: %s", e)
		}
	}
}

func TestBuildProbeSpecRejectsBadSettings(t *testing.T) {
	if _, err := BuildProbeSpec(Settings{Image: "i"}, "x"); err == nil || !strings.Contains(err.Error(), "lab name") {
		t.Errorf("no lab: err = %v", err)
	}
	if _, err := BuildProbeSpec(Settings{Lab: "l", Image: "i"}, ""); err == nil || !strings.Contains(err.Error(), "id") {
		t.Errorf("no id: err = %v", err)
	}
}
