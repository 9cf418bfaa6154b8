package app

import (
	"github.com/spf13/cobra"

	"github.com/labctl/labctl/provision"
)

func newDownCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "down",
		Short: "Remove the lab's cluster, sandbox and home volume (progress is kept)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDown(cmd, g)
		},
	}
}

func runDown(cmd *cobra.Command, g *globals) error {
	l, _, _, err := g.loadLab()
	if err != nil {
		return err
	}
	st := g.statusLogger()
	st.Start("Removing lab " + l.Metadata.Name)
	err = provision.Down(cmd.Context(), l)
	st.End(err == nil)
	return err
}
