package checks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// commitWritten is the commit an audit check's afterCommit names and when
// it was written to its repository.
type commitWritten struct {
	hash string
	at   time.Time
	// packed says the time is a pack's: the commit's own object file is
	// gone (git gc), so the time may be later than the commit was made.
	packed bool
}

// findCommitWritten finds when the file c.Touching, as the newest commit
// of HEAD's history that changed it holds it (found the way
// `git log -- FILE` finds it), was first committed: the earliest-written
// commit that holds the same file, among HEAD's history and the commits
// HEAD's reflog names (so that a commit whose message was amended, or that
// was rebased or squash-merged, after the apply still counts from when
// the content was first committed), written since the window began at
// since; the newest commit itself when none was. A missing repository, an
// empty one and a file no commit changed are failures.
func findCommitWritten(ctx context.Context, env Env, c *lab.CommitOf, since time.Time) (commitWritten, error) {
	repo, err := openMounted(env, c.Repo) // the object files' change times are the repository's own
	if err != nil {
		return commitWritten{}, err
	}
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return commitWritten{}, failf(msg.GitNoCommits, c.Repo)
	}
	if err != nil {
		return commitWritten{}, repo.explain(fmt.Errorf("reading HEAD of %s: %w", c.Repo, err))
	}
	file := strings.Trim(c.Touching, "/")
	commits, err := commitsTouching(ctx, repo.Repository, head.Hash(), file, c.Repo)
	if err != nil {
		var f *failure
		if !errors.As(err, &f) {
			err = fmt.Errorf("walking the history of %s: %w", c.Repo, err)
		}
		return commitWritten{}, repo.explain(err)
	}
	if len(commits) == 0 {
		return commitWritten{}, failf(msg.MsgNoCommits, msg.T(msg.ScopeTouching, c.Touching, c.Repo))
	}
	newest := commits[0]
	at, packed, err := repo.written(newest.Hash.String())
	if err != nil {
		return commitWritten{}, err
	}
	best := commitWritten{hash: newest.Hash.String(), at: at, packed: packed}
	want, err := entryHash(newest, file)
	if err != nil {
		return commitWritten{}, repo.explain(err)
	}
	candidates, err := repo.historyAndReflog(ctx, head.Hash())
	if err != nil {
		return commitWritten{}, err
	}
	for _, h := range candidates {
		if h == newest.Hash {
			continue
		}
		cand, err := repo.CommitObject(h)
		if err != nil {
			continue // a reflog may name what is gone
		}
		if mine, err := entryHash(cand, file); err != nil || mine != want {
			continue
		}
		at, packed, err := repo.written(h.String())
		var f *failure
		switch {
		case errors.As(err, &f):
			return commitWritten{}, err
		case err != nil || at.Before(since) || !at.Before(best.at):
			continue
		}
		best = commitWritten{hash: h.String(), at: at, packed: packed}
	}
	return best, nil
}

// maxReflog bounds the reflog read for candidates; a longer one is left
// out, which can only make the commit look later.
const maxReflog = 1 << 20

// historyAndReflog lists the commits of head's history (at most
// maxCommits) and those HEAD's reflog names.
func (r *guardedRepo) historyAndReflog(ctx context.Context, head plumbing.Hash) ([]plumbing.Hash, error) {
	var out []plumbing.Hash
	iter, err := r.Log(&git.LogOptions{From: head})
	if err != nil {
		return nil, r.explain(fmt.Errorf("walking the history of %s: %w", r.shown, err))
	}
	err = iter.ForEach(func(c *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(out) >= maxCommits {
			return storer.ErrStop
		}
		out = append(out, c.Hash)
		return nil
	})
	if err != nil {
		return nil, r.explain(fmt.Errorf("walking the history of %s: %w", r.shown, err))
	}
	host, err := r.dot().noLinks("logs/HEAD")
	var f *failure
	if errors.As(err, &f) {
		return nil, err
	}
	if err != nil {
		return out, nil
	}
	file, err := openRegular(host, path.Join(r.gitShown, "logs/HEAD"), maxReflog)
	if err != nil {
		return out, nil
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, maxReflog))
	if err != nil {
		return out, nil
	}
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(line)
		if len(fields) < 2 || !plumbing.IsHash(fields[1]) {
			continue
		}
		if h := plumbing.NewHash(fields[1]); !h.IsZero() {
			out = append(out, h)
		}
	}
	return out, nil
}

// written is when the object h was written to the repository: the change
// time of its loose object file. Git writes an object once, to a new file
// it renames into place, and the kernel sets a file's change time on every
// write, link and rename, so nothing the learner runs can make an object
// look older than it is. An object found only in a pack (git gc, a fetch)
// has the newest pack's time, which is no earlier than it arrived.
func (r *guardedRepo) written(h string) (time.Time, bool, error) {
	// Every directory on the way, and the file, is the repository's own.
	dot := r.dot()
	loose := path.Join("objects", h[:2], h[2:])
	host, err := dot.noLinks(loose)
	if err != nil && !os.IsNotExist(err) {
		return time.Time{}, false, err
	}
	if err == nil {
		if fi, err := os.Lstat(host); err == nil && fi.Mode().IsRegular() {
			at, ok := changeTime(fi)
			if !ok {
				return time.Time{}, false, errors.New("this system does not tell a file's change time")
			}
			return at, false, nil
		}
	}
	packDir, err := dot.noLinks("objects/pack")
	if err != nil && !os.IsNotExist(err) {
		return time.Time{}, false, err
	}
	var newest time.Time
	if err == nil {
		packs, err := filepath.Glob(filepath.Join(packDir, "*.pack"))
		if err != nil {
			return time.Time{}, false, err
		}
		for _, p := range packs {
			host, err := dot.noLinks(path.Join("objects/pack", filepath.Base(p)))
			if err != nil {
				return time.Time{}, false, err
			}
			if fi, err := os.Lstat(host); err == nil {
				if at, ok := changeTime(fi); ok && at.After(newest) {
					newest = at
				}
			}
		}
	}
	if newest.IsZero() {
		return time.Time{}, false, fmt.Errorf("commit %s of %s is neither a file of %s nor in a pack, so when it was written cannot be told",
			short(h), r.shown, path.Join(r.gitShown, "objects"))
	}
	return newest, true, nil
}

// dot is the repository's git directory as the checks read it: no
// symbolic link on the way to anything in it.
func (r *guardedRepo) dot() *guardedFS {
	return &guardedFS{root: r.gitDir, shown: r.gitShown, guard: r.guard}
}
