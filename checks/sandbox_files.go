package checks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"time"

	"github.com/labctl/labctl/internal/msg"
)

// The sandbox's own files.
//
// The grader mounts only the learner's home and the lab's fixtures; a file
// check of any other path of the sandbox (/etc/nginx/nginx.conf,
// /tmp/out.txt, /opt/course/1/answer) reads the sandbox's file system from
// the host's side, through the container engine, never by running anything
// in the sandbox (where the learner is root and could replace every tool).
// The host resolves the path with ReadSandbox, over the engine's view of
// the sandbox's file system (its image's layers, its writes and its
// volumes; no /proc, /sys or /dev of a running process), with the rules of
// the learner's areas: every link followed as if the sandbox's / were the
// root, and a path that resolves into /proc, /sys or /dev is never looked
// at. The file, at most maxFileSize, goes to the checker in the request
// (Request.Sandbox), which judges it as it judges a file it reads itself.

// SandboxFS is the sandbox's file system as the host reads it. Each path it
// is given is absolute and its parents hold no link.
type SandboxFS interface {
	// Lstat describes p without following a link at p; a missing p is an
	// error satisfying fs.ErrNotExist. A link's LinkTarget is where it
	// points (absolute, or relative to its directory).
	Lstat(ctx context.Context, p string) (SandboxStat, error)
	// ReadFile reads the regular file p, at most limit bytes: a file
	// found larger is ErrTooLarge, one that is no longer a regular file
	// ErrChanged.
	ReadFile(ctx context.Context, p string, limit int64) ([]byte, error)
	// ReadTree reads the directory p whole, as an archive (a tar whose
	// entries are named below p's base name, links written as links),
	// at most limit bytes: a longer one is ErrTooLarge, and one that no
	// longer starts with the directory p is ErrChanged.
	ReadTree(ctx context.Context, p string, limit int64) ([]byte, error)
}

// SandboxStat is what SandboxFS.Lstat says of a path.
type SandboxStat struct {
	Mode       fs.FileMode
	Size       int64
	ModTime    time.Time
	LinkTarget string
}

// Errors of a SandboxFS's ReadFile.
var (
	ErrTooLarge = errors.New("the file is larger than a check reads")
	ErrChanged  = errors.New("the file changed while being read")
)

// SandboxFile is one path of the sandbox read from the host's side, as the
// request carries it to the checker.
type SandboxFile struct {
	// Path is the path as the lab's check names it.
	Path string `json:"path"`
	// Resolved is where it leads, every link followed.
	Resolved string `json:"resolved,omitempty"`
	// State says what is there: SandboxFound, SandboxMissing,
	// SandboxOutside (Resolved is in /proc, /sys or /dev and nothing there
	// was looked at), SandboxTooLarge (a regular file over the bound, not
	// read) or SandboxError (Err says why).
	State string `json:"state"`
	// Mode, Size and ModTime describe a found path (its links followed);
	// Data is a regular file's content.
	Mode    uint32    `json:"mode,omitempty"`
	Size    int64     `json:"size,omitempty"`
	ModTime time.Time `json:"modTime,omitzero"`
	Data    []byte    `json:"data,omitempty"`
	Err     string    `json:"err,omitempty"`
}

// The states of a SandboxFile.
const (
	SandboxFound    = "found"
	SandboxMissing  = "missing"
	SandboxOutside  = "outside"
	SandboxTooLarge = "tooLarge"
	SandboxError    = "error"
)

// ReadSandbox resolves the sandbox path p over sfs, every link followed
// with the sandbox's / as the root, and reads it when it is a regular file
// of at most maxFileSize. It never looks at anything in /proc, /sys or /dev.
func ReadSandbox(ctx context.Context, sfs SandboxFS, p string) SandboxFile {
	out, st, ok := lookUpSandbox(ctx, sfs, p)
	if !ok || !st.Mode.IsRegular() {
		return out
	}
	if st.Size > maxFileSize {
		out.State = SandboxTooLarge
		return out
	}
	data, err := sfs.ReadFile(ctx, out.Resolved, maxFileSize)
	return out.read(p, data, err)
}

