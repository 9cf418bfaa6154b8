package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// resolveRef reads the value a reference names, normalized. What the
// learner controls (a missing file, repository, commit, object or field; a
// file that does not parse) makes a failure naming the reference; a
// reference that does not parse, an unreachable cluster or an unreadable
// repository is an error. A field path selecting several values (through
// [*]) gives the list of them. Nothing is cached: every call reads afresh.
func resolveRef(ctx context.Context, env Env, s string) (any, error) {
	r, err := lab.ParseRef(s)
	if err != nil {
		return nil, err
	}
	got, err := readRef(ctx, env, r)
	if err != nil {
		var f *failure
		if errors.As(err, &f) {
			return nil, failf(msg.RefFailed, s, f.text)
		}
		return nil, fmt.Errorf("reference %s: %w", s, err)
	}
	return got, nil
}

func readRef(ctx context.Context, env Env, r lab.Ref) (any, error) {
	hasField := len(r.Field) > 0
	var docs []any
	var where any
	switch r.Source {
	case lab.RefGit:
		repo, err := openRepo(env, r.Repo)
		if err != nil {
			return nil, err
		}
		value, gitDocs, gitWhere, err := readGitRef(repo.Repository, r)
		if err != nil {
			return nil, repo.explain(err)
		}
		if !hasField {
			return value, nil
		}
		docs, where = gitDocs, gitWhere
	case lab.RefFile:
		data, err := readRefFile(env, r.Path)
		if err != nil {
			return nil, err
		}
		if !hasField {
			return strings.TrimSpace(string(data)), nil
		}
		format, err := formatOf(r.Path, "")
		if err != nil {
			return nil, err
		}
		where = r.Path
		if docs, err = decodeDocuments(data, format, r.Path); err != nil {
			return nil, err
		}
	case lab.RefKube:
		obj, err := getObject(ctx, env, r.APIVersion, r.Kind, r.Namespace, r.Name)
		if err != nil {
			return nil, err
		}
		if obj == nil {
			return nil, failf(msg.RefObjectNotFound, describeObject(r.APIVersion, r.Kind, r.Namespace, r.Name))
		}
		where = describeObject(r.APIVersion, r.Kind, r.Namespace, r.Name)
		docs = []any{obj}
	default:
		return nil, fmt.Errorf("unknown source %q", r.Source)
	}
	if !hasField {
		return docs[0], nil
	}
	sel := selectAll(r.Field, docs)
	switch len(sel) {
	case 0:
		return nil, failf(msg.RefFieldNotFound, r.Field, where)
	case 1:
		return sel[0].value, nil
	}
	list := make([]any, len(sel))
	for i, s := range sel {
		list[i] = s.value
	}
	return list, nil
}

// readGitRef reads what a git reference names: the commit's hash, a
// committed file's trimmed content, or (with a field) its documents.
func readGitRef(repo *git.Repository, r lab.Ref) (value any, docs []any, where msg.Text, err error) {
	commit, err := resolveCommit(repo, r.Repo, r.Rev)
	if err != nil {
		return nil, nil, msg.Text{}, err
	}
	if r.File == "" {
		return commit.Hash.String(), nil, msg.Text{}, nil
	}
	data, err := readCommitFile(commit, r.File, r.Rev)
	if err != nil {
		return nil, nil, msg.Text{}, err
	}
	if len(r.Field) == 0 {
		return strings.TrimSpace(string(data)), nil, msg.Text{}, nil
	}
	format, err := formatOf(r.File, "")
	if err != nil {
		return nil, nil, msg.Text{}, err
	}
	where = msg.T(msg.FileAtRev, r.File, r.Rev)
	if docs, err = decodeDocuments(data, format, where); err != nil {
		return nil, nil, msg.Text{}, err
	}
	return nil, docs, where, nil
}

// readRefFile reads the file of a file: reference: the one the host read
// from the sandbox when the grader does not mount it (Env.Sandbox), else
// the learner's file under Env.Root.
func readRefFile(env Env, p string) ([]byte, error) {
	if sf, ok := env.Sandbox[p]; ok {
		return sandboxContent(sf, p)
	}
	_, host, err := resolveLearnerPath(env, p)
	if err != nil {
		return nil, err
	}
	return readRegular(host, p)
}
