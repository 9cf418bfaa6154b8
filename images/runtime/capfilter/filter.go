package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// capBit returns the bit of a capability, as OCI specs spell it, in a
// capability mask (linux/capability.h), and whether the name is known.
func capBit(name string) (uint, bool) {
	names := [...]string{
		"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER", "CAP_FSETID",
		"CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE",
		"CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST", "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK",
		"CAP_IPC_OWNER", "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
		"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE", "CAP_SYS_RESOURCE",
		"CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD", "CAP_LEASE", "CAP_AUDIT_WRITE",
		"CAP_AUDIT_CONTROL", "CAP_SETFCAP", "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG",
		"CAP_WAKE_ALARM", "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
		"CAP_CHECKPOINT_RESTORE",
	}
	for bit, n := range names {
		if n == name {
			return uint(bit), true
		}
	}
	return 0, false
}

// parseCapBnd returns the CapBnd mask from the text of /proc/self/status.
func parseCapBnd(status string) (uint64, error) {
	for _, line := range strings.Split(status, "\n") {
		value, ok := strings.CutPrefix(line, "CapBnd:")
		if !ok {
			continue
		}
		mask, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing CapBnd %q: %w", strings.TrimSpace(value), err)
		}
		return mask, nil
	}
	return 0, errors.New("no CapBnd line in /proc/self/status")
}

// target names the JSON file runc will read capabilities from, and whether
// the capabilities sit under "process" (a bundle's config.json) or at the top
// level (an exec --process file).
type target struct {
	path      string
	isProcess bool
}

// takesValue reports whether a runc global flag takes a separate value.
func takesValue(flag string) bool {
	switch flag {
	case "--root", "--log", "--log-format", "--criu", "--rootless":
		return true
	}
	return false
}

// specTarget finds the spec file of a runc command line (without argv[0]):
// the bundle's config.json for create and run (the bundle defaults to the
// working directory), the --process file for exec, nothing otherwise.
func specTarget(args []string) target {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if takesValue(args[i]) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return target{}
	}
	command, rest := args[i], args[i+1:]
	switch command {
	case "create", "run":
		bundle := flagValue(rest, "--bundle", "-b")
		if bundle == "" {
			bundle = "."
		}
		return target{path: filepath.Join(bundle, "config.json"), isProcess: false}
	case "exec":
		if p := flagValue(rest, "--process", "-p"); p != "" {
			return target{path: p, isProcess: true}
		}
	}
	return target{}
}

// flagValue returns the value of a flag given as "--name v", "--name=v",
// "-n v" or "-n=v", or "".
func flagValue(args []string, long, short string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, name := range []string{long, short} {
			if a == name && i+1 < len(args) {
				return args[i+1]
			}
			if v, ok := strings.CutPrefix(a, name+"="); ok {
				return v
			}
		}
	}
	return ""
}

// filterFile rewrites the spec at t.path without the capabilities bounding
// does not hold. A file with nothing to remove is left untouched.
func filterFile(t target, bounding uint64) error {
	data, err := os.ReadFile(t.path)
	if err != nil {
		return fmt.Errorf("reading spec: %w", err)
	}
	out, changed, err := filterSpec(data, t.isProcess, bounding)
	if err != nil {
		return fmt.Errorf("filtering %s: %w", t.path, err)
	}
	if !changed {
		return nil
	}
	info, err := os.Stat(t.path)
	if err != nil {
		return fmt.Errorf("reading spec: %w", err)
	}
	tmp := t.path + ".capfilter"
	if err := os.WriteFile(tmp, out, info.Mode().Perm()); err != nil {
		return fmt.Errorf("writing filtered spec: %w", err)
	}
	if err := os.Rename(tmp, t.path); err != nil {
		return fmt.Errorf("replacing spec: %w", err)
	}
	return nil
}

// filterSpec removes from every capability set in spec the capabilities
// whose bit is clear in bounding. Unknown capability names are kept. It
// reports whether anything was removed; every other field is preserved.
func filterSpec(spec []byte, isProcess bool, bounding uint64) ([]byte, bool, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(spec))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, false, fmt.Errorf("decoding spec: %w", err)
	}
	process := doc
	if !isProcess {
		p, ok := doc["process"].(map[string]any)
		if !ok {
			return spec, false, nil
		}
		process = p
	}
	caps, ok := process["capabilities"].(map[string]any)
	if !ok {
		return spec, false, nil
	}
	changed := false
	for set, v := range caps {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		kept := make([]any, 0, len(list))
		for _, item := range list {
			name, _ := item.(string)
			if bit, known := capBit(name); known && bounding&(1<<bit) == 0 {
				changed = true
				continue
			}
			kept = append(kept, item)
		}
		caps[set] = kept
	}
	if !changed {
		return spec, false, nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, false, fmt.Errorf("encoding spec: %w", err)
	}
	return out, true, nil
}

// findRunc returns the runc to execute: override when set, else the first
// runc on path that is not this program itself.
func findRunc(override, path, self string) (string, error) {
	if override != "" {
		return override, nil
	}
	var selves []os.FileInfo
	if info, err := os.Stat(self); err == nil {
		selves = append(selves, info)
	}
	if exe, err := os.Executable(); err == nil {
		if info, err := os.Stat(exe); err == nil {
			selves = append(selves, info)
		}
	}
	dirs := append(filepath.SplitList(path), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		candidate := filepath.Join(dir, "runc")
		info, err := os.Stat(candidate)
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
			continue
		}
		if isAny(info, selves) {
			continue
		}
		return candidate, nil
	}
	return "", errors.New("runc not found on PATH (install runc or set LABCTL_RUNC to its path)")
}

func isAny(info os.FileInfo, files []os.FileInfo) bool {
	for _, f := range files {
		if os.SameFile(info, f) {
			return true
		}
	}
	return false
}
