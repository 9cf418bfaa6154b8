package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/grading/report"
)

type classGradeOptions struct {
	format string
	output string
}

func newClassGradeCommand(g *globals) *cobra.Command {
	var o classGradeOptions
	cmd := &cobra.Command{
		Use:   "grade",
		Short: "Grade every learner in one report",
		Long: "Runs every step's checks of every learner's lab, in parallel, records each grade in the learner's\n" +
			"history under the lab's state directory (class/LEARNER) and writes one report: a table, JSON (each\n" +
			"learner's report is `labctl grade -o json`'s) or JUnit XML (one testsuite per learner).\n" +
			"Exit status: 0 when every learner passes, 1 when one fails, 2 when one could not be graded.",
		Example: "  labctl class grade\n  labctl class grade -o json\n  labctl class grade -o junit --output-file class.xml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			deprecatedFormat(cmd, g.streams.Err)
			return runClassGrade(cmd.Context(), g, o)
		},
	}
	addReportFlags(cmd, &o.format, &o.output)
	return cmd
}

func runClassGrade(ctx context.Context, g *globals, o classGradeOptions) error {
	f, err := report.ParseFormat(o.format)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	cs, err := g.openClass(ctx)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	defer cs.Close()
	rep, err := cs.room.Grade(ctx)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	if o.output == "" {
		if err := report.WriteClass(g.streams.Out, rep, f); err != nil {
			return &ExitError{Code: exitError, Err: err}
		}
		return verdictError(rep.Verdict(), nil)
	}
	if err := report.WriteClassFile(o.output, rep, f); err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	fmt.Fprintf(g.statusOut(), cs.st.catalog.ReportWritten+"\n", o.output)
	if f != report.Text {
		fmt.Fprintln(g.statusOut(), rep.Total())
	}
	return verdictError(rep.Verdict(), nil)
}
