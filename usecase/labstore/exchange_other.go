//go:build !linux

package labstore

import "errors"

// exchange is not done in one step here: land falls back to two renames.
func exchange(_, _ string) error { return errors.ErrUnsupported }
