package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/atomicfile"
)

// The class commands on single learners: shell, reset, down and invite.

func newClassShellCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "shell LEARNER",
		Short: "Open a shell in a learner's sandbox, as `labctl shell` does",
		Long: "Opens a login shell in the learner's sandbox on the class cluster. As in `labctl shell`, the current\n" +
			"step's checks run after every command and `lab check|hint|step|why|next|status` work; the learner's\n" +
			"progress is the one `labctl class grade` records (the lab's state directory, class/LEARNER).",
		Example: "  labctl class shell learner-3",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClassShell(cmd.Context(), g, args[0])
		},
	}
}

func runClassShell(ctx context.Context, g *globals, learner string) error {
	in, out, err := g.terminal()
	if err != nil {
		return err
	}
	st, err := g.loadLabState()
	if err != nil {
		return err
	}
	return g.onLearner(ctx, st, learner, func(st *labState, env liveLab) error {
		return shellOn(ctx, g, st, env, env, in, out)
	})
}

// onLearner connects to learner's lab of st's class and calls fn with the
// lab's state as the learner's.
func (g *globals) onLearner(ctx context.Context, st *labState, learner string, fn func(*labState, liveLab) error) error {
	if err := learnerArg(g, learner); err != nil {
		return err
	}
	cs, err := g.openClassOf(ctx, st)
	if err != nil {
		return err
	}
	defer cs.Close()
	env, err := cs.connect(ctx, learner)
	if err != nil {
		return err
	}
	defer env.Close()
	st, err = cs.learnerState(learner)
	if err != nil {
		return err
	}
	return fn(st, env)
}

func newClassResetCommand(g *globals) *cobra.Command {
	var o resetOptions
	cmd := &cobra.Command{
		Use:   "reset LEARNER",
		Short: "Start a learner's lab over (their /root is saved first)",
		Long: "Resets the learner's lab as `labctl reset` does: their /root is saved as a tar under the lab's state\n" +
			"directory (class/LEARNER/backups), the sandbox and the lab's namespaces are recreated, the setup runs\n" +
			"again and their progress starts over. --hard recreates the learner's control plane too.",
		Example: "  labctl class reset learner-3\n  labctl class reset learner-3 --hard\n  labctl class reset learner-3 --to deploy-app",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClassReset(cmd.Context(), g, args[0], o)
		},
	}
	addResetFlags(g, cmd, &o)
	return cmd
}

func runClassReset(ctx context.Context, g *globals, learner string, o resetOptions) error {
	st, err := g.loadResetState(o)
	if err != nil {
		return err
	}
	err = g.onLearner(ctx, st, learner, func(st *labState, env liveLab) error {
		return resetOn(ctx, g, st, env, o, g.statusLogger())
	})
	if err == nil && o.hard {
		// The learner's namespace is new, and its invite identity with it.
		fmt.Fprintf(g.statusOut(), "%s's invite no longer opens the sandbox: send a new one (%s invite %s --force)\n",
			learner, classCommandLine(g), learner)
	}
	return err
}

func newClassDownCommand(g *globals) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "down [LEARNER...]",
		Short: "Remove learners' labs from the class cluster",
		Long: "Removes the named learners' labs (their namespaces, with their /root), or every learner's with --all.\n" +
			"What labctl recorded of them (progress, grades, backups) stays in the lab's state directory.",
		Example: "  labctl class down learner-3 learner-4\n  labctl class down --all",
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case all && len(args) > 0:
				return &usageError{cmd: cmd, err: errors.New("name learners or give --all, not both")}
			case !all && len(args) == 0:
				return &usageError{cmd: cmd, err: errors.New("name the learners to remove, or give --all to remove every learner")}
			}
			for _, l := range args {
				if err := learnerArg(g, l); err != nil {
					return err
				}
			}
			return runClassDown(cmd.Context(), g, args)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "remove every learner of the class")
	return cmd
}

func runClassDown(ctx context.Context, g *globals, learners []string) error {
	cs, err := g.openClass(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	if len(learners) == 0 {
		infos, err := cs.class.Learners(ctx)
		if err != nil {
			return err
		}
		for _, l := range infos {
			learners = append(learners, l.Name)
		}
		if len(learners) == 0 {
			if !g.quiet() {
				fmt.Fprintf(g.streams.Err, "The class has no learner on this cluster (prefix %s): nothing to remove.\n", cs.prefix)
			}
			return nil
		}
	}
	status := g.statusLogger()
	status.Start(fmt.Sprintf("Removing %d learner(s) of lab %s", len(learners), cs.st.lab.Metadata.Name))
	var mu sync.Mutex
	var failed []string
	inParallel(len(learners), classParallel, func(i int) {
		err := cs.class.Down(ctx, learners[i])
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failed = append(failed, learners[i])
			status.Printf("✗ %s: %v", learners[i], err)
			return
		}
		status.Printf("✓ %s removed", learners[i])
	})
	status.End(len(failed) == 0)
	if ctx.Err() != nil {
		return &ExitError{Code: exitInterrupted, Err: errors.New("class down was interrupted: run it again to remove the rest")}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d learner(s) were not removed: %s\nretry with: %s down %s",
			len(failed), len(learners), strings.Join(failed, ", "), classCommandLine(g), strings.Join(failed, " "))
	}
	return nil
}

type classInviteOptions struct {
	file  string
	force bool
}

func newClassInviteCommand(g *globals) *cobra.Command {
	var o classInviteOptions
	cmd := &cobra.Command{
		Use:   "invite LEARNER",
		Short: "Write the file a learner opens their sandbox with",
		Long: "Writes a kubeconfig (mode 0600) that reaches the learner's sandbox and nothing else, and prints the\n" +
			"command the learner runs with it: `labctl shell --invite FILE`. Give the file to that learner only.\n" +
			"An existing file is not overwritten unless --force.",
		Example: "  labctl class invite learner-3\n  labctl class invite learner-3 --output-file /tmp/alice.kubeconfig",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClassInvite(cmd.Context(), g, args[0], o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.file, "output-file", "", "write the invite to `FILE` (default ./LEARNER.kubeconfig)")
	_ = cmd.MarkFlagFilename("output-file")
	fl.BoolVar(&o.force, "force", false, "overwrite the file if it exists")
	return cmd
}

func runClassInvite(ctx context.Context, g *globals, learner string, o classInviteOptions) error {
	if err := learnerArg(g, learner); err != nil {
		return err
	}
	file := o.file
	if file == "" {
		file = learner + ".kubeconfig"
	}
	exists := func() error {
		return fmt.Errorf("%s exists: give another --output-file, or --force to overwrite it", file)
	}
	if _, err := os.Lstat(file); err == nil && !o.force {
		return exists()
	}
	cs, err := g.openClass(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	kubeconfig, err := cs.class.Invite(ctx, learner)
	if err != nil {
		return cs.learnerError(learner, err)
	}
	write := atomicfile.Create
	if o.force {
		write = atomicfile.Write
	}
	err = write(file, 0o600, func(w io.Writer) error {
		_, err := w.Write(kubeconfig)
		return err
	})
	if errors.Is(err, fs.ErrExist) {
		return exists()
	}
	if err != nil {
		return fmt.Errorf("writing the invite: %w", err)
	}
	if !g.quiet() {
		fmt.Fprintf(g.streams.Err, "Wrote the invite of %s to %s (mode 0600): give it to %s only. They run:\n", learner, file, learner)
	}
	fmt.Fprintf(g.streams.Out, "labctl shell --invite %s\n", shellQuote(file))
	return nil
}
