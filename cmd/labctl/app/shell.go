package app

import (
	"context"
	"errors"
	"io"
	"os"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/internal/terminal"
	"github.com/labctl/labctl/usecase/labwatch"
	"github.com/labctl/labctl/usecase/shell"
)

func newShellCommand(g *globals) *cobra.Command {
	var invite string
	var watch bool
	cmd := &cobra.Command{
		Use:   "shell",
		Short: "Open a shell in the sandbox; your work is checked after every command",
		Long: "Open a login shell in the lab's sandbox. After every command the current step's checks run;\n" +
			"when they pass you see the next step. Inside, `lab check|hint|step|why|next|status` asks labctl directly.\n" +
			"With --invite, the sandbox is yours in a class: the file is the one your instructor's `labctl class\n" +
			"invite` wrote, the lab is the one it names (or --lab). The checks your sandbox can judge run as feedback;\n" +
			"the others, and your grade, are your instructor's (`labctl class grade`).",
		Example: "  labctl shell\n  labctl --lab ./my-lab/lab.yaml shell\n  labctl shell --invite alice.kubeconfig",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if invite != "" {
				if watch {
					return &ExitError{Code: exitError, Err: errWatchBuiltIn}
				}
				return runInvitedShell(cmd.Context(), g, invite)
			}
			return runShell(cmd.Context(), g, watch)
		},
	}
	cmd.Flags().StringVar(&invite, "invite", "", "open your sandbox in a class with the invite `FILE` your instructor gave you")
	_ = cmd.MarkFlagFilename("invite")
	cmd.Flags().BoolVar(&watch, "watch", false, "reload the lab's file into the shell when you edit it (a lab you write, with --lab)")
	return cmd
}

func runShell(ctx context.Context, g *globals, watch bool) error {
	if watch {
		if _, err := g.watchedFile(); err != nil {
			return &ExitError{Code: exitError, Err: err}
		}
	}
	in, out, err := g.terminal()
	if err != nil {
		return err
	}
	st, err := g.loadLabState()
	if err != nil {
		return err
	}
	st.watch = watch
	env, err := g.connectLab(ctx, st)
	if err != nil {
		return err
	}
	defer env.Close()
	return shellOn(ctx, g, st, env, env, in, out)
}

// runInvitedShell is `labctl shell --invite FILE`: the shell of the
// invite's sandbox on the practice lab, which runs no probe.
func runInvitedShell(ctx context.Context, g *globals, file string) error {
	st, inv, err := g.openInvite(ctx, file)
	if err != nil {
		return err
	}
	defer inv.Close()
	in, out, err := g.terminal()
	if err != nil {
		return err
	}
	g.invitedLine(st, inv)
	return shellOn(ctx, g, st, inv, nil, in, out)
}

// shellOn runs the learner's shell of env on the terminal in, out: the
// session of `labctl shell`, `labctl class shell` and `labctl shell
// --invite`, with the lab and progress of st; probe runs the probes of
// st's lab (nil when it has none).
func shellOn(ctx context.Context, g *globals, st *labState, env liveLab, probe grading.Prober, in, out *os.File) error {
	term, err := terminal.OpenTerminal(ctx, in, out)
	if err != nil {
		return err
	}
	defer term.Restore()
	rows, cols, _ := term.Size()
	attached, err := env.AttachShell(ctx, shellOptions(st.lab, termName(), st.catalog.Lang, rows, cols))
	if err != nil {
		return err
	}
	defer attached.Close()
	var progress atomic.Pointer[shell.StoreProgress]
	progress.Store(&shell.StoreProgress{Store: st.store, Lab: st.lab, Digest: st.digest, Scripts: env, Situation: st.situation, Checker: env})
	s, err := shell.New(shell.Config{
		Lab:      st.lab,
		Shell:    attached,
		Terminal: term,
		Check:    env.RunChecks,
		Probe:    probe,
		Progress: shell.CurrentProgress(func() shell.Progress { return progress.Load() }),
		Catalog:  st.catalog,
		Color:    !g.noColor() && os.Getenv("TERM") != "dumb",
	})
	if err != nil {
		return err
	}
	if st.watch {
		wctx, stop := context.WithCancel(ctx)
		defer stop()
		err := g.watchLab(wctx, st, io.Discard, func(name string, c labwatch.Change) {
			next := *progress.Load()
			next.Lab, next.Digest = c.Lab, c.Digest
			progress.Store(&next)
			_ = s.Reloaded(c.Lab, st.catalog, name, warningLines(c.Warnings))
		}, s.NotReloaded)
		if err != nil {
			return err
		}
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

// terminal is the user's terminal, or terminal.ErrNotTerminal.
func (g *globals) terminal() (in, out *os.File, err error) {
	in, inOK := g.streams.In.(*os.File)
	out, outOK := g.streams.Out.(*os.File)
	if !inOK || !outOK || !terminal.IsTerminal(in) || !terminal.IsTerminal(out) {
		return nil, nil, terminal.ErrNotTerminal
	}
	return in, out, nil
}

// termName is the TERM the shell gets: the user's, or a safe default.
func termName() string {
	if t := os.Getenv("TERM"); t != "" && t != "dumb" {
		return t
	}
	return "xterm-256color"
}
