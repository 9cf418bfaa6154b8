package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/usecase/importer"
)

func newImportCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Turn a lab written for another platform into a labctl lab directory",
		Long: "import reads a lab written for another platform and writes a labctl lab directory: lab.yaml, fixtures/\n" +
			"and TODO.md, the list of what the author must still decide. Nothing of the source runs while it is\n" +
			"read. The lab lints (marked metadata.draft: true while placeholder checks or solves remain); `labctl test`\n" +
			"of it is the author's acceptance gate.",
		Example: "  labctl import killercoda ./my-scenario --out ./labs/my-scenario\n  labctl import instruqt ./my-track",
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newImportKillercodaCommand(g), newImportInstruqtCommand(g))
	return cmd
}

func newImportKillercodaCommand(g *globals) *cobra.Command {
	return newImportSubcommand(g, importer.KillercodaWith, "killercoda", "scenario",
		"Import a Killercoda scenario (index.json, step texts, verify and background scripts, assets)",
		"killercoda imports the Killercoda scenario in DIR as a lab in --out (default ./<DIR's name>, which must\n"+
			"not exist or be empty). Step texts keep their Markdown without Killercoda's {{exec}} and {{copy}} marks;\n"+
			"tip blocks become hints and solution blocks the step's solve (else the commands the learner was to run);\n"+
			"a verify script becomes kube and file checks when each of its lines is `kubectl get`, a jsonpath compared\n"+
			"with a value, or a file test, and otherwise one command check the author must rewrite; pages without a\n"+
			"verify script join the next step that has one; background scripts and assets become setup and fixtures.\n"+
			"The scenario's default namespace becomes the lab's namespace `lab`.",
		"  labctl import killercoda ./scenarios/create-pod --out ./labs/create-pod\n  labctl test --lab ./labs/create-pod")
}

func newImportInstruqtCommand(g *globals) *cobra.Command {
	return newImportSubcommand(g, importer.InstruqtWith, "instruqt", "track",
		"Import an Instruqt track (track.yml, assignments, setup, check and solve scripts)",
		"instruqt imports the Instruqt track in DIR as a lab in --out (default ./<DIR's name>, which must not\n"+
			"exist or be empty). Each challenge (a directory holding assignment.md, in name order, or track.yml's list)\n"+
			"is a page: its notes and assignment the text, its setup-HOST scripts the setup, its solve-HOST scripts\n"+
			"the solve, its check-HOST scripts the checks, mapped as killercoda maps verify scripts (Instruqt's\n"+
			"fail-message is defined for a check run as a command). The track's track_scripts/setup-HOST run first.",
		"  labctl import instruqt ./tracks/kubernetes-basics --out ./labs/kubernetes-basics")
}

// newImportSubcommand is `labctl import PLATFORM DIR [--out DIR]`.
func newImportSubcommand(g *globals, fn func(src, out string, o importer.Options) (*importer.Result, error), platform, what, short, long, example string) *cobra.Command {
	var out string
	var o importer.Options
	cmd := &cobra.Command{
		Use:     platform + " DIR",
		Short:   short,
		Long:    long,
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImport(cmd.Context(), g, fn, args[0], out, o)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the lab `DIR` to write (default ./<the "+what+" directory's name>)")
	cmd.Flags().StringVar(&o.Name, "name", "", "the lab's `NAME` (metadata.name; default the "+what+" directory's name)")
	return cmd
}

// runImport imports src with fn into out and says what came in and what
// is left to the author. An interrupt (ctrl-C, SIGTERM) ends it at once,
// whatever the import is reading.
func runImport(ctx context.Context, g *globals, fn func(src, out string, o importer.Options) (*importer.Result, error), src, out string, o importer.Options) error {
	if out == "" {
		out = filepath.Base(filepath.Clean(src))
	}
	type result struct {
		r   *importer.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := fn(src, out, o)
		done <- result{r, err}
	}()
	var r *importer.Result
	select {
	case res := <-done:
		if res.err != nil {
			return res.err
		}
		r = res.r
	case <-ctx.Done():
		return &ExitError{Code: exitInterrupted, Err: fmt.Errorf("import was interrupted: no lab was written to %s (a .labctl-import-* directory beside it, if any, is a partial one: remove it)", textsafe.EscapeLine(out))}
	}
	w := g.streams.Out
	fmt.Fprintf(w, "✓ Imported %s into %s: %s, %s (%d typed), %d of %d steps with a solve\n",
		textsafe.EscapeLine(src), textsafe.EscapeLine(r.Dir), count(r.Steps, "step"), count(r.Checks, "check"), r.Typed, r.Solved, r.Steps)
	for _, warn := range r.Warnings {
		fmt.Fprintln(g.streams.Err, textsafe.EscapeLine(warn.String()))
	}
	fmt.Fprintf(w, "%s left to decide: %s\n", count(len(r.Todo), "thing"), textsafe.EscapeLine(filepath.Join(r.Dir, "TODO.md")))
	dir := r.Dir
	if !strings.Contains(dir, "/") {
		dir = "./" + dir // --lab reads a bare word as an installed lab's name
	}
	_, err := fmt.Fprintf(w, "Next: labctl test --lab %s\n", textsafe.EscapeLine(dir))
	return err
}
