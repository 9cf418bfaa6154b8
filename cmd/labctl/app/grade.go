package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/grading/report"
)

type gradeOptions struct {
	format string
	output string
}

func newGradeCommand(g *globals) *cobra.Command {
	var o gradeOptions
	cmd := &cobra.Command{
		Use:   "grade",
		Short: "Run every step's checks and report a score",
		Long: "Runs the checks of every step in one round in the lab's grader, a container beside the sandbox and out\n" +
			"of the learner's reach, and reports each result and the score as a text table, JSON or JUnit XML\n" +
			"(docs/grade-report.md describes them).\n" +
			"Exit status: 0 when every required check passes, 1 when one fails, 2 when one could not run.",
		Example: "  labctl grade\n  labctl grade -o json\n  labctl grade -o junit --output-file report.xml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			deprecatedFormat(cmd, g.streams.Err)
			return runGrade(cmd.Context(), g, o)
		},
	}
	addReportFlags(cmd, &o.format, &o.output)
	return cmd
}

func runGrade(ctx context.Context, g *globals, o gradeOptions) error {
	f, err := report.ParseFormat(o.format)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	s, done, err := g.grader(ctx)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	defer done()
	r, v, err := s.Grade(ctx)
	if err != nil {
		return verdictError(v, err)
	}
	if o.output == "" {
		if err := report.Write(g.streams.Out, r, f, s.Catalog); err != nil {
			return &ExitError{Code: exitError, Err: err}
		}
		return verdictError(v, nil)
	}
	if err := report.WriteFile(o.output, r, f, s.Catalog); err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	fmt.Fprintf(s.Err, s.Catalog.ReportWritten+"\n", o.output)
	fmt.Fprintf(s.Err, s.Catalog.Score+"\n", r.Score, r.MaxScore)
	return verdictError(v, nil)
}
