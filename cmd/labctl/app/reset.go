package app

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/usecase/reset"
)

type resetOptions struct {
	hard     bool
	to       string
	noBackup bool
}

func newResetCommand(g *globals) *cobra.Command {
	var o resetOptions
	cmd := &cobra.Command{
		Use:   "reset",
		Short: "Start the lab over (your /root is saved first)",
		Long: "Saves your /root as a tar under the state directory, recreates the sandbox and its volume and the\n" +
			"lab's namespaces, runs the setup again and resets your progress. --hard recreates the cluster too;\n" +
			"--to STEP then replays the solve scripts of the steps before STEP and leaves you at STEP. A /root\n" +
			"whose tar is beyond 2 GiB (sparse files at their full size, every link a header) is not saved and\n" +
			"nothing is reset: delete what you do not need, or pass --no-backup to lose it.",
		Example: "  labctl reset\n  labctl reset --to deploy-app\n  labctl reset --hard",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runReset(cmd.Context(), g, o)
		},
	}
	addResetFlags(g, cmd, &o)
	return cmd
}

// addResetFlags gives cmd reset's flags --hard, --to and --no-backup.
func addResetFlags(g *globals, cmd *cobra.Command, o *resetOptions) {
	fl := cmd.Flags()
	fl.BoolVar(&o.hard, "hard", false, "recreate the cluster too")
	fl.StringVar(&o.to, "to", "", "replay the solve scripts of the steps before STEP and start at STEP")
	_ = cmd.RegisterFlagCompletionFunc("to", completeStep(g))
	fl.BoolVar(&o.noBackup, "no-backup", false, "do not save /root first (what it holds is lost)")
}

func runReset(ctx context.Context, g *globals, o resetOptions) error {
	st, err := g.loadResetState(o)
	if err != nil {
		return err
	}
	up := g.upOptions(st)
	env, err := g.env.Connect(ctx, up)
	if err != nil {
		return err
	}
	defer env.Close()
	return resetOn(ctx, g, st, env, o, up.Status)
}

// loadResetState loads the lab's state and checks --to against it.
func (g *globals) loadResetState(o resetOptions) (*labState, error) {
	st, err := g.loadLabState()
	if err != nil {
		return nil, err
	}
	if o.to != "" {
		if _, err := progress.Step(st.lab, o.to); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// resetOn resets the lab env with the progress of st: `labctl reset` and
// `labctl class reset`.
func resetOn(ctx context.Context, g *globals, st *labState, env liveLab, o resetOptions, status reset.Status) error {
	opts := reset.Options{Lab: st.lab, Store: st.store, Hard: o.hard, To: o.to, Status: status, Catalog: st.catalog,
		NoBackup: o.noBackup, ScriptOutput: g.detail(), Situation: st.situation}
	res, err := reset.Run(ctx, env, opts)
	if res != nil && res.Backup != "" {
		fmt.Fprintf(g.streams.Out, st.catalog.BackedUp+"\n", res.Backup)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(g.streams.Out, st.catalog.ResetDone+"\n",
		progress.Index(st.lab, res.Current.ID)+1, len(st.lab.Steps), stepTitle(res.Current.Title, res.Current.ID))
	return nil
}

func stepTitle(title, id string) string {
	if title == "" {
		return id
	}
	return textsafe.EscapeLine(title)
}
