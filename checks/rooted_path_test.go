package checks

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// The one resolution of a lab path (resolvePath), as the grader makes it
// under its mounts (resolveInRoot) and as the host makes it over the
// sandbox's file system (resolveSandbox): both lead every path to the same
// place, links followed within the root, and differ only where they say
// they do (a missing part is kept as written for the grader and is
// fs.ErrNotExist for the host; the host never looks into /proc, /sys or
// /dev).
func TestResolvePath(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "/etc/passwd", "lab", 0o644)
	writeFile(t, root, "/proc/1/root/etc/shadow", "secret", 0o644)
	must(t, os.MkdirAll(filepath.Join(root, "srv/app"), 0o755))
	for target, at := range map[string]string{
		"../../../../etc/passwd": "up",
		"/etc":                   "etc-abs",
		"srv/app":                "rel",
		"/proc/1/root":           "into-proc",
		"loop":                   "loop",
		"/loop2":                 "loop1",
		"/loop1":                 "loop2",
		"/":                      "top",
	} {
		must(t, os.Symlink(target, filepath.Join(root, at)))
	}
	const (
		found     = "found"
		missing   = "missing"
		loop      = "loop"
		forbidden = "forbidden"
	)
	for _, tc := range []struct {
		path, want, kind string
	}{
		{"/etc/passwd", "/etc/passwd", found},
		{"/up", "/etc/passwd", found},
		{"/etc-abs/passwd", "/etc/passwd", found},
		{"/etc-abs/../etc/./passwd", "/etc/passwd", found},
		{"/../../etc/passwd", "/etc/passwd", found},
		{"/rel", "/srv/app", found},
		{"/top/top/srv/app", "/srv/app", found},
		{"/top", "/", found},
		{"/etc/missing", "/etc/missing", missing},
		{"/up/below", "/etc/passwd/below", missing},
		{"/nowhere/at/all", "/nowhere/at/all", missing},
		{"/loop", "", loop},
		{"/loop1/x", "", loop},
		{"/into-proc/etc/shadow", "/proc/1/root/etc/shadow", forbidden},
	} {
		t.Run(tc.path, func(t *testing.T) {
			labPath, host, err := resolveInRoot(root, tc.path)
			switch tc.kind {
			case loop:
				if err == nil {
					t.Errorf("the grader resolved a loop of links to %s", labPath)
				}
			default:
				// The grader resolves into /proc as anywhere; its
				// areas (inLearnerArea) refuse what lies there.
				if err != nil || labPath != tc.want || host != filepath.Join(root, filepath.FromSlash(tc.want)) {
					t.Errorf("the grader: %s (%s), %v; want %s", labPath, host, err, tc.want)
				}
			}

			d := &dirFS{root: root}
			resolved, _, err := resolveSandbox(context.Background(), d, tc.path)
			switch tc.kind {
			case found:
				if err != nil || resolved != tc.want {
					t.Errorf("the host: %s, %v; want %s", resolved, err, tc.want)
				}
			case missing:
				if !errors.Is(err, fs.ErrNotExist) || resolved != tc.want {
					t.Errorf("the host: %s, %v; want %s missing", resolved, err, tc.want)
				}
			case loop:
				if err == nil || errors.Is(err, fs.ErrNotExist) {
					t.Errorf("the host: %s, %v; want a loop of links refused", resolved, err)
				}
			case forbidden:
				if !errors.Is(err, errForbidden) || resolved != tc.want || d.askedInside("/proc") {
					t.Errorf("the host: %s, %v, asked %v; want %s refused unseen", resolved, err, d.asked, tc.want)
				}
			}
		})
	}
}
