package sandbox

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// seccompProfile is the engine's default seccomp profile (the one every
// container gets unless told otherwise) with the syscalls denied removed
// from every rule that allows them, whatever capabilities a rule asks
// for, and refused with EPERM by a rule of their own; as JSON, the form
// Docker's "seccomp=" security option takes.
func seccompProfile(denied []string) (string, error) {
	p := seccomp.DefaultProfile()
	kept := p.Syscalls[:0]
	for _, s := range p.Syscalls {
		s.Names = slices.DeleteFunc(slices.Clone(s.Names), func(n string) bool { return slices.Contains(denied, n) })
		if slices.Contains(denied, s.Name) {
			s.Name = ""
		}
		if len(s.Names) == 0 && s.Name == "" {
			continue
		}
		kept = append(kept, s)
	}
	eperm := uint(unix.EPERM)
	p.Syscalls = append(kept, &seccomp.Syscall{
		LinuxSyscall: specs.LinuxSyscall{Names: slices.Clone(denied), Action: specs.ActErrno, ErrnoRet: &eperm},
		Comment:      "labctl: never, whatever the container's capabilities",
	})
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encoding the grader's seccomp profile: %w", err)
	}
	return string(b), nil
}
