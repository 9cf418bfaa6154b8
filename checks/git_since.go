package checks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// Where a repository is as a step begins, as ReportHead says it and the
// host keeps it (Request.Heads): HEAD's commit, or HeadNone when HEAD has
// none yet, then the commit of every local branch, space-separated.
const (
	// HeadNone is HEAD with no commit (a new repository, or an unborn
	// branch).
	HeadNone = "none"
	// HeadAbsent is no repository at the path: the host notes nothing,
	// and looks again later.
	HeadAbsent = "absent"
	// HeadNotBegun is what the host says of a step the learner has not
	// begun: its new commits cannot be told yet.
	HeadNotBegun = "not-begun"
	// HeadLate, before a head, says the host noted it late: after the
	// step had become current, so the learner's commits for the step may
	// already be in it. Too few new commits then cannot be told a
	// failure.
	HeadLate = "late"
)

// ReportHead is the check by which the host notes where the repository at
// repo is (see HeadNone): it passes, saying so.
func ReportHead(repo string) lab.Check {
	return lab.Check{Name: "head", Git: &lab.GitCheck{Repo: repo, ReportHead: true}}
}

// reportHead is ReportHead's answer for an opened repository: HEAD, then
// the local branches' commits, sorted.
func reportHead(repo *git.Repository) error {
	out := HeadNone
	head, err := repo.Head()
	switch {
	case err == nil:
		out = head.Hash().String()
	case !errors.Is(err, plumbing.ErrReferenceNotFound):
		return fmt.Errorf("reading HEAD: %w", err)
	}
	tips, err := branchTips(repo)
	if err != nil {
		return err
	}
	return &reported{strings.Join(append([]string{out}, tips...), " ")}
}

// branchTips are the commits of the local branches, each once, sorted.
func branchTips(repo *git.Repository) ([]string, error) {
	iter, err := repo.Branches()
	if err != nil {
		return nil, fmt.Errorf("listing branches: %w", err)
	}
	var tips []string
	err = iter.ForEach(func(r *plumbing.Reference) error {
		if h := r.Hash().String(); !slices.Contains(tips, h) {
			tips = append(tips, h)
		}
		if len(tips) > maxCommits {
			return failf(msg.GitHistoryTooLong, maxCommits)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(tips)
	return tips, nil
}

// checkCommitsSince bounds the commits made since the step began, where
// start (Request.Heads) says the repository was then: the commits
// reachable from HEAD and from none of start's. Start's HEAD must still be
// on HEAD's first-parent line, and each of its branches' commits in HEAD's
// history or still a branch: otherwise history was rewritten. A start the
// host did not see ("": a step replayed by reset --to, or judged for a
// class) counts every commit. A start noted late (HeadLate) with too few
// commits since cannot tell: the learner is asked for a new commit.
func checkCommitsSince(ctx context.Context, repo *git.Repository, gc *lab.GitCheck, start string) error {
	fields := strings.Fields(start)
	if len(fields) > 0 && fields[0] == HeadLate {
		err := checkCommitsSince(ctx, repo, gc, strings.Join(fields[1:], " "))
		var f *failure
		if errors.As(err, &f) && f.text.Key == msg.GitCommitsSince && len(fields) > 1 {
			return undecidedf(msg.GitStepStartLate, gc.Repo, short(fields[1]))
		}
		return err
	}
	switch {
	case start == HeadNotBegun:
		return failf(msg.GitStepNotBegun, gc.Repo)
	case len(fields) == 0 || (len(fields) == 1 && fields[0] == HeadNone):
		n, err := countCommits(ctx, repo)
		if err != nil {
			return err
		}
		if !inRange(n, gc.Commits) {
			return failf(msg.GitCommitsSince, rangeText(gc.Commits), gc.Repo, HeadNone, n)
		}
		return nil
	}
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return failf(msg.GitStepHeadGone, short(fields[0]), gc.Repo)
	}
	if err != nil {
		return fmt.Errorf("reading HEAD: %w", err)
	}
	mine, err := ancestors(ctx, repo, head.Hash())
	if err != nil {
		return err
	}
	// Only commits in HEAD's history are read further: looking for one
	// the repository lacks would read where else it might be.
	if h := fields[0]; h != HeadNone {
		line, err := firstParents(ctx, repo, head.Hash())
		if err != nil {
			return err
		}
		if !line[plumbing.NewHash(h)] {
			return failf(msg.GitStepHeadGone, short(h), gc.Repo)
		}
	}
	tips, err := branchTips(repo)
	if err != nil {
		return err
	}
	old := map[plumbing.Hash]bool{}
	for _, f := range fields {
		if f == HeadNone {
			continue
		}
		h := plumbing.NewHash(f)
		if !mine[h] {
			if !slices.Contains(tips, f) {
				return failf(msg.GitStepHeadGone, short(f), gc.Repo)
			}
			continue
		}
		if old[h] {
			continue
		}
		before, err := ancestors(ctx, repo, h)
		if err != nil {
			return err
		}
		for a := range before {
			old[a] = true
		}
	}
	n := 0
	for h := range mine {
		if !old[h] {
			n++
		}
	}
	if !inRange(n, gc.Commits) {
		return failf(msg.GitCommitsSince, rangeText(gc.Commits), gc.Repo, short(fields[0]), n)
	}
	return nil
}

// short is a commit hash as git shows it abbreviated.
func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

// firstParents are the commits on h's first-parent line, h included.
func firstParents(ctx context.Context, repo *git.Repository, h plumbing.Hash) (map[plumbing.Hash]bool, error) {
	out := map[plumbing.Hash]bool{}
	for {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[h] = true
		if len(out) > maxCommits {
			return nil, failf(msg.GitHistoryTooLong, maxCommits)
		}
		c, err := repo.CommitObject(h)
		if err != nil {
			return nil, fmt.Errorf("reading commit %s: %w", h, err)
		}
		if len(c.ParentHashes) == 0 {
			return out, nil
		}
		h = c.ParentHashes[0]
	}
}

// ancestors are the commits reachable from the commit h through any
// parent, h included. At most maxCommits are read.
func ancestors(ctx context.Context, repo *git.Repository, h plumbing.Hash) (map[plumbing.Hash]bool, error) {
	iter, err := repo.Log(&git.LogOptions{From: h})
	if err != nil {
		return nil, fmt.Errorf("walking history: %w", err)
	}
	out := map[plumbing.Hash]bool{}
	err = iter.ForEach(func(c *object.Commit) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		out[c.Hash] = true
		if len(out) > maxCommits {
			return failf(msg.GitHistoryTooLong, maxCommits)
		}
		return nil
	})
	var f *failure
	if errors.As(err, &f) {
		return nil, f
	}
	if err != nil && !errors.Is(err, storer.ErrStop) {
		return nil, fmt.Errorf("walking history: %w", err)
	}
	return out, nil
}
