package sandbox

import (
	"slices"
	"strings"
	"testing"

	"github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// The grader's container gets a seccomp profile under which neither file
// handle syscall is allowed, whatever capabilities the container has: the
// engine expands the profile for the container's capabilities as
// seccomp.LoadProfile does here, with the capabilities that would allow them
// in the engine's default.
func TestGraderSeccompDeniesFileHandles(t *testing.T) {
	s, err := BuildGraderSpec(testSettings())
	if err != nil {
		t.Fatal(err)
	}
	var body string
	for _, o := range s.Host.SecurityOpt {
		if v, ok := strings.CutPrefix(o, "seccomp="); ok {
			body = v
		}
	}
	if body == "" {
		t.Fatalf("the grader has no seccomp profile of its own: SecurityOpt %v", s.Host.SecurityOpt)
	}
	if !slices.Contains(s.Host.SecurityOpt, "no-new-privileges") {
		t.Errorf("SecurityOpt %v lost no-new-privileges", s.Host.SecurityOpt)
	}
	denied := []string{"name_to_handle_at", "open_by_handle_at"}
	for _, caps := range [][]string{
		{"CAP_DAC_OVERRIDE"},
		{"CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_SYS_ADMIN"},
	} {
		rs := &specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps}}}
		got, err := seccomp.LoadProfile(body, rs)
		if err != nil {
			t.Fatalf("the engine would refuse the grader's profile: %v", err)
		}
		if got.DefaultAction != specs.ActErrno {
			t.Errorf("default action %s, want the engine's %s", got.DefaultAction, specs.ActErrno)
		}
		refused := map[string]bool{}
		for _, sc := range got.Syscalls {
			for _, n := range sc.Names {
				if !slices.Contains(denied, n) {
					continue
				}
				if sc.Action != specs.ActErrno || sc.ErrnoRet == nil || *sc.ErrnoRet != 1 || len(sc.Args) != 0 {
					t.Errorf("with %v the profile has %s %s (args %v)", caps, sc.Action, n, sc.Args)
				}
				refused[n] = true
			}
		}
		for _, n := range denied {
			if !refused[n] {
				t.Errorf("with %v the profile has no rule refusing %s", caps, n)
			}
		}
		// The rest of the engine's default is kept: an ordinary syscall is
		// allowed, one the default refuses is still refused.
		var openat, kexec bool
		for _, sc := range got.Syscalls {
			openat = openat || sc.Action == specs.ActAllow && slices.Contains(sc.Names, "openat")
			kexec = kexec || sc.Action == specs.ActAllow && slices.Contains(sc.Names, "kexec_load")
		}
		if !openat || kexec {
			t.Errorf("with %v: openat allowed %v, kexec_load allowed %v", caps, openat, kexec)
		}
	}
	// The default itself, with DAC_READ_SEARCH, allows open_by_handle_at:
	// the rule above is what takes it away.
	rs := &specs.Spec{Process: &specs.Process{Capabilities: &specs.LinuxCapabilities{Bounding: []string{"CAP_DAC_READ_SEARCH"}}}}
	g, err := seccomp.GetDefaultProfile(rs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(g.Syscalls, func(sc specs.LinuxSyscall) bool {
		return sc.Action == specs.ActAllow && slices.Contains(sc.Names, "open_by_handle_at")
	}) {
		t.Error("the engine's default no longer allows open_by_handle_at with DAC_READ_SEARCH; this test proves nothing")
	}
}
