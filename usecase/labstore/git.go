package labstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/labctl/labctl/internal/labread"
	"github.com/labctl/labctl/lab"
)

// scpLike matches git's user@host:path form of an SSH URL.
var scpLike = regexp.MustCompile(`^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:`)

// gitURL reports whether source is a git URL rather than a local path.
func gitURL(source string) bool {
	return strings.Contains(source, "://") || scpLike.MatchString(source)
}

// isRepository reports whether dir is a git repository, bare or not.
func isRepository(dir string) bool {
	_, err := git.PlainOpen(dir)
	return err == nil
}

// localRepository returns the directory of a file:// URL or a local path;
// ok is false for a remote URL.
func localRepository(source string) (dir string, ok bool, err error) {
	if !gitURL(source) {
		abs, err := filepath.Abs(source)
		return abs, true, err
	}
	u, err := url.Parse(source)
	if err != nil || u.Scheme != "file" {
		return "", false, nil
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", false, fmt.Errorf("%s: a file:// URL names no host (file:///path)", source)
	}
	return u.Path, true, nil
}

// fromGit stages the lab at a commit of a git repository: a local one (a
// path or a file:// URL) is read in place, a remote one is cloned into the
// staging directory first. The commit's tree (or o.Subdir in it) is
// written out and staged as a lab's directory.
func (st *staging) fromGit(ctx context.Context, source string, o Options) (*Meta, error) {
	meta := &Meta{Kind: KindGit, Source: source, Ref: o.Ref}
	dir, local, err := localRepository(source)
	if err != nil {
		return nil, err
	}
	var repo *git.Repository
	if local {
		if !gitURL(source) {
			meta.Source = dir
		}
		if repo, err = git.PlainOpen(dir); err != nil {
			return nil, fmt.Errorf("opening the git repository %s: %w", dir, err)
		}
	} else {
		repo, err = git.PlainCloneContext(ctx, filepath.Join(st.dir, "clone"), true, &git.CloneOptions{URL: source, Tags: git.AllTags})
		if err != nil {
			return nil, fmt.Errorf("cloning %s: %w", source, err)
		}
	}
	commit, err := resolve(repo, o.Ref, !local)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	meta.Commit = commit.Hash.String()
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading commit %s of %s: %w", meta.Commit, source, err)
	}
	if o.Subdir != "" {
		sub := path.Clean(filepath.ToSlash(o.Subdir))
		if !filepath.IsLocal(filepath.FromSlash(sub)) {
			return nil, fmt.Errorf("--subdir %q is not a directory inside the repository", o.Subdir)
		}
		if sub != "." {
			if tree, err = tree.Tree(sub); err != nil {
				return nil, fmt.Errorf("commit %.12s of %s has no directory %s", meta.Commit, source, sub)
			}
			meta.Subdir = sub
		}
	}
	src := filepath.Join(st.dir, "src")
	shown := fmt.Sprintf("%s@%.12s", source, meta.Commit)
	if meta.Subdir != "" {
		shown += ":" + meta.Subdir
	}
	if err := writeGitLab(ctx, tree, src, shown); err != nil {
		return nil, fmt.Errorf("reading commit %.12s of %s: %w", meta.Commit, source, err)
	}
	if _, err := os.Stat(filepath.Join(src, LabFile)); err != nil {
		where := "its top"
		if meta.Subdir != "" {
			where = meta.Subdir
		}
		return nil, fmt.Errorf("commit %.12s of %s has no %s in %s: name the lab's directory with --subdir", meta.Commit, source, LabFile, where)
	}
	st.shown = fmt.Sprintf("%s@%.12s:%s", source, meta.Commit, path.Join(meta.Subdir, LabFile))
	if err := st.copyLab(filepath.Join(src, LabFile)); err != nil {
		return nil, err
	}
	return meta, nil
}

// resolve finds the commit ref names (a branch, a tag, a commit, in full
// or abbreviated; HEAD when empty). In a clone, branches are the remote's.
func resolve(repo *git.Repository, ref string, cloned bool) (*object.Commit, error) {
	name := ref
	if name == "" {
		name = "HEAD"
	}
	candidates := []string{name}
	if cloned {
		candidates = append(candidates, "origin/"+name)
	}
	for _, c := range candidates {
		h, err := repo.ResolveRevision(plumbing.Revision(c))
		if err != nil {
			continue
		}
		commit, err := repo.CommitObject(*h)
		if err != nil {
			return nil, err
		}
		return commit, nil
	}
	if ref == "" {
		return nil, errors.New("the repository has no HEAD commit: give --ref BRANCH, TAG or COMMIT")
	}
	return nil, fmt.Errorf("no branch, tag or commit %q", ref)
}

