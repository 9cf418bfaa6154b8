package app

import (
	"github.com/spf13/cobra"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/images"
)

// newCheckerCommand is the checker the host runs in the grader container: one
// JSON check request on stdin, the results as JSON on stdout. It reads no
// configuration file and no kubeconfig: everything comes in the request.
func newCheckerCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:    "__check",
		Short:  "Run checks from a JSON request on stdin (run by labctl in the grader container)",
		Hidden: true,
		Args:   cobra.NoArgs,
		// The checker runs with a cleared environment; it must not read
		// labctl's configuration, so the root's config loading is skipped.
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := hardenChecker(); err != nil {
				return err
			}
			return checks.ServeTools(cmd.Context(), g.streams.In, g.streams.Out, checks.Tools{ReachImage: images.AddonsRef()})
		},
	}
}