// read is out once the host read what p leads to: its data, or the state
// the read's error says (too large, changed meanwhile, gone, an error).
func (out SandboxFile) read(p string, data []byte, err error) SandboxFile {
	switch {
	case errors.Is(err, ErrTooLarge):
		out.State = SandboxTooLarge
	case errors.Is(err, ErrChanged):
		out.State, out.Err = SandboxError, fmt.Sprintf("%s changed while being read; check again", p)
	case errors.Is(err, fs.ErrNotExist):
		out.State = SandboxMissing
	case err != nil:
		out.State, out.Err = SandboxError, fmt.Sprintf("reading %s from the sandbox: %v", p, err)
	default:
		out.State, out.Data, out.Size = SandboxFound, data, int64(len(data))
	}
	return out
}

// lookUpSandbox resolves the sandbox path p over sfs and describes where
// it leads: ok says it exists (out is SandboxFound, without data, and st
// describes it); otherwise out says why not.
func lookUpSandbox(ctx context.Context, sfs SandboxFS, p string) (out SandboxFile, st SandboxStat, ok bool) {
	out = SandboxFile{Path: p}
	if !path.IsAbs(p) {
		out.State, out.Err = SandboxError, fmt.Sprintf("path %q is not absolute", p)
		return out, st, false
	}
	resolved, st, err := resolveSandbox(ctx, sfs, p)
	out.Resolved = resolved
	switch {
	case errors.Is(err, errForbidden):
		out.State = SandboxOutside
		return out, st, false
	case errors.Is(err, fs.ErrNotExist):
		out.State = SandboxMissing
		return out, st, false
	case err != nil:
		out.State, out.Err = SandboxError, err.Error()
		return out, st, false
	}
	out.State = SandboxFound
	out.Mode, out.Size, out.ModTime = uint32(st.Mode), st.Size, st.ModTime
	return out, st, true
}

// errForbidden says a resolution reached /proc, /sys or /dev.
var errForbidden = errors.New("leads into /proc, /sys or /dev")

// resolveSandbox resolves p over sfs (resolvePath) and describes what it
// leads to. The resolved path is returned with every error, so a message
// can say where the path led; what is in a forbidden area is never asked
// for, not even whether it exists.
func resolveSandbox(ctx context.Context, sfs SandboxFS, p string) (string, SandboxStat, error) {
	return resolvePath(ctx, sfs.Lstat, p, forbidden)
}

// forbidden reports whether the resolved path p lies in /proc, /sys or /dev.
func forbidden(p string) bool {
	for _, f := range forbiddenAreas {
		if isInside(p, f) {
			return true
		}
	}
	return false
}

// sandboxContent is the content of the regular file the host read, for a
// check or reference naming it as shown: a path that led into /proc, /sys
// or /dev, a missing one, one that is no regular file or is too large
// fails, as a file the checker reads itself does.
func sandboxContent(sf *SandboxFile, shown string) ([]byte, error) {
	fi := sandboxInfo{sf}
	switch sf.State {
	case SandboxOutside:
		return nil, failf(msg.LeadsOutside, shown, shortText(sf.Resolved))
	case SandboxMissing:
		return nil, failf(msg.NotExist, shown)
	case SandboxError:
		return nil, errors.New(sf.Err)
	case SandboxTooLarge:
		return nil, failf(msg.TooLarge, shown, sizeText(maxFileSize))
	case SandboxFound:
	default:
		return nil, fmt.Errorf("the host read %s from the sandbox as %q, which the checker does not know", shown, sf.State)
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, failf(msg.NotRegularFile, shown, describeMode(fi.Mode()))
	case len(sf.Data) > maxFileSize:
		return nil, failf(msg.TooLarge, shown, sizeText(maxFileSize))
	}
	return sf.Data, nil
}

// sandboxInfo is a SandboxFile's description as a file's.
type sandboxInfo struct{ f *SandboxFile }

func (i sandboxInfo) Name() string       { return path.Base(i.f.Resolved) }
func (i sandboxInfo) Size() int64        { return i.f.Size }
func (i sandboxInfo) Mode() fs.FileMode  { return fs.FileMode(i.f.Mode) }
func (i sandboxInfo) ModTime() time.Time { return i.f.ModTime }
func (i sandboxInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i sandboxInfo) Sys() any           { return nil }
