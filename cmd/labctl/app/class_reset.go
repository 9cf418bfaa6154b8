package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

func newClassResetCommand(g *globals) *cobra.Command {
	var o resetOptions
	cmd := &cobra.Command{
		Use:   "reset LEARNER",
		Short: "Start a learner's lab over (their /root is saved first)",
		Long: "Resets the learner's lab as `labctl reset` does: their /root is saved as a tar under the lab's state\n" +
			"directory (class/LEARNER/backups), the sandbox and the lab's namespaces are recreated, the setup runs\n" +
			"again and their progress starts over. --hard recreates the learner's control plane too.",
		Example: "  labctl class reset learner-3\n  labctl class reset learner-3 --hard\n  labctl class reset learner-3 --to deploy-app",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClassReset(cmd.Context(), g, args[0], o)
		},
	}
	addResetFlags(g, cmd, &o)
	return cmd
}

func runClassReset(ctx context.Context, g *globals, learner string, o resetOptions) error {
	st, err := g.loadResetState(o)
	if err != nil {
		return err
	}
	err = g.onLearner(ctx, st, learner, func(st *labState, env liveLab) error {
		return resetOn(ctx, g, st, env, o, g.statusLogger())
	})
	if err == nil && o.hard {
		// The learner's namespace is new, and its invite identity with it.
		fmt.Fprintf(g.statusOut(), "%s's invite no longer opens the sandbox: send a new one (%s invite %s --force)\n",
			learner, classCommandLine(g), learner)
	}
	return err
}
