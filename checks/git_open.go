package checks

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/labctl/labctl/internal/msg"
)

// A learner's repository is read as the learner's own and nothing else:
// its .git must be a directory inside the work tree (a .git file's
// "gitdir:" redirect, a commondir file and objects/info/alternates, which
// borrow another repository's objects, are refused), every file go-git
// opens in it or in the work tree must be a regular file reached without a
// symbolic link, and sizes are bounded so that a hostile repository fails
// in bounded time and memory instead of hanging or exhausting the grader.
const (
	// maxGitFileSize bounds any one file the checks open in a repository
	// (a packfile, the index, packed-refs) or its work tree (a file hashed
	// for status). A lab's repository is a few KiB.
	maxGitFileSize = 64 << 20
	// maxObjectSize bounds one git object (a commit, a tree, a blob) read
	// into memory.
	maxObjectSize = 8 << 20
	// maxCommits bounds how many commits a history walk visits.
	maxCommits = 100000
	// objectCacheSize is the memory for decoded objects, per repository.
	objectCacheSize = 16 << 20
)

// guard records the first thing a repository's files did that a learner's
// repository may not: it becomes the check's failure, whatever error go-git
// makes of it.
type guard struct {
	mu      sync.Mutex
	refused error
}

func (g *guard) refuse(err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refused == nil {
		g.refused = err
	}
	return err
}

func (g *guard) failure() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused
}

// guardedRepo is an opened repository with its guard.
type guardedRepo struct {
	*git.Repository
	guard *guard
	shown string
	// gitDir is the repository's git directory on the host, gitShown the
	// lab path of it.
	gitDir, gitShown string
}

// explain turns an error go-git returned while reading the repository into
// the guard's failure when the guard refused something, so the learner's
// hostile file is a failure, not a broken check.
func (r *guardedRepo) explain(err error) error {
	if err == nil {
		return nil
	}
	if f := r.guard.failure(); f != nil {
		return f
	}
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		// The learner's repository is missing part of itself, as
		// after removing its packs: a failure of the repository.
		return failf(msg.GitObjectMissing, r.shown)
	}
	return err
}

// errNoRepo is no repository at a path: what exists: false wants.
type errNoRepo struct{ *failure }

func (e *errNoRepo) Unwrap() error { return e.failure }

// openGuarded opens the repository whose work tree (or bare directory) is
// the lab path p.
func openGuarded(env Env, p string) (*guardedRepo, error) {
	if r, ok := env.Repos[p]; ok {
		return openSandboxRepo(r, p)
	}
	return openMounted(env, p)
}

// openMounted opens the repository at the lab path p that the checker
// reads itself (under the grader's mounts), never a copy the host read:
// what only the repository's own files tell (the kernel's change time of
// an object file) needs the files themselves.
func openMounted(env Env, p string) (*guardedRepo, error) {
	_, host, err := resolveLearnerPath(env, p)
	if err != nil {
		return nil, err
	}
	return openGuardedAt(host, p)
}

// noRepoAt is the failure of no repository at the lab path p.
func noRepoAt(p string) *errNoRepo { return &errNoRepo{&failure{text: msg.T(msg.GitNoRepoAt, p)}} }

