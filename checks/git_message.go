package checks

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// checkMessages asserts on the messages of the commits a MessageAssert
// selects. Commits are taken in the order a walk from HEAD reaches them
// (first parents first): "last" is HEAD's (or the newest touching the
// path), "first" the last one reached, the oldest.
func checkMessages(ctx context.Context, repo *git.Repository, shown string, m *lab.MessageAssert) error {
	var re *regexp.Regexp
	if m.Matches != "" {
		var err error
		if re, err = regexp.Compile(m.Matches); err != nil {
			return fmt.Errorf("invalid message expression %q: %w", m.Matches, err)
		}
	}
	which := m.Which
	if which == "" {
		which = "last"
	}
	switch which {
	case "last", "first", "any", "all":
	default:
		return fmt.Errorf("unknown message selection %q: use last, first, any or all", m.Which)
	}
	commits, err := selectCommits(ctx, repo, shown, m.Touching)
	if err != nil {
		return err
	}
	scope := msg.T(msg.ScopeIn, shown)
	if m.Touching != "" {
		scope = msg.T(msg.ScopeTouching, m.Touching, shown)
	}
	if len(commits) == 0 {
		return failf(msg.MsgNoCommits, scope)
	}
	// problem says what is wrong with c's message; nil when nothing is.
	problem := func(c *object.Commit) *msg.Text {
		text := strings.TrimSpace(c.Message)
		if n := utf8.RuneCountInString(text); n < m.MinLength {
			p := msg.T(msg.ProblemShort, m.MinLength, n, quoteShort(text))
			return &p
		}
		if re != nil && !re.MatchString(c.Message) {
			p := msg.T(msg.ProblemMatch, m.Matches, quoteShort(text))
			return &p
		}
		return nil
	}
	switch which {
	case "last", "first":
		c := commits[0]
		if which == "first" {
			c = commits[len(commits)-1]
		}
		word := msg.T(msg.WhichLast)
		if which == "first" {
			word = msg.T(msg.WhichFirst)
		}
		if p := problem(c); p != nil {
			return failf(msg.MsgOne, word, scope, c.Hash.String()[:7], *p)
		}
	case "all":
		for _, c := range commits {
			if p := problem(c); p != nil {
				return failf(msg.MsgAll, scope, *p, c.Hash.String()[:7])
			}
		}
	case "any":
		for _, c := range commits {
			if problem(c) == nil {
				return nil
			}
		}
		return failf(msg.MsgAny,
			scope, describeMessageAssert(m), len(commits), *problem(commits[0]))
	}
	return nil
}

func describeMessageAssert(m *lab.MessageAssert) msg.Text {
	switch {
	case m.Matches != "" && m.MinLength > 0:
		return msg.T(msg.DescAnd, msg.T(msg.DescMatch, m.Matches), msg.T(msg.DescMinLength, m.MinLength))
	case m.Matches != "":
		return msg.T(msg.DescMatch, m.Matches)
	case m.MinLength > 0:
		return msg.T(msg.DescMinLength, m.MinLength)
	}
	return msg.T(msg.DescExist)
}

// selectCommits lists the commits reachable from HEAD in walk order. With
// touching set it lists, newest first, the commits that changed that path
// the way `git log -- PATH` finds them (git's default history
// simplification): a merge whose path is the same as one parent's did not
// change it, and the walk follows that parent only, so a change made on a
// branch and merged with --no-ff is found on the branch, and a merge that
// resolved the path differently from every parent is found itself.
func selectCommits(ctx context.Context, repo *git.Repository, shown, touching string) ([]*object.Commit, error) {
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading HEAD of %s: %w", shown, err)
	}
	touching = strings.Trim(touching, "/")
	if touching != "" {
		out, err := commitsTouching(ctx, repo, head.Hash(), touching, shown)
		var f *failure
		if err != nil && !errors.As(err, &f) {
			err = fmt.Errorf("walking the history of %s: %w", shown, err)
		}
		return out, err
	}
	iter, err := repo.Log(&git.LogOptions{From: head.Hash()})
	if err != nil {
		return nil, fmt.Errorf("walking the history of %s: %w", shown, err)
	}
	var out []*object.Commit
	walked := 0
	err = iter.ForEach(func(c *object.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if walked++; walked > maxCommits {
			return failf(msg.GitHistoryOfTooBig, shown, maxCommits)
		}
		out = append(out, c)
		return nil
	})
	var f *failure
	if errors.As(err, &f) {
		return nil, f
	}
	if err != nil {
		return nil, fmt.Errorf("walking the history of %s: %w", shown, err)
	}
	return out, nil
}

// commitsTouching walks from head, newest commit (by committer time)
// first, and lists the commits that changed p, simplifying the history as
// git log does for a path.
func commitsTouching(ctx context.Context, repo *git.Repository, head plumbing.Hash, p, shown string) ([]*object.Commit, error) {
	start, err := repo.CommitObject(head)
	if err != nil {
		return nil, err
	}
	queue := []*object.Commit{start}
	seen := map[plumbing.Hash]bool{head: true}
	push := func(c *object.Commit) {
		if seen[c.Hash] {
			return
		}
		seen[c.Hash] = true
		i, _ := slices.BinarySearchFunc(queue, c, func(a, b *object.Commit) int {
			return b.Committer.When.Compare(a.Committer.When) // newest first
		})
		queue = slices.Insert(queue, i, c)
	}
	var out []*object.Commit
	for walked := 0; len(queue) > 0; walked++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if walked >= maxCommits {
			return nil, failf(msg.GitHistoryOfTooBig, shown, maxCommits)
		}
		c := queue[0]
		queue = queue[1:]
		mine, err := entryHash(c, p)
		if err != nil {
			return nil, err
		}
		var parents []*object.Commit
		if err := c.Parents().ForEach(func(parent *object.Commit) error {
			parents = append(parents, parent)
			return nil
		}); err != nil {
			return nil, err
		}
		if len(parents) == 0 {
			if !mine.IsZero() {
				out = append(out, c)
			}
			continue
		}
		var same *object.Commit
		for _, parent := range parents {
			theirs, err := entryHash(parent, p)
			if err != nil {
				return nil, err
			}
			if theirs == mine {
				same = parent
				break
			}
		}
		if same != nil {
			push(same)
			continue
		}
		out = append(out, c)
		for _, parent := range parents {
			push(parent)
		}
	}
	return out, nil
}

// entryHash is the hash of the tree entry at p in c, zero when absent.
func entryHash(c *object.Commit, p string) (plumbing.Hash, error) {
	tree, err := c.Tree()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	e, err := tree.FindEntry(p)
	if err != nil {
		return plumbing.ZeroHash, nil
	}
	return e.Hash, nil
}
