//go:build !linux

package sandbox

// seccompProfile is empty where the engine's default profile is not built
// in (labctl itself runs on another system than Linux): the engine's own
// default then holds, which allows open_by_handle_at only to a container
// with CAP_DAC_READ_SEARCH, a capability the grader does not have.
func seccompProfile([]string) (string, error) { return "", nil }