// openGuardedAt opens the repository whose work tree (or bare directory)
// is host, a directory of this machine, shown as the lab path p.
func openGuardedAt(host, p string) (*guardedRepo, error) {
	noRepo := noRepoAt(p)
	fi, err := os.Lstat(host)
	if err != nil || !fi.IsDir() {
		return nil, noRepo
	}
	gitDir, gitShown, workTree := filepath.Join(host, ".git"), path.Join(p, ".git"), host
	fi, err = os.Lstat(gitDir)
	switch {
	case os.IsNotExist(err) && isBareRepo(host):
		gitDir, gitShown, workTree = host, p, ""
	case os.IsNotExist(err) || isNotDir(err):
		return nil, noRepo
	case err != nil:
		return nil, fmt.Errorf("opening repository %s: %w", p, err)
	case fi.Mode().IsRegular():
		return nil, failf(msg.GitdirFile, gitShown)
	case !fi.IsDir():
		return nil, failf(msg.GitDirNotDir, gitShown, describeMode(fi.Mode()))
	}
	for _, name := range []string{"commondir", "objects/info/alternates"} {
		if _, err := os.Lstat(filepath.Join(gitDir, name)); err == nil {
			return nil, failf(msg.GitBorrows, gitShown, name)
		}
	}
	if fi, err := os.Lstat(filepath.Join(gitDir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		if err != nil {
			return nil, noRepo
		}
		return nil, failf(msg.GitHeadNotRegular, gitShown, describeMode(fi.Mode()))
	}
	g := &guard{}
	dot := &guardedFS{Filesystem: osfs.New(gitDir), root: gitDir, shown: gitShown, guard: g}
	st := &boundedStorage{
		Storage: filesystem.NewStorageWithOptions(dot, cache.NewObjectLRU(objectCacheSize),
			filesystem.Options{LargeObjectThreshold: maxObjectSize}),
		guard: g, shown: p,
	}
	var wt billy.Filesystem
	if workTree != "" {
		wt = &guardedFS{Filesystem: osfs.New(workTree), root: workTree, shown: p, guard: g}
	}
	repo, err := git.Open(st, wt)
	if err != nil {
		if f := g.failure(); f != nil {
			return nil, f
		}
		if errors.Is(err, git.ErrRepositoryNotExists) {
			return nil, noRepo
		}
		return nil, fmt.Errorf("opening repository %s: %w", p, err)
	}
	return &guardedRepo{Repository: repo, guard: g, shown: p, gitDir: gitDir, gitShown: gitShown}, nil
}

// isBareRepo reports whether dir looks like a bare repository: HEAD and
// objects directly in it.
func isBareRepo(dir string) bool {
	head, err1 := os.Lstat(filepath.Join(dir, "HEAD"))
	objects, err2 := os.Lstat(filepath.Join(dir, "objects"))
	return err1 == nil && err2 == nil && head.Mode().IsRegular() && objects.IsDir()
}

// guardedFS is a directory of a learner's repository as go-git sees it:
// reads only, of regular files at most maxGitFileSize, reached without
// symbolic links and without leaving the directory; no chroot (go-git
// chroots only to follow alternates and worktree links).
type guardedFS struct {
	billy.Filesystem
	root  string // host path, resolved
	shown string // lab path, for messages
	guard *guard
}

func (g *guardedFS) Open(name string) (billy.File, error) {
	return g.OpenFile(name, os.O_RDONLY, 0)
}

func (g *guardedFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, fmt.Errorf("%s: the checks only read the learner's repository", path.Join(g.shown, name))
	}
	rel := strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(name)), "/")
	shown := path.Join(g.shown, rel)
	if rel == "objects/info/alternates" || rel == "commondir" {
		// go-git looks for alternates when an object is not found; a
		// repository without the file just lacks the object.
		if _, err := os.Lstat(filepath.Join(g.root, rel)); os.IsNotExist(err) {
			return nil, err
		}
		return nil, g.guard.refuse(failf(msg.GitBorrows, g.shown, rel))
	}
	host, err := g.noLinks(rel)
	if err != nil {
		return nil, err
	}
	f, err := openRegular(host, shown, maxGitFileSize)
	if err != nil {
		var fl *failure
		if errors.As(err, &fl) {
			return nil, g.guard.refuse(err)
		}
		return nil, err
	}
	return &guardedFile{File: f, name: name}, nil
}

// noLinks returns the host path of rel, a path in the directory, after
// making sure no part of it is a symbolic link (a refusal the guard
// records); a missing part is go-git's to handle, as os.Open would say.
func (g *guardedFS) noLinks(rel string) (string, error) {
	host, walked := g.root, g.shown
	for _, c := range splitPath(rel) {
		host, walked = filepath.Join(host, c), path.Join(walked, c)
		fi, err := os.Lstat(host)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return "", g.guard.refuse(failf(msg.GitSymlink, walked, linkTarget(host)))
		}
	}
	return host, nil
}

// ReadDir lists a directory reached without a symbolic link (go-git lists
// objects/pack and the refs this way).
func (g *guardedFS) ReadDir(name string) ([]os.FileInfo, error) {
	if _, err := g.noLinks(strings.TrimPrefix(path.Clean("/"+filepath.ToSlash(name)), "/")); err != nil {
		return nil, err
	}
	return g.Filesystem.ReadDir(name)
}

func (g *guardedFS) Chroot(p string) (billy.Filesystem, error) {
	return nil, g.guard.refuse(failf(msg.GitOtherDir, g.shown, shortText(p)))
}

func linkTarget(host string) string {
	t, err := os.Readlink(host)
	if err != nil {
		return "?"
	}
	return shortText(t)
}

// guardedFile is an open regular file of a repository.
type guardedFile struct {
	*os.File
	name string
}

func (f *guardedFile) Name() string  { return f.name }
func (f *guardedFile) Lock() error   { return nil }
func (f *guardedFile) Unlock() error { return nil }

// boundedStorage refuses any object larger than maxObjectSize before
// go-git decodes it: a commit with a 100 MiB message or a 100 MiB blob
// fails the check instead of filling the grader's memory.
type boundedStorage struct {
	*filesystem.Storage
	guard *guard
	shown string
}

func (s *boundedStorage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	o, err := s.Storage.EncodedObject(t, h)
	if err != nil {
		return nil, err
	}
	if o.Size() > maxObjectSize {
		return nil, s.guard.refuse(failf(msg.GitObjectTooLarge,
			o.Type(), h.String()[:7], s.shown, sizeText(maxObjectSize)))
	}
	return o, nil
}
