package checks

import (
	"context"
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
// followed as if root, a directory of this machine, were "/" (resolvePath).
// It returns the resolved path relative to root (always absolute,
// "/"-rooted) and the host path to open. Components that do not exist (or
// cannot be looked at) are kept as written, so a missing file resolves to
// where it would be.
func resolveInRoot(root, p string) (labPath, hostPath string, err error) {
	if !path.IsAbs(p) {
		return "", "", fmt.Errorf("path %q is not absolute", p)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real // the root is the grader's own; its links are trusted
	}
	labPath, _, err = resolvePath(context.Background(), rootFS(root).Lstat, p, nil)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) && !isNotDir(err) {
		return "", "", err
	}
	return labPath, filepath.Join(root, filepath.FromSlash(labPath)), nil
}

// rootFS describes the paths below a directory of this machine as a
// sandbox's, for resolvePath.
type rootFS string

func (r rootFS) Lstat(_ context.Context, p string) (SandboxStat, error) {
	host := filepath.Join(string(r), filepath.FromSlash(p))
	fi, err := os.Lstat(host)
	if err != nil {
		return SandboxStat{}, err
	}
	st := SandboxStat{Mode: fi.Mode(), Size: fi.Size(), ModTime: fi.ModTime()}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if st.LinkTarget, err = os.Readlink(host); err != nil {
			return SandboxStat{}, err
		}
	}
	return st, nil
}

// resolvePath is the one resolution of a lab path: p (absolute) with every
// symbolic link followed as if the file system lstat describes were all
// there is, an absolute link target restarting at its / and ".." never
// climbing above it, at most maxSymlinks links. The grader resolves the
// learner's paths under its mounts with it (resolveInRoot) and the host
// the sandbox's other paths over the engine (resolveSandbox). It returns
// the resolved path and what lstat says of it; with an error, the path as
// far as it was resolved followed by the rest as written, so a message can
// say where p led. A path stop says yes to (a forbidden area) is neither
// looked at nor followed: errForbidden. A missing part, or a part below
// something that is not a directory, is fs.ErrNotExist.
func resolvePath(ctx context.Context, lstat func(context.Context, string) (SandboxStat, error), p string, stop func(string) bool) (string, SandboxStat, error) {
	var resolved []string
	pending := splitPath(p)
	links := 0
	join := func(parts []string) string { return "/" + strings.Join(parts, "/") }
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
		next := join(append(resolved, c))
		if stop != nil && stop(next) {
			return join(append(append(resolved, c), pending...)), SandboxStat{}, errForbidden
		}
		st, err := lstat(ctx, next)
		if err != nil {
			return join(append(append(resolved, c), pending...)), SandboxStat{}, err
		}
		if st.Mode&fs.ModeSymlink == 0 {
			if len(pending) > 0 && !st.Mode.IsDir() {
				return join(append(append(resolved, c), pending...)), SandboxStat{}, fs.ErrNotExist
			}
			resolved = append(resolved, c)
			if len(pending) == 0 {
				return next, st, nil
			}
			continue
		}
		links++
		if links > maxSymlinks {
			return next, SandboxStat{}, fmt.Errorf("resolving %s: too many levels of symbolic links", p)
		}
		if st.LinkTarget == "" {
			return next, SandboxStat{}, fmt.Errorf("resolving %s: the link %s has no target", p, next)
		}
		if path.IsAbs(st.LinkTarget) {
			resolved = nil
		}
		pending = append(splitPath(st.LinkTarget), pending...)
	}
	// p was / itself, or its links led back to /.
	at := join(resolved)
	if stop != nil && stop(at) {
		return at, SandboxStat{}, errForbidden
	}
	st, err := lstat(ctx, at)
	return at, st, err
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
