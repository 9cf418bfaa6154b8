package app

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/usecase/importer"
)

// testDrafts writes the checks drafted by the first run of `labctl test
// --draft` into the lab file and tests the lab again with --mutate on the
// environment that run kept, reset to the lab's start; it is removed at
// the end unless --keep.
func testDrafts(ctx context.Context, g *globals, o testOptions, drafts map[string][]importer.DraftCheck) error {
	_, _, source, _, err := g.loadLabAsWritten()
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	keep := o.keep
	// clean removes the environment the first run kept, unless --keep.
	clean := func(err error) error {
		if keep {
			return err
		}
		c := o
		c.draft, c.drafted, c.reuse, c.mutate, c.clean = false, false, false, false, true
		if cerr := runTestOnce(context.WithoutCancel(ctx), g, c, nil); cerr != nil && err == nil {
			err = cerr
		}
		return err
	}
	var ids, none []string
	total := 0
	for _, id := range slices.Sorted(maps.Keys(drafts)) {
		if len(drafts[id]) == 0 {
			none = append(none, id)
			continue
		}
		ids = append(ids, id)
		total += len(drafts[id])
	}
	w := g.streams.Out
	if len(none) > 0 {
		fmt.Fprintf(w, "No check drafted for step %s: its solve created, changed and deleted none of the lab's objects; write its checks by hand.\n", textsafe.EscapeLine(strings.Join(none, ", ")))
	}
	if len(ids) == 0 {
		return clean(&ExitError{Code: exitFailed, Err: fmt.Errorf("no check was drafted: no step with placeholder checks has a solve that made, changed or deleted the lab's objects")})
	}
	if err := importer.WriteDrafts(source, drafts); err != nil {
		return clean(&ExitError{Code: exitError, Err: err})
	}
	fmt.Fprintf(w, "✓ Drafted %s for step %s into %s (metadata.draft: true; read them). Testing them with --mutate:\n",
		count(total, "check"), textsafe.EscapeLine(strings.Join(ids, ", ")), textsafe.EscapeLine(source))
	o.draft, o.drafted, o.mutate, o.reuse, o.keep = false, !keep, true, true, keep
	return clean(runTestOnce(ctx, g, o, nil))
}
