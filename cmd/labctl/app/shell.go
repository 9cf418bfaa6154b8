package app

import (
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/shell"
	"github.com/labctl/labctl/internal/terminal"
)

func newShellCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "shell",
		Short: "Open a shell in the sandbox; your work is checked after every command",
		Long: "Open a login shell in the lab's sandbox. After every command the current step's checks run;\n" +
			"when they pass you see the next step. Inside, `lab check|hint|step|why|next|status` asks labctl directly.",
		Example: "  labctl shell\n  labctl --lab ./my-lab/lab.yaml shell",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runShell(cmd.Context(), g)
		},
	}
}

func runShell(ctx context.Context, g *globals) error {
	in, inOK := g.streams.In.(*os.File)
	out, outOK := g.streams.Out.(*os.File)
	if !inOK || !outOK || !terminal.IsTerminal(in) || !terminal.IsTerminal(out) {
		return terminal.ErrNotTerminal
	}
	st, err := g.loadLabState()
	if err != nil {
		return err
	}
	env, err := g.connectLab(ctx, st)
	if err != nil {
		return err
	}
	defer env.Close()

	term, err := terminal.OpenTerminal(ctx, in, out)
	if err != nil {
		return err
	}
	defer term.Restore()
	rows, cols, _ := term.Size()
	attached, err := env.AttachShell(ctx, shellOptions(st.lab, termName(), rows, cols))
	if err != nil {
		return err
	}
	defer attached.Close()
	s, err := shell.New(shell.Config{
		Lab:      st.lab,
		Shell:    attached,
		Terminal: term,
		Check:    env.RunChecks,
		Probe:    env,
		Progress: &shell.StoreProgress{Store: st.store, Lab: st.lab, Digest: st.digest, Scripts: env},
		Catalog:  st.catalog,
		Color:    !g.noColor() && os.Getenv("TERM") != "dumb",
	})
	if err != nil {
		return err
	}
	err = s.Run(term.Context())
	term.Restore()
	if errors.Is(err, context.Canceled) {
		return &ExitError{Code: exitInterrupted, Err: errors.New("the shell was interrupted; your work in the sandbox is kept")}
	}
	if err != nil {
		return err
	}
	code, err := attached.ExitCode(ctx)
	if err != nil {
		return err
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

// termName is the TERM the shell gets: the user's, or a safe default.
func termName() string {
	if t := os.Getenv("TERM"); t != "" && t != "dumb" {
		return t
	}
	return "xterm-256color"
}
