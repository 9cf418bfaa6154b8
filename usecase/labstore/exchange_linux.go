package labstore

import "golang.org/x/sys/unix"

// exchange swaps the directories a and b in one step (renameat2 with
// RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