// writeGitLab writes into dir the lab's part of tree: its lab file,
// README.md, fixtures/ and the build directory of every image the lab file
// names, and nothing else of the repository. What it writes is bounded as
// a lab read from disk is (labread.MaxFiles entries, labread.MaxBytes
// bytes), counted before anything is read, so a tree of a few objects that
// stands for millions of files or a huge blob is refused, not written.
// Links and submodules are refused, as links are in a lab's directory.
func writeGitLab(ctx context.Context, tree *object.Tree, dir, shown string) error {
	w := &treeWriter{ctx: ctx, dir: dir, shown: shown}
	e, err := tree.FindEntry(LabFile)
	if errors.Is(err, object.ErrEntryNotFound) {
		return nil // said by the caller
	}
	if err != nil {
		return err
	}
	if err := w.file(LabFile, e, tree); err != nil {
		return err
	}
	parts := []string{readmeFile, labread.Fixtures}
	if info, err := os.Stat(filepath.Join(dir, LabFile)); err != nil || info.Size() > labread.MaxLabFile {
		return nil // refused when the lab is read
	}
	if data, err := os.ReadFile(filepath.Join(dir, LabFile)); err == nil {
		// A lab file that does not parse is written alone: reading it
		// says what is wrong.
		if l, err := lab.Parse(LabFile, data); err == nil {
			for _, im := range l.Cluster.Images {
				if im.Build != "" {
					parts = append(parts, im.Build)
				}
			}
		}
	}
	for _, p := range parts {
		p = path.Clean(p)
		if !filepath.IsLocal(filepath.FromSlash(p)) {
			continue // refused when the lab is read
		}
		e, err := tree.FindEntry(p)
		if errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if e.Mode != filemode.Dir {
			if err := w.file(p, e, tree); err != nil {
				return err
			}
			continue
		}
		sub, err := tree.Tree(p)
		if err != nil {
			return err
		}
		if err := w.tree(p, sub); err != nil {
			return err
		}
	}
	return nil
}

// treeWriter is one writeGitLab: where it writes and what it has written.
type treeWriter struct {
	ctx        context.Context
	dir, shown string
	count      int
	bytes      int64
	seen       map[string]bool
}

// tree writes the entries of sub, at p in the lab.
func (w *treeWriter) tree(p string, sub *object.Tree) error {
	walker := object.NewTreeWalker(sub, true, nil)
	defer walker.Close()
	for {
		name, e, err := walker.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		q := path.Join(p, name)
		if e.Mode == filemode.Dir {
			if err := w.count1(q); err != nil {
				return err
			}
			continue
		}
		if err := w.file(q, &e, sub); err != nil {
			return err
		}
	}
}

func (w *treeWriter) count1(p string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	w.count++
	if w.count > labread.MaxFiles {
		return &labread.LimitError{Dir: w.shown, What: "files", Max: labread.MaxFiles, Path: p}
	}
	return nil
}

// file writes the entry e of tree's repository at p in the lab, its size
// looked up before it is read.
func (w *treeWriter) file(p string, e *object.TreeEntry, tree *object.Tree) error {
	mode := e.Mode
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[p] {
		return nil // a build directory inside fixtures/, or named twice
	}
	w.seen[p] = true
	if err := w.count1(p); err != nil {
		return err
	}
	switch mode {
	case filemode.Regular, filemode.Executable, filemode.Deprecated:
	case filemode.Symlink:
		return &labread.LinkError{Dir: w.shown, Path: p, Mode: fs.ModeSymlink}
	case filemode.Submodule:
		return fmt.Errorf("%s in the lab %s is a git submodule: a lab is installed from its own repository's files only; "+
			"commit the files themselves in the lab's directory", p, w.shown)
	default:
		return fmt.Errorf("%s in the lab %s is not a regular file or a directory", p, w.shown)
	}
	if !filepath.IsLocal(filepath.FromSlash(p)) {
		return fmt.Errorf("the tree holds the path %q, which leaves it", p)
	}
	f, err := tree.TreeEntryFile(&object.TreeEntry{Name: path.Base(p), Mode: e.Mode, Hash: e.Hash})
	if err != nil {
		return err
	}
	size := f.Size
	if w.bytes+size > labread.MaxBytes {
		return &labread.LimitError{Dir: w.shown, What: "bytes", Max: labread.MaxBytes, Path: p}
	}
	w.bytes += size
	r, err := f.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	perm := os.FileMode(0o644)
	if mode == filemode.Executable {
		perm = 0o755
	}
	return createFile(filepath.Join(w.dir, filepath.FromSlash(p)), perm, io.LimitReader(r, size))
}
