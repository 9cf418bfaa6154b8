package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/atomicfile"
	"github.com/labctl/labctl/provision/class"
)

type classInviteOptions struct {
	file    string
	force   bool
	expires time.Duration
	revoke  bool
}

// defaultInviteTTL is an invite's life unless --expires: a day's session.
const defaultInviteTTL = 12 * time.Hour

func newClassInviteCommand(g *globals) *cobra.Command {
	var o classInviteOptions
	cmd := &cobra.Command{
		Use:   "invite LEARNER",
		Short: "Write the file a learner opens their sandbox with",
		Long: "Writes a kubeconfig (mode 0600) that reaches the learner's sandbox and nothing else, and prints the\n" +
			"command the learner runs with it: `labctl shell --invite FILE`. Give the file to that learner only.\n" +
			"An existing file is not overwritten unless --force.\n\n" +
			"An invite expires (--expires, 12h unless said; the class cluster may cut it shorter): run the command\n" +
			"again for a new one. --revoke ends every invite of the learner at once and writes none.",
		Example: "  labctl class invite learner-3\n  labctl class invite learner-3 --output-file /tmp/alice.kubeconfig --expires 3h\n" +
			"  labctl class invite learner-3 --revoke",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClassInvite(cmd.Context(), g, args[0], o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.file, "output-file", "", "write the invite to `FILE` (default ./LEARNER.kubeconfig)")
	_ = cmd.MarkFlagFilename("output-file")
	fl.BoolVar(&o.force, "force", false, "overwrite the file if it exists")
	fl.DurationVar(&o.expires, "expires", defaultInviteTTL, "the invite works for `DURATION` (10m to 168h)")
	fl.BoolVar(&o.revoke, "revoke", false, "end every invite of the learner, and write none")
	cmd.MarkFlagsMutuallyExclusive("revoke", "output-file")
	cmd.MarkFlagsMutuallyExclusive("revoke", "force")
	cmd.MarkFlagsMutuallyExclusive("revoke", "expires")
	return cmd
}

func runClassInvite(ctx context.Context, g *globals, learner string, o classInviteOptions) error {
	if err := learnerArg(g, learner); err != nil {
		return err
	}
	if o.expires < class.MinInviteTTL || o.expires > class.MaxInviteTTL {
		return &ExitError{Code: exitError, Err: fmt.Errorf("--expires %v: an invite lasts from 10m to 168h", o.expires)}
	}
	if o.revoke {
		return revokeInvites(ctx, g, learner)
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
	kubeconfig, expires, err := cs.class.Invite(ctx, learner, o.expires)
	if err != nil {
		return cs.room.Explain(learner, err)
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
		fmt.Fprintf(g.streams.Err, "Wrote the invite of %s to %s (mode 0600), good until %s: give it to %s only. They run:\n",
			learner, file, expires.Local().Format("2006-01-02 15:04 MST"), learner)
	}
	fmt.Fprintf(g.streams.Out, "labctl shell --invite %s\n", shellQuote(file))
	return nil
}

// revokeInvites ends every invite of learner.
func revokeInvites(ctx context.Context, g *globals, learner string) error {
	cs, err := g.openClass(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	if err := cs.class.RevokeInvites(ctx, learner); err != nil {
		return cs.room.Explain(learner, err)
	}
	if !g.quiet() {
		fmt.Fprintf(g.streams.Err, "Every invite of %s ends now: `labctl class invite %s` writes a new one.\n", learner, learner)
	}
	return nil
}
