package checks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// checkGit runs a git check with go-git; the learner's git program and
// global configuration are never consulted.
//
// pass: every set field holds. fail: no repository where one is required
// (or one where none may be), a config key unset in .git/config, too few or
// too many commits, a dirty (or, for clean: false, clean) work tree, an
// untracked path, a commit message or a field of a committed file that does
// not meet its assertion; an empty repository fails everything that needs a
// commit. error: a repository go-git cannot read, an invalid expression.
func checkGit(ctx context.Context, env Env, gc *lab.GitCheck) error {
	want := gc.Exists == nil || *gc.Exists
	guarded, err := openRepo(env, gc.Repo)
	var none *errNoRepo
	if errors.As(err, &none) {
		if gc.ReportHead {
			return &reported{HeadAbsent}
		}
		if !want {
			return nil
		}
		return failf(msg.GitExpectRepo, gc.Repo)
	}
	if err != nil {
		return err
	}
	if !want {
		return failf(msg.GitExpectNoRepo, gc.Repo)
	}
	return guarded.explain(checkGitRepo(ctx, env, guarded.Repository, gc))
}

// checkGitRepo checks an opened repository; see checkGit.
func checkGitRepo(ctx context.Context, env Env, repo *git.Repository, gc *lab.GitCheck) error {
	if gc.ReportHead {
		return reportHead(repo)
	}
	if err := checkGitConfig(repo, gc); err != nil {
		return err
	}
	if gc.Commits != nil && gc.Since == lab.SinceStep {
		if err := checkCommitsSince(ctx, repo, gc, env.Heads[gc]); err != nil {
			return err
		}
	} else if gc.Commits != nil {
		n, err := countCommits(ctx, repo)
		if err != nil {
			return err
		}
		if !inRange(n, gc.Commits) {
			return failf(msg.GitCommits, rangeText(gc.Commits), gc.Repo, n)
		}
	}
	if gc.Clean != nil {
		if err := checkClean(env, repo, gc.Repo, *gc.Clean); err != nil {
			return err
		}
	}
	if len(gc.Tracked) > 0 {
		commit, err := resolveCommit(repo, gc.Repo, "HEAD")
		if err != nil {
			return err
		}
		tree, err := commit.Tree()
		if err != nil {
			return fmt.Errorf("reading HEAD's tree in %s: %w", gc.Repo, err)
		}
		for _, p := range gc.Tracked {
			if _, err := tree.FindEntry(strings.Trim(p, "/")); err != nil {
				return failf(msg.GitTracked, p, gc.Repo)
			}
		}
	}
	if gc.Message != nil {
		if err := checkMessages(ctx, repo, gc.Repo, gc.Message); err != nil {
			return err
		}
	}
	if gc.Field != nil {
		commit, err := resolveCommit(repo, gc.Repo, "HEAD")
		if err != nil {
			return err
		}
		data, err := readCommitFile(commit, gc.Field.File, "HEAD")
		if err != nil {
			return err
		}
		format, err := formatOf(gc.Field.File, gc.Field.Format)
		if err != nil {
			return err
		}
		where := msg.T(msg.WhereInAtHEAD, gc.Field.File)
		docs, err := decodeDocuments(data, format, msg.T(msg.FileAtRev, gc.Field.File, "HEAD"))
		if err != nil {
			return err
		}
		return checkFieldAssert(ctx, env, &gc.Field.FieldAssert, docs, where)
	}
	return nil
}

// openRepo opens the repository whose work tree is at the lab path p,
// without looking in parent directories, as openGuarded does. No
// repository there is an *errNoRepo failure.
func openRepo(env Env, p string) (*guardedRepo, error) {
	return openGuarded(env, p)
}

// resolveCommit finds the commit rev names; an empty repository or an
// unknown revision is a failure.
func resolveCommit(repo *git.Repository, shown, rev string) (*object.Commit, error) {
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		head, headErr := repo.Head()
		if errors.Is(headErr, plumbing.ErrReferenceNotFound) {
			return nil, failf(msg.GitNoCommits, shown)
		}
		if headErr == nil {
			if _, err := repo.CommitObject(head.Hash()); errors.Is(err, plumbing.ErrObjectNotFound) {
				return nil, failf(msg.GitObjectMissing, shown)
			}
		}
		return nil, failf(msg.GitRevNotFound, rev, shown)
	}
	c, err := repo.CommitObject(*h)
	if err != nil {
		return nil, fmt.Errorf("reading commit %s in %s: %w", h, shown, err)
	}
	return c, nil
}

