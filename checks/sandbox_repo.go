package checks

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/labctl/labctl/internal/msg"
)

// The sandbox's own repositories.
//
// A git check (or git: reference) of a repository the grader does not
// mount (/srv/app, /etc under etckeeper) reads it as a file check of such
// a path does: the host resolves the path with the same rules
// (resolveSandbox: links followed within the sandbox's file system, never
// into /proc, /sys or /dev) and reads the repository's directory whole
// through the engine's archive, at most maxRepoArchive, never running
// anything in the sandbox. The archive goes to the checker in the request
// (Request.Repos), which unpacks it into a directory of its own, once per
// round (SandboxRepo), and opens
// it as it opens a repository under /root (openGuardedAt): the links the
// archive holds are made as links, which the guard refuses as it refuses
// them in the learner's home, and nothing is ever written through one.

// maxRepoArchive bounds the archive of one repository outside the grader's
// mounts, its work tree included: the checker unpacks it in its /tmp, a
// 16 MiB tmpfs. A lab's repository is a few KiB.
const maxRepoArchive = 8 << 20

// ReadSandboxRepo resolves the sandbox path p over sfs as ReadSandbox does
// and, when it is a directory, reads it whole (SandboxFS.ReadTree) for a
// git check of the repository there, at most maxRepoArchive. It never
// looks at anything in /proc, /sys or /dev.
func ReadSandboxRepo(ctx context.Context, sfs SandboxFS, p string) SandboxFile {
	out, st, ok := lookUpSandbox(ctx, sfs, p)
	if !ok || !st.Mode.IsDir() {
		return out // no directory, no repository
	}
	if out.Resolved == "/" {
		out.State, out.Err = SandboxError, fmt.Sprintf("%s leads to the sandbox's /, which no git check reads whole; name the repository's own directory", p)
		return out
	}
	data, err := sfs.ReadTree(ctx, out.Resolved, maxRepoArchive)
	return out.read(p, data, err)
}

// SandboxRepo is a repository the host read from the sandbox as the
// checker holds it for one request: unpacked once, when a check first
// opens it, for every check of the round naming it (a round's checks run
// side by side, and the checker's /tmp is small), and removed by
// Env.RemoveCopies once the round is over.
type SandboxRepo struct {
	File *SandboxFile
	once sync.Once
	dir  string // the checker's directory holding the copy
	top  string // the repository's directory in it
	err  error
}

// RemoveCopies removes the copies of the repositories the host read from
// the sandbox that the round's checks unpacked.
func (e Env) RemoveCopies() {
	for _, r := range e.Repos {
		if r.dir != "" {
			os.RemoveAll(r.dir)
		}
	}
}

// openSandboxRepo opens the repository at the lab path p that the host
// read from the sandbox (ReadSandboxRepo): its archive unpacked into a
// directory of the checker's.
func openSandboxRepo(r *SandboxRepo, p string) (*guardedRepo, error) {
	sf := r.File
	switch sf.State {
	case SandboxOutside:
		return nil, failf(msg.LeadsOutside, p, shortText(sf.Resolved))
	case SandboxMissing:
		return nil, noRepoAt(p)
	case SandboxError:
		return nil, errors.New(sf.Err)
	case SandboxTooLarge:
		return nil, failf(msg.GitRepoTooLarge, p, sizeText(maxRepoArchive))
	case SandboxFound:
	default:
		return nil, fmt.Errorf("the host read %s from the sandbox as %q, which the checker does not know", p, sf.State)
	}
	if !fs.FileMode(sf.Mode).IsDir() {
		return nil, noRepoAt(p)
	}
	if len(sf.Data) > maxRepoArchive {
		return nil, failf(msg.GitRepoTooLarge, p, sizeText(maxRepoArchive))
	}
	r.once.Do(func() { r.unpack(p) })
	if r.err != nil {
		return nil, r.err
	}
	return openGuardedAt(r.top, p)
}

// unpack writes the archive into a new directory of the checker's.
func (r *SandboxRepo) unpack(p string) {
	dir, err := os.MkdirTemp("", "labctl-repo-")
	if err != nil {
		r.err = fmt.Errorf("making a directory for the repository %s: %w", p, err)
		return
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	r.dir = dir
	name := path.Base(r.File.Resolved)
	err = unpackTree(r.File.Data, dir, name)
	switch {
	case errors.Is(err, syscall.ENOSPC):
		r.err = fmt.Errorf("the repository %s, unpacked, does not fit the grader's /tmp (%s of files, each taking at least 4 KiB); keep many or large files out of it", p, sizeText(maxRepoArchive*2))
	case err != nil:
		r.err = fmt.Errorf("unpacking the repository %s that the host read from the sandbox: %w", p, err)
	}
	r.top = filepath.Join(dir, name)
}

// unpackTree writes the archive data, whose entries are all named name or
// below it, into dir (empty, the checker's own): directories, regular
// files with their executable bit and time, hard links to files written
// before, FIFOs, and symbolic links made as links, never followed. Devices
// are left out. An entry outside name, or below a link,
// is refused.
func unpackTree(data []byte, dir, name string) error {
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := entryPath(h.Name, name)
		if err != nil {
			return err
		}
		host, err := noLinkBelow(dir, rel)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.Mkdir(host, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if fi, err := os.Lstat(host); err != nil || !fi.IsDir() {
				return fmt.Errorf("%s is in the archive twice", h.Name)
			}
		case tar.TypeReg:
			perm := os.FileMode(0o600)
			if h.Mode&0o111 != 0 {
				perm = 0o700
			}
			f, err := os.OpenFile(host, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
			_ = os.Chtimes(host, h.ModTime, h.ModTime)
		case tar.TypeSymlink:
			if err := os.Symlink(h.Linkname, host); err != nil {
				return err
			}
		case tar.TypeFifo:
			// Made as it is, so the guard says what it says of a
			// FIFO in a repository under /root; it is never opened.
			if err := syscall.Mkfifo(host, 0o600); err != nil {
				return err
			}
		case tar.TypeLink:
			linked, err := entryPath(h.Linkname, name)
			if err != nil {
				return err
			}
			from, err := noLinkBelow(dir, linked)
			if err != nil {
				return err
			}
			if fi, err := os.Lstat(from); err != nil || !fi.Mode().IsRegular() {
				return fmt.Errorf("%s links to %s, which is no file written before it", h.Name, h.Linkname)
			}
			if err := os.Link(from, host); err != nil {
				return err
			}
		}
	}
}

// entryPath is an archive entry's name, which must be name or below it,
// made clean.
func entryPath(entry, name string) (string, error) {
	p := path.Clean(entry)
	if path.IsAbs(p) || (p != name && !strings.HasPrefix(p, name+"/")) {
		return "", fmt.Errorf("the archive holds %q, outside %s", shortText(entry), name)
	}
	return p, nil
}

// noLinkBelow returns the path of rel in dir once every directory above it
// is known to be a directory, not a link.
func noLinkBelow(dir, rel string) (string, error) {
	parts := splitPath(rel)
	host := dir
	for _, c := range parts[:len(parts)-1] {
		host = filepath.Join(host, c)
		fi, err := os.Lstat(host)
		if err != nil {
			return "", fmt.Errorf("the archive holds %s before its directory", shortText(rel))
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("the archive holds %s below something that is no directory", shortText(rel))
		}
	}
	return filepath.Join(host, parts[len(parts)-1]), nil
}
