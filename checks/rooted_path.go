package checks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinks bounds how many symbolic links one resolution follows, as the
// kernel's ELOOP does.
const maxSymlinks = 40

// resolveInRoot resolves the absolute lab path p with every symbolic link
// followed as if root were "/": an absolute link target restarts at root and
// ".." never climbs above it. It returns the resolved path relative to root
// (always absolute, "/"-rooted) and the host path to open. Components that do
// not exist are kept as written, so a missing file resolves to where it
// would be.
func resolveInRoot(root, p string) (labPath, hostPath string, err error) {
	if !path.IsAbs(p) {
		return "", "", fmt.Errorf("path %q is not absolute", p)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real // the root is the grader's own; its links are trusted
	}
	var resolved []string // components below root, all existing and no links
	pending := splitPath(p)
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case ".":
			continue
		case "..":
			if len(resolved) > 0 {
				resolved = resolved[:len(resolved)-1]
			}
			continue
		}
		host := filepath.Join(append([]string{root}, append(resolved, c)...)...)
		fi, err := os.Lstat(host)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || isNotDir(err) {
			resolved = append(resolved, c)
			resolved = append(resolved, pending...)
			break
		}
		if err != nil {
			return "", "", fmt.Errorf("resolving %s: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = append(resolved, c)
			continue
		}
		links++
		if links > maxSymlinks {
			return "", "", fmt.Errorf("resolving %s: too many levels of symbolic links", p)
		}
		target, err := os.Readlink(host)
		if err != nil {
			return "", "", fmt.Errorf("resolving %s: %w", p, err)
		}
		if path.IsAbs(target) {
			resolved = nil
		}
		pending = append(splitPath(target), pending...)
	}
	labPath = "/" + strings.Join(resolved, "/")
	return labPath, filepath.Join(append([]string{root}, resolved...)...), nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// isInside reports whether the lab path p lies in or below dir (both
// resolved).
func isInside(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
