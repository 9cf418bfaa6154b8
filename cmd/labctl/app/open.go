package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/usecase/web"
)

type openOptions struct {
	ui        uiOptions
	namespace string
}

func newOpenCommand(g *globals) *cobra.Command {
	var o openOptions
	cmd := &cobra.Command{
		Use:   "open svc/NAME",
		Short: "Open a Service of the lab in your browser, as the learner",
		Long: "Serves the page of `labctl ui` and opens the preview of Service NAME (its first TCP port) in your\n" +
			"browser, reached through the API server's service proxy with the learner's identity. The first line\n" +
			"of output is the preview's URL. Ctrl-C stops it.",
		Example: "  labctl open svc/web\n  labctl open svc/web -n gitops-lab --no-browser",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, ok := strings.CutPrefix(args[0], "svc/")
			if !ok {
				name, ok = strings.CutPrefix(args[0], "service/")
			}
			if !ok || name == "" || strings.Contains(name, "/") {
				return &usageError{cmd: cmd, err: fmt.Errorf("%q is not svc/NAME", args[0])}
			}
			o.ui.addr = g.cfg.GetString("addr")
			return runUI(cmd.Context(), g, o.ui, cmd.Flags().Changed("addr"), func(ctx context.Context, srv *web.Server) (string, error) {
				return srv.ServicePreview(ctx, o.namespace, name)
			})
		},
	}
	addUIFlags(cmd, &o.ui)
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "", "the Service's namespace (default the lab's first namespace)")
	return cmd
}
