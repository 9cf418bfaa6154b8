package checks

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/labctl/labctl/internal/msg"
)

// The learner's areas.
//
// Everything under the sandbox's /root is written by a learner who is root
// there, and a symbolic link can point anywhere: at /etc/shadow, at
// /proc/self/fd/0 (the checker's own stdin, which holds the grader's token),
// at /dev/zero. So every lab path a check reads on the learner's behalf
// (a file check's path, a file reference, a repository) is resolved with
// all its links followed, rooted at Env.Root, and the result must lie in
// one of the learner's areas:
//
//   - the top-level directory of the path as the lab writes it (/root for
//     /root/gitops/app.yaml, /opt for /opt/lab/fixtures/app.yaml), and
//   - each directory in Env.Areas (the lab's work and fixtures directories,
//     when the checker is told them),
//
// and never in /proc, /sys or /dev, whatever the areas say. A path that
// resolves elsewhere fails with "X leads outside the learner's files (to
// Y)", and nothing at Y is read, not even whether it exists.

// forbiddenAreas are never the learner's, even below an area.
var forbiddenAreas = []string{"/proc", "/sys", "/dev"}

// maxShown bounds learner-controlled text (file content, commit messages,
// link targets) quoted in a message, in characters.
const maxShown = 200

// resolveLearnerPath resolves the lab path p like resolveInRoot and fails
// when the result leaves the learner's areas (see above).
func resolveLearnerPath(env Env, p string) (labPath, hostPath string, err error) {
	labPath, hostPath, err = resolveInRoot(env.Root, p)
	if err != nil {
		return "", "", err
	}
	if !inLearnerArea(env, p, labPath) {
		return "", "", failf(msg.LeadsOutside, p, shortText(labPath))
	}
	return labPath, hostPath, nil
}

// inLearnerArea reports whether resolved, the resolution of the lab path
// written, lies in one of the learner's areas.
func inLearnerArea(env Env, written, resolved string) bool {
	for _, f := range forbiddenAreas {
		if isInside(resolved, f) {
			return false
		}
	}
	if isInside(resolved, topDir(written)) {
		return true
	}
	for _, a := range env.Areas {
		if a != "" && a != "/" && isInside(resolved, path.Clean(a)) {
			return true
		}
	}
	return false
}

// topDir is the first directory of an absolute lab path: /root for
// /root/a/b. The root itself is its own top.
func topDir(p string) string {
	parts := splitPath(path.Clean(p))
	if len(parts) == 0 {
		return "/"
	}
	return "/" + parts[0]
}

// openRegular opens the regular file at host (a path resolveInRoot gave,
// free of links when it was resolved) for reading without ever blocking or
// following a link: O_NONBLOCK keeps a FIFO from stalling the open,
// O_NOFOLLOW refuses a link put in place since, and the open file must be
// a regular file of at most limit bytes. shown names the file in messages.
// Anything else is a failure naming what was found there.
func openRegular(host, shown string, limit int64) (*os.File, error) {
	// Look before opening: opening a device can act (a watchdog, a tape).
	fi, err := os.Lstat(host)
	if os.IsNotExist(err) || isNotDir(err) {
		return nil, failf(msg.NotExist, shown)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, failf(msg.NotRegularFile, shown, describeMode(fi.Mode()))
	}
	f, err := os.OpenFile(host, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, failf(msg.ChangedWhileReading, shown)
		}
		if os.IsNotExist(err) || isNotDir(err) {
			return nil, failf(msg.NotExist, shown)
		}
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, failf(msg.ChangedWhileReading, shown)
	}
	if fi.Size() > limit {
		f.Close()
		return nil, failf(msg.TooLarge, shown, sizeText(limit))
	}
	if got, ok := openedPath(f); ok && got != host {
		f.Close()
		return nil, failf(msg.ChangedWhileReading, shown)
	}
	return f, nil
}

// openedPath is the path the kernel gives for an open file, when /proc is
// there to ask: it shows where the open really landed, whatever links or
// renames happened between resolving a path and opening it.
func openedPath(f *os.File) (string, bool) {
	got, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !path.IsAbs(got) {
		return "", false
	}
	return got, true
}

// sizeText says a byte count in MiB (or bytes below one MiB).
func sizeText(n int64) msg.Text {
	if n >= 1<<20 {
		return msg.T(msg.SizeMiB, n>>20)
	}
	return msg.T(msg.SizeBytes, n)
}

// shortText cuts learner-controlled text to maxShown characters for a
// message (escaping is the renderer's job, so the text stays exact).
func shortText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if r := []rune(s); len(r) > maxShown {
		return string(r[:maxShown]) + "…"
	}
	return s
}
