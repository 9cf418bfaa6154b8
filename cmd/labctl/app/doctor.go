package app

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/preflight"
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
			c := doctorCatalog(g)
			problems := 0
			for _, f := range preflight.Run(cmd.Context()) {
				mark := "✓"
				if !f.OK {
					mark = "✗"
					problems++
				}
				message, fix := f.Words(c)
				fmt.Fprintf(g.streams.Out, "%s %-13s %s\n", mark, f.Name, message)
				if !f.OK && fix != "" {
					fmt.Fprintf(g.streams.Out, "  %-13s %s\n", "", c.Say(msg.StatusFix, fix))
				}
			}
			if problems > 0 {
				return &ExitError{Code: 1, Err: errors.New(c.Say(msg.DoctorProblems, problems))}
			}
			return nil
		},
	}
}

// doctorCatalog speaks the language of the lab labctl would use, chosen as
// for every learner-facing line; a lab that cannot be loaded leaves the
// choice to the locale, doctor being about the machine, not the lab.
func doctorCatalog(g *globals) *msg.Catalog {
	if l, _, _, err := g.loadLab(); err == nil {
		return labCatalog(l)
	}
	return msg.New(msg.Choose("", os.Getenv))
}
