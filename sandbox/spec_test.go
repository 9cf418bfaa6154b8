package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/mount"
)

func testSettings() Settings {
	return Settings{
		Lab:           "gitops",
		Image:         "labctl/sandbox:abc",
		FixturesDir:   "/home/u/.cache/labctl/gitops/fixtures-1234",
		FixturesMount: "/opt/lab/fixtures",
		WorkDir:       "/root",
		CheckerDir:    "/home/u/.local/state/labctl/gitops/checker",
	}
}

func TestBuildSpecHardening(t *testing.T) {
	s, err := BuildSpec(testSettings())
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "labctl-gitops-sandbox" {
		t.Errorf("name = %q", s.Name)
	}
	c, h := s.Config, s.Host
	if c.Hostname != "gitops" || c.Image != "labctl/sandbox:abc" || c.WorkingDir != "/root" {
		t.Errorf("hostname/image/workdir = %q %q %q", c.Hostname, c.Image, c.WorkingDir)
	}
	if got := strings.Join(append(c.Entrypoint, c.Cmd...), " "); got != "sleep infinity" {
		t.Errorf("command = %q, want a long-running sleep", got)
	}
	for _, e := range []string{"LANG=C.UTF-8", "HOME=/root"} {
		if !slices.Contains(c.Env, e) {
			t.Errorf("env %v lacks %s", c.Env, e)
		}
	}
	if c.Labels[LabelLab] != "gitops" || c.Labels[LabelRole] != "sandbox" || c.Labels[LabelSpecHash] != s.Hash || s.Hash == "" {
		t.Errorf("labels = %v, hash %q", c.Labels, s.Hash)
	}
	if h.Privileged {
		t.Error("sandbox is privileged")
	}
	if !slices.Equal(h.CapDrop, []string{"ALL"}) {
		t.Errorf("CapDrop = %v, want ALL", h.CapDrop)
	}
	want := []string{"CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID"}
	if !slices.Equal(h.CapAdd, want) {
		t.Errorf("CapAdd = %v, want %v", h.CapAdd, want)
	}
	for _, bad := range []string{"SYS_ADMIN", "SYS_PTRACE", "NET_RAW", "NET_ADMIN", "SETPCAP", "MKNOD", "SYS_MODULE"} {
		if slices.Contains(h.CapAdd, bad) {
			t.Errorf("CapAdd keeps %s", bad)
		}
	}
	if !slices.Contains(h.SecurityOpt, "no-new-privileges") {
		t.Errorf("SecurityOpt = %v", h.SecurityOpt)
	}
	if h.PidsLimit == nil || *h.PidsLimit != 512 {
		t.Errorf("PidsLimit = %v", h.PidsLimit)
	}
	if h.Memory != 1<<30 || h.MemorySwap != 1<<30 {
		t.Errorf("Memory = %d swap %d", h.Memory, h.MemorySwap)
	}
	if h.Init == nil || !*h.Init {
		t.Error("Init is not set")
	}
	if string(h.NetworkMode) != "kind" || s.Network.EndpointsConfig["kind"] == nil || len(s.Network.EndpointsConfig) != 1 {
		t.Errorf("network = %q %v", h.NetworkMode, s.Network.EndpointsConfig)
	}
	if len(h.Binds) != 0 || len(h.Tmpfs) != 0 || len(h.Devices) != 0 || h.PidMode != "" || h.IpcMode != "" || h.UsernsMode != "" {
		t.Errorf("unexpected host access: binds %v tmpfs %v devices %v pid %q ipc %q userns %q",
			h.Binds, h.Tmpfs, h.Devices, h.PidMode, h.IpcMode, h.UsernsMode)
	}
	var home, fixtures *mount.Mount
	for i, m := range h.Mounts {
		if strings.Contains(m.Source, "docker.sock") || strings.Contains(m.Target, "docker.sock") {
			t.Errorf("the Docker socket is mounted: %+v", m)
		}
		switch m.Target {
		case "/root":
			home = &h.Mounts[i]
		case "/opt/lab/fixtures":
			fixtures = &h.Mounts[i]
		default:
			t.Errorf("unexpected mount %+v", m)
		}
	}
	if home == nil || home.Type != mount.TypeVolume || home.Source != "labctl-gitops-home" || home.ReadOnly {
		t.Errorf("home mount = %+v", home)
	}
	if fixtures == nil || fixtures.Type != mount.TypeBind || !fixtures.ReadOnly || fixtures.Source != testSettings().FixturesDir {
		t.Errorf("fixtures mount = %+v", fixtures)
	}
}

func TestBuildSpecHashFollowsSettings(t *testing.T) {
	a, _ := BuildSpec(testSettings())
	b, _ := BuildSpec(testSettings())
	if a.Hash != b.Hash {
		t.Fatalf("same settings, different hashes %s %s", a.Hash, b.Hash)
	}
	changed := testSettings()
	changed.Image = "labctl/sandbox:def"
	c, _ := BuildSpec(changed)
	if c.Hash == a.Hash {
		t.Fatal("a new image keeps the hash: the container would not be recreated")
	}
	changed = testSettings()
	changed.FixturesDir = "/elsewhere"
	d, _ := BuildSpec(changed)
	if d.Hash == a.Hash {
		t.Fatal("a new fixtures directory keeps the hash")
	}
}

func TestBuildSpecWithoutFixturesAndDefaults(t *testing.T) {
	s, err := BuildSpec(Settings{Lab: "x", Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Host.Mounts) != 1 || s.Host.Mounts[0].Target != "/root" {
		t.Errorf("mounts = %+v, want only the home volume", s.Host.Mounts)
	}
	if s.Config.WorkingDir != "/root" {
		t.Errorf("workdir default = %q", s.Config.WorkingDir)
	}
}

func TestBuildSpecRejectsBadSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Settings
		want string
	}{
		{"no lab", Settings{Image: "i"}, "lab name"},
		{"no image", Settings{Lab: "x"}, "image"},
		{"fixtures without mount", Settings{Lab: "x", Image: "i", FixturesDir: "/d"}, "sandbox.fixtures"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := BuildSpec(tc.s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestLabelsAndNames(t *testing.T) {
	l := Labels("gitops", RoleHome)
	if len(l) != 2 || l["dev.labctl.lab"] != "gitops" || l["dev.labctl.role"] != "home" {
		t.Fatalf("labels = %v", l)
	}
	if VolumeName("gitops") != "labctl-gitops-home" {
		t.Fatalf("volume name = %q", VolumeName("gitops"))
	}
}
