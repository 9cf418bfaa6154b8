package checks

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// operand is a comparison value of an Assert, resolved and normalized, with
// how to show it in a message.
type operand struct {
	value   any
	shown   any
	fromRef bool
}

// resolveOperand resolves v when it is a reference and normalizes it.
func resolveOperand(ctx context.Context, env Env, v *lab.Value) (operand, error) {
	if !v.IsRef() {
		n := normalize(v.Literal)
		return operand{value: n, shown: render(n)}, nil
	}
	got, err := resolveRef(ctx, env, v.Ref)
	if err != nil {
		return operand{}, err
	}
	return operand{value: got, shown: msg.T(msg.FromRef, render(got), v.Ref), fromRef: true}, nil
}

// checkFieldAssert applies fa to docs; where says where the documents came
// from ("in /root/a.yaml"), for messages.
func checkFieldAssert(ctx context.Context, env Env, fa *lab.FieldAssert, docs []any, where any) error {
	p, err := lab.ParsePath(fa.Path)
	if err != nil {
		return err
	}
	return checkAssert(ctx, env, &fa.Assert, fa.Path, selectAll(p, docs), where)
}

// checkAssert applies a to every selected value. Every set comparison must
// hold for every value (with a.Any, for one of them); the first that does
// not is the failure.
func checkAssert(ctx context.Context, env Env, a *lab.Assert, path string, sel []selected, where any) error {
	if a.Exists != nil && !*a.Exists {
		if len(sel) > 0 {
			return failf(msg.AssertAbsent, sel[0].path, where, render(sel[0].value))
		}
		return nil
	}
	if len(sel) == 0 {
		return failf(msg.AssertNotFound, path, where)
	}
	ops := map[string]*operand{}
	for name, v := range map[string]*lab.Value{
		"equals": a.Equals, "notEquals": a.NotEquals, "gte": a.GTE, "lte": a.LTE, "subsetOf": a.SubsetOf,
		"storedAs": a.StoredAs,
	} {
		if v == nil {
			continue
		}
		op, err := resolveOperand(ctx, env, v)
		if err != nil {
			return err
		}
		ops[name] = &op
	}
	var matches, notMatches *regexp.Regexp
	var err error
	if a.Matches != "" {
		if matches, err = regexp.Compile(a.Matches); err != nil {
			return fmt.Errorf("invalid matches expression %q: %w", a.Matches, err)
		}
	}
	if a.NotMatches != "" {
		if notMatches, err = regexp.Compile(a.NotMatches); err != nil {
			return fmt.Errorf("invalid notMatches expression %q: %w", a.NotMatches, err)
		}
	}
	switch a.Type {
	case "", "string", "number", "integer", "boolean", "object", "array", "null":
	default:
		return fmt.Errorf("unknown type %q: use string, number, integer, boolean, object, array or null", a.Type)
	}
	var first error
	for _, s := range sel {
		err := assertOne(a, ops, matches, notMatches, s, where)
		switch {
		case err == nil && a.Any:
			return nil
		case err != nil && !a.Any:
			return err
		case err != nil && first == nil:
			first = err
		}
	}
	if first != nil && len(sel) > 1 {
		var f *failure
		if errors.As(first, &f) {
			return failf(msg.AssertNone, len(sel), path, where, f.text)
		}
	}
	return first
}

func assertOne(a *lab.Assert, ops map[string]*operand, matches, notMatches *regexp.Regexp, s selected, where any) error {
	got := render(s.value)
	if a.Type != "" && !hasType(s.value, a.Type) {
		return failf(msg.AssertType, s.path, typeWord(a.Type), where, typeText(s.value), got)
	}
	if op := ops["equals"]; op != nil && !equal(op.value, s.value) {
		return failf(msg.AssertEquals, s.path, op.shown, where, got)
	}
	if op := ops["storedAs"]; op != nil {
		if at, ok := storedAs(s.value, op.value, s.path); !ok {
			return failf(msg.AssertStoredAs, s.path, op.shown, where, got, at)
		}
	}
	if op := ops["notEquals"]; op != nil && equal(op.value, s.value) {
		return failf(msg.AssertNotEquals, s.path, op.shown, where, got)
	}
	if matches != nil {
		str, ok := s.value.(string)
		if !ok {
			return failf(msg.AssertStringMatch, s.path, matches, where, typeText(s.value), got)
		}
		if !matches.MatchString(str) {
			return failf(msg.AssertMatch, s.path, matches, where, got)
		}
	}
	if notMatches != nil {
		str, ok := s.value.(string)
		if !ok {
			return failf(msg.AssertStringNoMatch, s.path, notMatches, where, typeText(s.value), got)
		}
		if notMatches.MatchString(str) {
			return failf(msg.AssertNoMatch, s.path, notMatches, where, got)
		}
	}
	for _, cmp := range []struct {
		name, sign string
		ok         func(x, y float64) bool
	}{
		{"gte", ">=", func(x, y float64) bool { return x >= y }},
		{"lte", "<=", func(x, y float64) bool { return x <= y }},
	} {
		op := ops[cmp.name]
		if op == nil {
			continue
		}
		bound, ok := asFloat(op.value)
		if !ok && op.fromRef {
			return failf(msg.AssertBoundNumber, cmp.name, op.shown)
		}
		if !ok {
			return fmt.Errorf("%s bound %s is not a number", cmp.name, op.shown)
		}
		x, ok := asFloat(s.value)
		if !ok {
			return failf(msg.AssertCompareType, s.path, cmp.sign, op.shown, where, typeText(s.value), got)
		}
		if !cmp.ok(x, bound) {
			return failf(msg.AssertCompare, s.path, cmp.sign, op.shown, where, got)
		}
	}
	if op := ops["subsetOf"]; op != nil {
		super, ok := op.value.(map[string]any)
		if !ok && op.fromRef {
			return failf(msg.AssertSubsetObject, op.shown)
		}
		if !ok {
			return fmt.Errorf("subsetOf %s is not an object", op.shown)
		}
		sub, ok := s.value.(map[string]any)
		if !ok {
			return failf(msg.AssertSubsetType, s.path, op.shown, where, typeText(s.value), got)
		}
		if key, ok := isSubset(sub, super); !ok {
			return failf(msg.AssertSubset, s.path, op.shown, where, key, render(sub[key]))
		}
	}
	return nil
}
