package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/provision/kind"
)

// classNote says that stop and start are for a lab on this machine.
const classNote = "A lab in a class (`labctl class`, `labctl shell --invite`) runs on the class's cluster: it is not\n" +
	"stopped or started this way."

func newStopCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "stop",
		Short: "Stop the lab's cluster and sandbox, keeping them (resume with `labctl start`)",
		Long: "Stops the lab's containers (the kind nodes, the sandbox and the grader) without removing them:\n" +
			"the objects you made in the cluster, /root and your progress are kept, and `labctl start` resumes\n" +
			"the lab as you left it. A stopped lab uses no CPU or memory; `labctl down` still removes it.\n" + classNote,
		Example: "  labctl stop\n  labctl start",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStop(cmd.Context(), g)
		},
	}
}

func runStop(ctx context.Context, g *globals) error {
	l, _, _, _, err := g.loadLab()
	if err != nil {
		return err
	}
	catalog := labCatalog(l)
	if err := g.env.Stop(ctx, l, kind.Options{Lab: l, Catalog: catalog, Status: g.statusLogger()}); err != nil {
		return err
	}
	if !g.quiet() {
		fmt.Fprintf(g.streams.Err, "\n%s\n", stoppedMessage(l.Metadata.Name))
	}
	return nil
}

// stoppedMessage is what stop says when it is done.
func stoppedMessage(name string) string {
	return fmt.Sprintf("Lab %q is stopped: its cluster with what you made in it, /root and your progress are kept.\n"+
		"Run `labctl start` to resume it (`labctl down` removes it).", name)
}

func newStartCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "start",
		Short: "Start a lab `labctl stop` stopped, as it was",
		Long: "Starts the containers `labctl stop` stopped, waits until the API server answers, the nodes are\n" +
			"Ready and the lab's namespaces are served, renews the learner's and the grader's credentials if\n" +
			"they expired, and leaves you where you were: continue with `labctl shell`. `labctl up` on a stopped\n" +
			"lab refuses and names this command, as up would make a cluster that does not answer afresh.\n" + classNote,
		Example: "  labctl start",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStart(cmd, g)
		},
	}
}

func runStart(cmd *cobra.Command, g *globals) error {
	l, _, _, labDir, err := g.loadLab()
	if err != nil {
		return err
	}
	catalog := labCatalog(l)
	env, err := g.env.Start(cmd.Context(), kind.Options{
		Lab:           l,
		Catalog:       catalog,
		LabDir:        labDir,
		Status:        g.statusLogger(),
		Log:           g.detail(),
		CheckerBinary: g.cfg.GetString("checker-binary"),
	})
	if errors.Is(err, context.Canceled) {
		return &ExitError{Code: exitInterrupted, Err: errors.New("start was interrupted: run `labctl start` again to finish")}
	}
	if err != nil {
		return err
	}
	defer env.Close()
	if !g.quiet() {
		fmt.Fprintf(g.streams.Err, "\n%s\n", fmt.Sprintf(catalog.UpDone, l.Metadata.Name))
	}
	return nil
}
