package checks

import (
	"context"
	"fmt"
	"strings"

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
		if f, ok := err.(*failure); ok {
			return nil, failf("reference %s: %s", s, f.msg)
		}
		return nil, fmt.Errorf("reference %s: %w", s, err)
	}
	return got, nil
}

func readRef(ctx context.Context, env Env, r lab.Ref) (any, error) {
	hasField := len(r.Field) > 0
	var docs []any
	var where string
	switch r.Source {
	case lab.RefGit:
		repo, err := openRepo(env, r.Repo)
		if err != nil {
			return nil, err
		}
		commit, err := resolveCommit(repo, r.Repo, r.Rev)
		if err != nil {
			return nil, err
		}
		if r.File == "" {
			return commit.Hash.String(), nil
		}
		data, err := readCommitFile(commit, r.File, r.Rev)
		if err != nil {
			return nil, err
		}
		if !hasField {
			return strings.TrimSpace(string(data)), nil
		}
		format, err := formatOf(r.File, "")
		if err != nil {
			return nil, err
		}
		where = fmt.Sprintf("%s at %s", r.File, r.Rev)
		if docs, err = decodeDocuments(data, format, where); err != nil {
			return nil, err
		}
	case lab.RefFile:
		_, host, err := resolveInRoot(env.Root, r.Path)
		if err != nil {
			return nil, err
		}
		data, err := readRegular(host, r.Path)
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
			return nil, failf("%s not found in the cluster", describeObject(r.APIVersion, r.Kind, r.Namespace, r.Name))
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
		return nil, failf("%s not found in %s", r.Field, where)
	case 1:
		return sel[0].value, nil
	}
	list := make([]any, len(sel))
	for i, s := range sel {
		list[i] = s.value
	}
	return list, nil
}
