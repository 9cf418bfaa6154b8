package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/msg"
)

type downOptions struct {
	purge    bool
	noBackup bool
}

func newDownCommand(g *globals) *cobra.Command {
	var o downOptions
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Remove the lab's cluster and sandbox (your /root and progress are kept)",
		Long: "Removes the lab's kind cluster, sandbox container and network. Your /root (the home volume) and\n" +
			"your progress are kept: the next `labctl up` resumes your work. --purge removes the home volume\n" +
			"too, after saving /root as a tar under the state directory, as reset does; a /root whose tar is\n" +
			"beyond 2 GiB (sparse files at their full size, every link a header) is not saved and nothing is\n" +
			"removed: delete what you do not need, or add --no-backup to lose it.",
		Example: "  labctl down\n  labctl down --purge",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.noBackup && !o.purge {
				return &usageError{cmd: cmd, err: errors.New("--no-backup goes with --purge: without it /root is kept, not saved")}
			}
			return runDown(cmd.Context(), g, o)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&o.purge, "purge", false, "remove your home volume too (/root is saved as a tar first)")
	fl.BoolVar(&o.noBackup, "no-backup", false, "with --purge, do not save /root first (what it holds is lost)")
	return cmd
}

func runDown(ctx context.Context, g *globals, o downOptions) error {
	if !o.purge {
		l, _, _, _, err := g.loadLab()
		if err != nil {
			return err
		}
		st := g.statusLogger()
		st.Start(labCatalog(l).Say(msg.StatusRemovingKeepHome, l.Metadata.Name))
		err = g.env.Down(ctx, l, true)
		st.End(err == nil)
		return err
	}
	ls, err := g.loadLabState()
	if err != nil {
		return err
	}
	st := g.statusLogger()
	if !o.noBackup {
		st.Start(ls.catalog.Say(msg.StatusSavingHome))
		path, err := g.env.SaveHome(ctx, ls.lab, filepath.Join(ls.store.Dir(), "backups"))
		st.End(err == nil)
		if err != nil {
			return fmt.Errorf("saving /root before removing it (nothing was removed): %w", err)
		}
		if path != "" {
			fmt.Fprintf(g.streams.Out, ls.catalog.BackedUp+"\n", path)
		}
	}
	st.Start(ls.catalog.Say(msg.StatusRemovingWithHome, ls.lab.Metadata.Name))
	err = g.env.Down(ctx, ls.lab, false)
	st.End(err == nil)
	return err
}
