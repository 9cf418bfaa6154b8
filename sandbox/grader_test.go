package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
)

func TestBuildGraderSpecSharesNothingWritableWithTheLearner(t *testing.T) {
	s, err := BuildGraderSpec(testSettings())
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "labctl-gitops-grader" {
		t.Errorf("name = %q", s.Name)
	}
	c, h := s.Config, s.Host
	if c.Labels[LabelLab] != "gitops" || c.Labels[LabelRole] != RoleGrader || c.Labels[LabelSpecHash] != s.Hash {
		t.Errorf("labels = %v", c.Labels)
	}
	pol := GraderPolicy()
	if c.User != "0:0" || c.WorkingDir != pol.WorkDir || !slices.Equal(c.Env, pol.Env) {
		t.Errorf("user %q workdir %q env %v, want the policy's %+v", c.User, c.WorkingDir, c.Env, pol)
	}
	// Its own PID, IPC, UTS and user namespaces: nothing joins the sandbox's.
	if h.PidMode != "" || h.IpcMode != container.IPCModePrivate || h.UTSMode != "" || h.UsernsMode != "" || h.Privileged {
		t.Errorf("namespaces: pid %q ipc %q uts %q userns %q privileged %v", h.PidMode, h.IpcMode, h.UTSMode, h.UsernsMode, h.Privileged)
	}
	if h.ReadonlyRootfs != pol.ReadOnlyRoot {
		t.Error("the grader's root file system is writable")
	}
	if !slices.Equal(h.CapDrop, []string{"ALL"}) || !slices.Equal(h.CapAdd, pol.Capabilities) {
		t.Errorf("capabilities: drop %v add %v, want ALL and %v", h.CapDrop, h.CapAdd, pol.Capabilities)
	}
	if !slices.Contains(h.SecurityOpt, "no-new-privileges") {
		t.Errorf("SecurityOpt = %v", h.SecurityOpt)
	}
	if h.PidsLimit == nil || *h.PidsLimit != pol.Pids || h.Memory != pol.Memory || h.MemorySwap != pol.Memory {
		t.Errorf("limits: pids %v memory %d swap %d", h.PidsLimit, h.Memory, h.MemorySwap)
	}
	if string(h.NetworkMode) != "kind" {
		t.Errorf("network = %q", h.NetworkMode)
	}
	if len(h.Binds) != 0 || len(h.Devices) != 0 {
		t.Errorf("binds %v devices %v", h.Binds, h.Devices)
	}
	want := map[string]mount.Mount{
		"/root":             {Type: mount.TypeVolume, Source: "labctl-gitops-home"},
		"/opt/lab/fixtures": {Type: mount.TypeBind, Source: testSettings().FixturesDir},
		CheckerMount:        {Type: mount.TypeBind, Source: testSettings().CheckerDir},
	}
	if len(h.Mounts) != len(want) {
		t.Errorf("mounts = %+v", h.Mounts)
	}
	for _, m := range h.Mounts {
		w, ok := want[m.Target]
		if !ok || m.Type != w.Type || m.Source != w.Source || !m.ReadOnly {
			t.Errorf("mount %+v, want %+v read-only", m, w)
		}
		if strings.Contains(m.Source, "docker.sock") {
			t.Errorf("the Docker socket is mounted: %+v", m)
		}
	}
}

// The grader's policy reads the learner's files and can change none:
// DAC_OVERRIDE, and what runs a command check as a user of its own (never
// DAC_READ_SEARCH, with which a forged file
// handle opens any file of a file system it has a mount of), as root with a
// read-only root, no new privileges, bounded memory and processes, and an
// environment of PATH, HOME and LANG only.
func TestGraderPolicy(t *testing.T) {
	p := GraderPolicy()
	want := []string{"DAC_OVERRIDE", "KILL", "SETGID", "SETUID"}
	if !slices.Equal(p.Capabilities, want) || !slices.Equal(p.BaselineCapabilities, want) {
		t.Errorf("capabilities %v (baseline %v), want %v", p.Capabilities, p.BaselineCapabilities, want)
	}
	if slices.Contains(p.Capabilities, "DAC_READ_SEARCH") || slices.Contains(p.BaselineCapabilities, "DAC_READ_SEARCH") {
		t.Error("the grader keeps DAC_READ_SEARCH, which opens files by forged handles")
	}
	if !slices.Equal(p.DeniedSyscalls, []string{"name_to_handle_at", "open_by_handle_at"}) {
		t.Errorf("denied syscalls %v", p.DeniedSyscalls)
	}
	if p.UID != 0 || p.GID != 0 || p.User() != "0:0" || !p.ReadOnlyRoot || !p.NoNewPrivileges || p.WorkDir != "/" {
		t.Errorf("policy %+v", p)
	}
	if p.Memory != 512<<20 || p.Pids != 128 {
		t.Errorf("memory %d pids %d", p.Memory, p.Pids)
	}
	if !slices.Equal(p.Env, []string{CheckerPath, "HOME=/", "LANG=C.UTF-8"}) {
		t.Errorf("env %v", p.Env)
	}
	p.Capabilities[0] = "SYS_ADMIN"
	if GraderPolicy().Capabilities[0] != "DAC_OVERRIDE" {
		t.Error("a caller changed the policy of every grader")
	}
}

func TestBuildGraderSpecRejectsBadSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Settings
		want string
	}{
		{"no lab", Settings{Image: "i", CheckerDir: "/c"}, "lab name"},
		{"no checker directory", Settings{Lab: "x", Image: "i"}, "checker directory"},
		{"fixtures without mount", Settings{Lab: "x", Image: "i", CheckerDir: "/c", FixturesDir: "/d"}, "sandbox.fixtures"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := BuildGraderSpec(tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestAuditLogOnlyInTheGrader(t *testing.T) {
	s := testSettings()
	s.AuditDir = "/home/u/.local/state/labctl/gitops/audit"
	g, err := BuildGraderSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(g.Host.Mounts, func(m mount.Mount) bool { return m.Target == AuditMount })
	if i < 0 {
		t.Fatalf("the grader does not mount the audit log: %+v", g.Host.Mounts)
	}
	if m := g.Host.Mounts[i]; m.Type != mount.TypeBind || m.Source != s.AuditDir || !m.ReadOnly {
		t.Errorf("audit mount %+v, want %s read-only", m, s.AuditDir)
	}
	without, err := BuildGraderSpec(testSettings())
	if err != nil {
		t.Fatal(err)
	}
	if without.Hash == g.Hash {
		t.Error("the grader's spec hash ignores the audit mount, so an old grader would be kept")
	}
	if slices.ContainsFunc(without.Host.Mounts, func(m mount.Mount) bool { return m.Target == AuditMount }) {
		t.Error("a grader without an audit directory mounts one")
	}
	sb, err := BuildSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sb.Host.Mounts {
		if m.Source == s.AuditDir || strings.HasPrefix(m.Target, AuditMount) {
			t.Errorf("the sandbox mounts the audit log: %+v", m)
		}
	}
	if len(sb.Host.Binds) != 0 {
		t.Errorf("sandbox binds %v", sb.Host.Binds)
	}
}
