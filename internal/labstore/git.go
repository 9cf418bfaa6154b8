package labstore

import (
	"context"
	"errors"
	"fmt"
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
	if err := writeTree(ctx, tree, src); err != nil {
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

// writeTree writes the regular files of tree into dir; links and
// submodules are left out.
func writeTree(ctx context.Context, tree *object.Tree, dir string) error {
	return tree.Files().ForEach(func(f *object.File) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if f.Mode != filemode.Regular && f.Mode != filemode.Executable && f.Mode != filemode.Deprecated {
			return nil
		}
		if !filepath.IsLocal(filepath.FromSlash(f.Name)) {
			return fmt.Errorf("the tree holds the path %q, which leaves it", f.Name)
		}
		mode := os.FileMode(0o644)
		if f.Mode == filemode.Executable {
			mode = 0o755
		}
		r, err := f.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		return createFile(filepath.Join(dir, filepath.FromSlash(f.Name)), mode, r)
	})
}
