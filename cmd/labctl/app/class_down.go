package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/usecase/classroom"
)

func newClassDownCommand(g *globals) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "down [LEARNER...]",
		Short: "Remove learners' labs from the class cluster",
		Long: "Removes the named learners' labs (their namespaces, with their /root), or every learner's with --all.\n" +
			"What labctl recorded of them (progress, grades, backups) stays in the lab's state directory.",
		Example: "  labctl class down learner-3 learner-4\n  labctl class down --all",
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case all && len(args) > 0:
				return &usageError{cmd: cmd, err: errors.New("name learners or give --all, not both")}
			case !all && len(args) == 0:
				return &usageError{cmd: cmd, err: errors.New("name the learners to remove, or give --all to remove every learner")}
			}
			for _, l := range args {
				if err := learnerArg(g, l); err != nil {
					return err
				}
			}
			return runClassDown(cmd.Context(), g, args)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "remove every learner of the class")
	return cmd
}

func runClassDown(ctx context.Context, g *globals, learners []string) error {
	cs, err := g.openClass(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	if len(learners) == 0 {
		infos, err := cs.class.Learners(ctx)
		if err != nil {
			return err
		}
		for _, l := range infos {
			learners = append(learners, l.Name)
		}
		if len(learners) == 0 {
			if !g.quiet() {
				fmt.Fprintf(g.streams.Err, "The class has no learner on this cluster (prefix %s): nothing to remove.\n", cs.prefix)
			}
			return nil
		}
	}
	status := g.statusLogger()
	status.Start(fmt.Sprintf("Removing %d learner(s) of lab %s", len(learners), cs.st.lab.Metadata.Name))
	run := classroom.DownAll(ctx, cs.class, learners, func(r classroom.Outcome) {
		if r.Err != nil {
			status.Printf("✗ %s: %v", r.Learner, r.Err)
			return
		}
		status.Printf("✓ %s removed", r.Learner)
	})
	failed := run.Failed
	status.End(len(failed) == 0)
	if ctx.Err() != nil {
		return &ExitError{Code: exitInterrupted, Err: errors.New("class down was interrupted: run it again to remove the rest")}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d learner(s) were not removed: %s\nretry with: %s down %s",
			len(failed), len(learners), strings.Join(failed, ", "), classCommandLine(g), strings.Join(failed, " "))
	}
	return nil
}
