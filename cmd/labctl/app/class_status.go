package app

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/usecase/classroom"
)

func newClassStatusCommand(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each learner's lab: ready or not, the step they are on, their score",
		Long: "Lists the class's learners as the cluster reports them. For each learner whose lab is ready, one round\n" +
			"of every step's checks gives the step they are on and their score (nothing is recorded); for the others\n" +
			"it says what is wrong. Status runs no probe, nor the checks that judge one (a probe changes the learner's\n" +
			"cluster while they work): the score is of the checks it runs; `labctl class grade` runs them all.\n" +
			"Exit status: 0 when every learner is ready, 3 when one is not or the class has no learner, 2 when the\n" +
			"cluster cannot be read.",
		Example: "  labctl class status\n  labctl class status -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runClassStatus(cmd.Context(), g, format)
		},
	}
	addOutputFlag(cmd, &format, textFormat, jsonFormat)
	return cmd
}

func runClassStatus(ctx context.Context, g *globals, format string) error {
	cs, err := g.openClass(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	s, err := cs.room.Status(ctx)
	if err != nil {
		return err
	}
	if format == jsonFormat {
		err = writeJSON(g.streams.Out, s)
	} else {
		err = classroom.WriteStatus(g.streams.Out, s)
	}
	if err != nil {
		return err
	}
	switch {
	case len(s.Learners) == 0:
		return &ExitError{Code: exitNotUp, Err: &classroom.EmptyError{Prefix: cs.prefix}}
	case !s.Ready():
		return &ExitError{Code: exitNotUp}
	}
	return nil
}
