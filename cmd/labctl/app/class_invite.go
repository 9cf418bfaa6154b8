package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/atomicfile"
)

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
		return cs.room.Explain(ctx, learner, err)
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
