package app

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/msg"
)

func newDoctorCommand(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check this machine for what a lab needs and say how to fix what is missing",
		Long: "doctor probes Docker, the capability bounding set (privileged kind nodes), the cgroup version,\n" +
			"inotify limits and free disk. It prints one line per probe, and the fix under each problem;\n" +
			"it changes nothing, and exits 1 when something needs fixing.",
		Example: "  labctl doctor\n  labctl doctor -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), g, format)
		},
	}
	addOutputFlag(cmd, &format, textFormat, jsonFormat)
	return cmd
}

// doctorReport is `labctl doctor -o json`; its field names are stable
// (docs/cli.md). Messages and fixes are in English, whatever the locale.
type doctorReport struct {
	OK       bool            `json:"ok"`
	Findings []doctorFinding `json:"findings"`
}

type doctorFinding struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

func runDoctor(ctx context.Context, g *globals, format string) error {
	c := doctorCatalog(g)
	findings := g.env.Preflight(ctx)
	problems := 0
	rep := doctorReport{Findings: []doctorFinding{}}
	for _, f := range findings {
		if !f.OK {
			problems++
		}
		rep.Findings = append(rep.Findings, doctorFinding{Name: f.Name, OK: f.OK, Message: f.Message, Fix: f.Fix})
	}
	rep.OK = problems == 0
	if format == jsonFormat {
		if err := writeJSON(g.streams.Out, rep); err != nil {
			return err
		}
	} else {
		for _, f := range findings {
			mark := "✓"
			if !f.OK {
				mark = "✗"
			}
			message, fix := f.Words(c)
			fmt.Fprintf(g.streams.Out, "%s %-13s %s\n", mark, f.Name, message)
			if !f.OK && fix != "" {
				fmt.Fprintf(g.streams.Out, "  %-13s %s\n", "", c.Say(msg.StatusFix, fix))
			}
		}
	}
	if problems > 0 {
		return &ExitError{Code: exitFailed, Err: errors.New(c.Say(msg.DoctorProblems, problems))}
	}
	return nil
}

// doctorCatalog speaks the language of the lab labctl would use, chosen as
// for every learner-facing line; a lab that cannot be loaded leaves the
// choice to the locale, doctor being about the machine, not the lab.
func doctorCatalog(g *globals) *msg.Catalog {
	if l, _, _, _, err := g.loadLab(); err == nil {
		return labCatalog(l)
	}
	return msg.New(msg.Choose("", os.Getenv))
}
