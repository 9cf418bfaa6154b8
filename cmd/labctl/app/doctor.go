package app

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/preflight"
)

func newDoctorCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check this machine for what a lab needs and say how to fix what is missing",
		Long: "doctor probes Docker, the capability bounding set (privileged kind nodes), the cgroup version,\n" +
			"inotify limits and free disk. It prints one line per probe, and the fix under each problem;\n" +
			"it changes nothing, and exits 1 when something needs fixing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			problems := 0
			for _, f := range preflight.Run(cmd.Context()) {
				mark := "✓"
				if !f.OK {
					mark = "✗"
					problems++
				}
				fmt.Fprintf(g.streams.Out, "%s %-13s %s\n", mark, f.Name, f.Message)
				if !f.OK && f.Fix != "" {
					fmt.Fprintf(g.streams.Out, "  %-13s fix: %s\n", "", f.Fix)
				}
			}
			if problems > 0 {
				return &ExitError{Code: 1, Err: fmt.Errorf("%d problem(s) found", problems)}
			}
			return nil
		},
	}
}
