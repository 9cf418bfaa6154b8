package app

import (
	"github.com/spf13/cobra"

	"github.com/labctl/labctl/lab"
)

func newSchemaCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the lab file's JSON Schema",
		Long: "schema prints the JSON Schema (draft 2020-12) of lab.yaml. Save it and name it on the\n" +
			"first line of a lab file for editor completion and checking:\n\n" +
			"  labctl schema > lab.schema.json\n" +
			"  # yaml-language-server: $schema=lab.schema.json",
		Example: "  labctl schema > lab.schema.json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := g.streams.Out.Write(lab.Schema())
			return err
		},
	}
}
