//go:build !linux

package homebound

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
)

// measure counts lengths where a file's blocks cannot be read (the warden
// runs on Linux; this keeps the package building elsewhere).
func measure(dir string, _ Limit, stop Limit) (Usage, error) {
	var u Usage
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			u.Unread++
			return nil
		}
		u.Entries++
		rel, _ := filepath.Rel(dir, path)
		if rel != "." {
			u.Depth = max(u.Depth, int64(strings.Count(rel, string(filepath.Separator))+1))
		}
		if u.Entries > stop.Entries || u.Depth > stop.Depth {
			u.Truncated = true
			return errPast
		}
		if info, err := d.Info(); err == nil {
			u.Bytes += info.Size()
		}
		return nil
	})
	return u, err
}

// usedSpace is not known here: the warden then looks every Every only.
func usedSpace(string) (int64, error) { return 0, errors.ErrUnsupported }
