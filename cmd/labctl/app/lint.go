package app

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/lab"
)

func newLintCommand(g *globals) *cobra.Command {
	var strict bool
	cmd := &cobra.Command{
		Use:   "lint [FILE]",
		Short: "Check a lab file and report every problem with its line",
		Long: "lint loads a lab file strictly (FILE, else --lab, else ./lab.yaml, else the built-in lab),\n" +
			"prints every problem as file:line:column: field: message on stderr, a summary on stdout,\n" +
			"and exits 1 when there are problems. Warnings (file:line:column: warning: ...) do not fail it unless --strict.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			}
			return runLint(g, file, strict)
		},
	}
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 on warnings too")
	return cmd
}

func runLint(g *globals, file string, strict bool) error {
	var (
		l      *lab.Lab
		source = file
		err    error
	)
	if file != "" {
		l, err = lab.Load(file)
	} else {
		l, _, source, err = g.loadLab()
	}
	var problems lab.Errors
	if errors.As(err, &problems) {
		for _, p := range problems {
			fmt.Fprintln(g.streams.Err, p.Error())
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("%s: %s", source, count(len(problems), "problem"))}
	}
	if err != nil {
		return err
	}
	warnings := l.Lint()
	for _, w := range warnings {
		fmt.Fprintln(g.streams.Err, w.String())
	}
	if strict && len(warnings) > 0 {
		return &ExitError{Code: 1, Err: fmt.Errorf("%s: %s (--strict)", source, count(len(warnings), "warning"))}
	}
	checks := 0
	for _, s := range l.Steps {
		checks += len(s.Checks)
	}
	_, err = fmt.Fprintf(g.streams.Out, "%s: OK (%s, %s)\n", source, count(len(l.Steps), "step"), count(checks, "check"))
	return err
}

// count writes n and noun, plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
