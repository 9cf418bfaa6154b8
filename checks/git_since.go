package checks

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// HeadNone is the step-start commit of a repository that had no commit, or
// did not exist, when the step began: every commit it has is new.
const HeadNone = "none"

// ReportHead is the check by which the host notes where the repository at
// repo is: it passes, saying HEAD's commit hash, or HeadNone.
func ReportHead(repo string) lab.Check {
	return lab.Check{Name: "head", Git: &lab.GitCheck{Repo: repo, ReportHead: true}}
}

// reportHead is ReportHead's answer for an opened repository.
func reportHead(repo *git.Repository) error {
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return &reported{HeadNone}
	}
	if err != nil {
		return fmt.Errorf("reading HEAD: %w", err)
	}
	return &reported{head.Hash().String()}
}

// checkCommitsSince bounds the commits made since the step began at start
// (Request.Heads): those reachable from HEAD and not from start, which
// must itself be in HEAD's history. A start the host did not see (""),
// which only a step the learner never began through labctl has (one
// replayed by reset --to), counts every commit, as HeadNone does.
func checkCommitsSince(ctx context.Context, repo *git.Repository, gc *lab.GitCheck, start string) error {
	switch start {
	case "", HeadNone:
		n, err := countCommits(ctx, repo)
		if err != nil {
			return err
		}
		if !inRange(n, gc.Commits) {
			return failf(msg.GitCommitsSince, rangeText(gc.Commits), gc.Repo, HeadNone, n)
		}
		return nil
	}
	from := plumbing.NewHash(start)
	short := start
	if len(short) > 7 {
		short = short[:7]
	}
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return failf(msg.GitStepHeadGone, short, gc.Repo)
	}
	if err != nil {
		return fmt.Errorf("reading HEAD: %w", err)
	}
	mine, err := ancestors(ctx, repo, head.Hash())
	if err != nil {
		return err
	}
	// Only a start in HEAD's history is read: looking for a commit the
	// repository lacks would read where else it might be.
	if !mine[from] {
		return failf(msg.GitStepHeadGone, short, gc.Repo)
	}
	old, err := ancestors(ctx, repo, from)
	if err != nil {
		return err
	}
	n := 0
	for h := range mine {
		if !old[h] {
			n++
		}
	}
	if !inRange(n, gc.Commits) {
		return failf(msg.GitCommitsSince, rangeText(gc.Commits), gc.Repo, short, n)
	}
	return nil
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
