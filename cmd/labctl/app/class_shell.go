package app

import (
	"context"

	"github.com/spf13/cobra"
)

func newClassShellCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "shell LEARNER",
		Short: "Open a shell in a learner's sandbox, as `labctl shell` does",
		Long: "Opens a login shell in the learner's sandbox on the class cluster. As in `labctl shell`, the current\n" +
			"step's checks run after every command and `lab check|hint|step|why|next|status` work; the learner's\n" +
			"progress is the one `labctl class grade` records (the lab's state directory, class/LEARNER).",
		Example: "  labctl class shell learner-3",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClassShell(cmd.Context(), g, args[0])
		},
	}
}

func runClassShell(ctx context.Context, g *globals, learner string) error {
	in, out, err := g.terminal()
	if err != nil {
		return err
	}
	st, err := g.loadLabState()
	if err != nil {
		return err
	}
	return g.onLearner(ctx, st, learner, func(st *labState, env liveLab) error {
		return shellOn(ctx, g, st, env, env, in, out)
	})
}

// onLearner connects to learner's lab of st's class and calls fn with the
// lab's state as the learner's.
func (g *globals) onLearner(ctx context.Context, st *labState, learner string, fn func(*labState, liveLab) error) error {
	if err := learnerArg(g, learner); err != nil {
		return err
	}
	cs, err := g.openClassOf(ctx, st)
	if err != nil {
		return err
	}
	defer cs.Close()
	env, err := cs.room.Connect(ctx, learner)
	if err != nil {
		return err
	}
	defer env.Close()
	st, err = cs.learnerState(learner)
	if err != nil {
		return err
	}
	return fn(st, env)
}
