package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/provision/kind"
)

// classClusterOptions are `labctl class cluster create`'s flags.
type classClusterOptions struct {
	name    string
	workers int
}

func newClassClusterCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Make or remove a class cluster on this machine, to try a class",
		Long: "A class cluster is a kind cluster on this machine, made from labctl's node image with what a class\n" +
			"needs: the sandbox image on its nodes, NetworkPolicy enforced, a default StorageClass whose claims get\n" +
			"their directories, and a bound on each Pod's processes. It is for trying a class before a session, or a\n" +
			"small class on one machine; a school's own cluster needs none of it (docs/classroom.md).",
		Example: "  labctl class cluster create\n  labctl class cluster create --name room-2 --workers 2\n  labctl class cluster delete --name room-2",
	}
	cmd.AddCommand(newClassClusterCreateCommand(g), newClassClusterDeleteCommand(g))
	return cmd
}

func newClassClusterCreateCommand(g *globals) *cobra.Command {
	var o classClusterOptions
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Make a kind class cluster from labctl's images",
		Long: "Makes the kind cluster NAME from labctl's node image (no network needed: the images must be on this\n" +
			"machine, see `labctl images build`), loads the sandbox image into its nodes and starts the add-ons a\n" +
			"class needs. It prints the --kubeconfig and --context to give `labctl class up`. A class cluster made\n" +
			"before is completed and reused, so it is safe to run again.",
		Example: "  labctl class cluster create\n  labctl class cluster create --name room-2 --workers 2",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.workers < 0 {
				return &usageError{cmd: cmd, err: fmt.Errorf("--workers %d: give 0 or more worker nodes", o.workers)}
			}
			if err := kind.ValidClassClusterName(o.name); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			return runClassClusterCreate(cmd.Context(), g, o)
		},
	}
	cmd.Flags().StringVar(&o.name, "name", kind.DefaultClassCluster, "the kind cluster's `NAME`")
	cmd.Flags().IntVar(&o.workers, "workers", 0, "`K` worker nodes beside the control plane")
	return cmd
}

func newClassClusterDeleteCommand(g *globals) *cobra.Command {
	var o classClusterOptions
	cmd := &cobra.Command{
		Use:     "delete",
		Short:   "Remove a class cluster made by `labctl class cluster create`",
		Long:    "Removes the kind class cluster NAME, with every learner on it, and its kubeconfig. A kind cluster\nthat `class cluster create` did not make is left alone.",
		Example: "  labctl class cluster delete\n  labctl class cluster delete --name room-2",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := kind.ValidClassClusterName(o.name); err != nil {
				return &usageError{cmd: cmd, err: err}
			}
			return runClassClusterDelete(cmd.Context(), g, o)
		},
	}
	cmd.Flags().StringVar(&o.name, "name", kind.DefaultClassCluster, "the kind cluster's `NAME`")
	return cmd
}

func runClassClusterCreate(ctx context.Context, g *globals, o classClusterOptions) error {
	status := statusline.New(g.streams.Err, statusline.Options{Quiet: g.quiet(), NoColor: g.noColor(), Elapsed: true})
	c, err := g.env.CreateClassCluster(ctx, kind.ClassClusterOptions{Name: o.name, Workers: o.workers, Status: status, Log: g.detail()})
	if err != nil {
		if ctx.Err() != nil {
			return &ExitError{Code: exitInterrupted, Err: fmt.Errorf("class cluster create was interrupted: run it again to continue (or `labctl class cluster delete --name %s`)", o.name)}
		}
		return &ExitError{Code: exitError, Err: err}
	}
	if !c.Created && o.workers > 0 && o.workers != c.Workers && !g.quiet() {
		fmt.Fprintf(g.streams.Err, "Note: class cluster %s was made before with %d worker(s); --workers changes a cluster only when it is made: delete it first for %d.\n",
			c.Name, c.Workers, o.workers)
	}
	// The two flags go to stdout, for a script; the rest is for the reader.
	if !g.quiet() {
		fmt.Fprintf(g.streams.Err, "\nClass cluster %s is ready. Bring a class up on it with:\n", c.Name)
	}
	fmt.Fprintf(g.streams.Out, "  %s up --kubeconfig %s --context %s --learners 3\n", classCommandLine(g), shellQuote(c.Kubeconfig), shellQuote(c.Context))
	if !g.quiet() {
		fmt.Fprintf(g.streams.Err, "(or set class.kubeconfig and class.context in labctl's config). Remove it with `labctl class cluster delete --name %s`.\n", c.Name)
	}
	return nil
}

func runClassClusterDelete(ctx context.Context, g *globals, o classClusterOptions) error {
	status := g.statusLogger()
	status.Start("Deleting class cluster " + o.name)
	existed, err := g.env.DeleteClassCluster(ctx, o.name)
	status.End(err == nil)
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return &ExitError{Code: exitInterrupted, Err: errors.New("class cluster delete was interrupted: run it again")}
		}
		return &ExitError{Code: exitError, Err: err}
	}
	if !existed && !g.quiet() {
		fmt.Fprintf(g.streams.Err, "There is no class cluster %s: nothing to remove.\n", o.name)
	}
	return nil
}