// readCommitFile reads a file as committed; a missing one is a failure.
func readCommitFile(c *object.Commit, name, rev string) ([]byte, error) {
	f, err := c.File(strings.TrimPrefix(name, "/"))
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, failf(msg.GitFileNotFoundAt, name, rev)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", name, rev, err)
	}
	if f.Size > maxFileSize {
		return nil, failf(msg.GitFileTooLarge, name, rev, maxFileSize>>20)
	}
	r, err := f.Reader()
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", name, rev, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize))
	if err != nil {
		return nil, fmt.Errorf("reading %s at %s: %w", name, rev, err)
	}
	return data, nil
}

// checkGitConfig requires each key non-empty in the repository's own
// .git/config; global and system configuration do not count.
func checkGitConfig(repo *git.Repository, gc *lab.GitCheck) error {
	if len(gc.Config) == 0 {
		return nil
	}
	cfg, err := repo.Config()
	if err != nil {
		return fmt.Errorf("reading %s/.git/config: %w", gc.Repo, err)
	}
	for _, key := range gc.Config {
		first, last := strings.Index(key, "."), strings.LastIndex(key, ".")
		if first <= 0 || last == len(key)-1 {
			return fmt.Errorf("config key %q must be section.key or section.subsection.key", key)
		}
		section, name, sub := key[:first], key[last+1:], ""
		if first != last {
			sub = key[first+1 : last]
		}
		value := ""
		if cfg.Raw.HasSection(section) {
			s := cfg.Raw.Section(section)
			if sub == "" {
				value = s.Options.Get(name)
			} else if s.HasSubsection(sub) {
				value = s.Subsection(sub).Options.Get(name)
			}
		}
		if strings.TrimSpace(value) == "" {
			return failf(msg.GitConfigUnset, key, gc.Repo)
		}
	}
	return nil
}

// countCommits counts the commits reachable from HEAD through any parent;
// an empty repository has none.
func countCommits(ctx context.Context, repo *git.Repository) (int, error) {
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading HEAD: %w", err)
	}
	iter, err := repo.Log(&git.LogOptions{From: head.Hash()})
	if err != nil {
		return 0, fmt.Errorf("walking history: %w", err)
	}
	n := 0
	err = iter.ForEach(func(*object.Commit) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		n++
		if n > maxCommits {
			return failf(msg.GitHistoryTooLong, maxCommits)
		}
		return nil
	})
	var f *failure
	if errors.As(err, &f) {
		return 0, f
	}
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return 0, fmt.Errorf("walking history: %w", err)
	}
	return n, nil
}

// checkClean compares the work tree with `git status --porcelain` being
// empty: untracked files are changes, ignored ones are not (by the
// repository's .gitignore files, its info/exclude, and the learner's own
// excludes file).
func checkClean(env Env, repo *git.Repository, shown string, want bool) error {
	wt, err := repo.Worktree()
	if errors.Is(err, git.ErrIsBareRepository) {
		return failf(msg.GitBare, shown)
	}
	if err != nil {
		return fmt.Errorf("opening the work tree of %s: %w", shown, err)
	}
	wt.Excludes = append(wt.Excludes, infoExcludes(repo)...)
	wt.Excludes = append(wt.Excludes, learnerExcludes(env, repo)...)
	status, err := wt.Status()
	if err != nil {
		return fmt.Errorf("reading the status of %s: %w", shown, err)
	}
	var changes []string
	for p, s := range status {
		if s.Staging == git.Unmodified && s.Worktree == git.Unmodified {
			continue
		}
		changes = append(changes, fmt.Sprintf("%c%c %s", s.Staging, s.Worktree, p))
	}
	sort.Strings(changes)
	switch {
	case want && len(changes) > 0:
		shownChanges := changes
		if len(shownChanges) > 5 {
			shownChanges = append(shownChanges[:5:5], "…")
		}
		return failf(msg.GitNotClean, shown, len(changes), strings.Join(shownChanges, ", "))
	case !want && len(changes) == 0:
		return failf(msg.GitNotDirty, shown)
	}
	return nil
}

func inRange(n int, r *lab.Range) bool {
	return (r.Min == nil || n >= *r.Min) && (r.Max == nil || n <= *r.Max)
}

// rangeText says a range in words: "at least 2", "between 1 and 3".
func rangeText(r *lab.Range) msg.Text {
	switch {
	case r.Min != nil && r.Max != nil && *r.Min == *r.Max:
		return msg.T(msg.RangeExactly, *r.Min)
	case r.Min != nil && r.Max != nil:
		return msg.T(msg.RangeBetween, *r.Min, *r.Max)
	case r.Min != nil:
		return msg.T(msg.RangeAtLeast, *r.Min)
	case r.Max != nil:
		return msg.T(msg.RangeAtMost, *r.Max)
	}
	return msg.T(msg.RangeAny)
}
