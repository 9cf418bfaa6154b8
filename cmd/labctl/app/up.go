package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/kind"
)

type upOptions struct {
	retain          bool
	allowHostAccess bool
}

func newUpCommand(g *globals) *cobra.Command {
	o := &upOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Create or repair the lab's cluster and sandbox",
		Long: "Create the lab's kind cluster and sandbox container, or reuse and repair them.\n" +
			"With no lab file in the current directory, the built-in GitOps lab is used.\n" +
			"A lab that asks for what reaches this machine (privileged Pod Security, cluster-wide rules beyond reading,\n" +
			"its own node or sandbox image; `labctl lint -v` lists them) is brought up only with --allow-host-access,\n" +
			"or when it was installed with that flag.",
		Example: "  labctl up\n  labctl --lab ./my-lab/lab.yaml up\n  labctl up --retain",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUp(cmd, g, o)
		},
	}
	cmd.Flags().BoolVar(&o.retain, "retain", false, "keep what a failed up created, for debugging")
	addAllowHostAccessFlag(cmd.Flags(), &o.allowHostAccess)
	return cmd
}

func runUp(cmd *cobra.Command, g *globals, o *upOptions) error {
	l, fixtures, _, labDir, err := g.loadLab()
	if err != nil {
		return err
	}
	if err := g.checkHostAccess(l, labDir, "brought up", o.allowHostAccess); err != nil {
		return err
	}
	current := ""
	if dir, err := statedir.Dir(os.Getenv, l.Metadata.Name); err == nil {
		if p, err := progress.NewStore(dir).Load(l.Metadata.Name); err == nil {
			current = p.Current
		}
	}
	catalog := labCatalog(l)
	env, err := g.env.Up(cmd.Context(), kind.Options{
		Lab:           l,
		Catalog:       catalog,
		Fixtures:      fixtures,
		LabDir:        labDir,
		Retain:        o.retain,
		Status:        g.statusLogger(),
		Log:           g.detail(),
		CheckerBinary: g.cfg.GetString("checker-binary"),
		CurrentStep:   current,
	})
	if errors.Is(err, context.Canceled) {
		what := "what it created was removed"
		if o.retain {
			what = "what it created was kept (--retain)"
		}
		return &ExitError{Code: exitInterrupted, Err: fmt.Errorf("up was interrupted; %s: run `labctl up` again to finish", what)}
	}
	if err != nil {
		return err
	}
	defer env.Close()
	noteStart(cmd.Context(), env, l)
	if !g.quiet() {
		fmt.Fprintf(g.streams.Err, "\n%s\n", fmt.Sprintf(catalog.UpDone, l.Metadata.Name))
	}
	return nil
}

// noteStart notes, once, where the repositories of the learner's current
// step are (grading.NoteStartIfMissing), after up ran its setup: the lab's
// first step begins here when nothing was done in it yet; a lab brought up
// again mid-way notes it late (grading.EnsureStart), as the step's first
// check does if this cannot.
func noteStart(ctx context.Context, c grading.Checker, l *lab.Lab) {
	dir, err := statedir.Dir(os.Getenv, l.Metadata.Name)
	if err != nil {
		return
	}
	store := progress.NewStore(dir)
	p, err := store.Load(l.Metadata.Name)
	if err != nil {
		return
	}
	cur, _ := p.CurrentStep(l)
	switch {
	case cur == nil:
	case len(p.Passed) == 0 && len(p.Attempts) == 0:
		_ = grading.NoteStartIfMissing(ctx, c, store, l, p, cur)
	default:
		// A lab brought up again mid-way: the learner may have worked
		// on the step already.
		_, _ = grading.EnsureStart(ctx, c, store, l, p, cur)
	}
}

// status returns the status-line printer every long command uses.
func (g *globals) statusLogger() *statusline.Logger {
	return statusline.New(g.streams.Err, statusline.Options{Quiet: g.quiet(), NoColor: g.noColor()})
}

// detail is where verbose detail goes: stderr with -v, escaped (it holds
// the output of the lab's scripts, which its author wrote), else nowhere.
func (g *globals) detail() io.Writer {
	if g.verbose() {
		return textsafe.NewWriter(g.streams.Err)
	}
	return nil
}

// labCatalog is the message catalogue in the learner's language for lab l:
// the lab's language, unless the locale names another.
func labCatalog(l *lab.Lab) *msg.Catalog {
	return msg.New(msg.Choose(l.Metadata.Language, os.Getenv))
}
