package app

import (
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/labctl/labctl/provision/kind"
)

func newExecCommand(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec [--] COMMAND [ARG...]",
		Short: "Run a command in the sandbox's login environment and exit with its status",
		Long: "Run COMMAND in the sandbox as the learner's shell would (bash login environment, the lab's\n" +
			"workDir), passing stdin, stdout and stderr through, with a terminal when labctl has one.\n" +
			"labctl exits with COMMAND's exit status.",
		Example: "  labctl exec -- git -C /root/gitops log --oneline\n  labctl exec kubectl get pods -A",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExec(cmd, g, args)
		},
	}
	// Flags after COMMAND are COMMAND's: `labctl exec ls -la`.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

func runExec(cmd *cobra.Command, g *globals, args []string) error {
	l, _, _, _, err := g.loadLab()
	if err != nil {
		return err
	}
	env, err := g.env.Connect(cmd.Context(), kind.Options{Lab: l})
	if err != nil {
		return err
	}
	defer env.Close()
	// The command runs through a login shell so the learner's profile
	// applies, then replaces it.
	login := append([]string{"bash", "-l", "-c", `exec "$@"`, "bash"}, args...)
	var code int
	in, inOK := g.streams.In.(*os.File)
	out, outOK := g.streams.Out.(*os.File)
	if inOK && outOK && term.IsTerminal(int(in.Fd())) && term.IsTerminal(int(out.Fd())) {
		code, err = env.ExecInTerminal(cmd.Context(), login, in, out, os.Getenv("TERM"))
	} else {
		code, err = env.ExecLogin(cmd.Context(), login, g.streams.In, g.streams.Out, g.streams.Err)
	}
	if err != nil {
		return err
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}
