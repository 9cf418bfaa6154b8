package app

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/kind"
	"github.com/labctl/labctl/usecase/labwatch"
)

type checkOptions struct {
	step string
}

func newCheckCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "check [STEP]",
		Short: "Check the current step of the lab (or STEP) and move on when it passes",
		Long: "Runs the step's checks in the lab's grader, a container beside the sandbox and out of the learner's\n" +
			"reach, and prints each result.\n" +
			"Exit status: 0 when the step passes, 1 when it does not yet, 2 when a check could not run.",
		Example:           "  labctl check\n  labctl check init-repo",
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: completeStepArg(g),
		RunE: func(cmd *cobra.Command, args []string) error {
			var o checkOptions
			if len(args) == 1 {
				o.step = args[0]
			}
			return runCheck(cmd.Context(), g, o)
		},
	}
}

func runCheck(ctx context.Context, g *globals, o checkOptions) error {
	s, done, err := g.grader(ctx)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	defer done()
	return verdictError(s.Check(ctx, o.step))
}

// verdictError maps a verdict to labctl's exit status: 0 passed, 1 failed,
// 2 could not check (the message says it is not the learner's fault).
func verdictError(v grading.Verdict, err error) error {
	switch {
	case err != nil:
		return &ExitError{Code: exitError, Err: err}
	case v == grading.Passed:
		return nil
	case v == grading.Failed:
		return &ExitError{Code: exitFailed}
	default:
		return &ExitError{Code: exitError}
	}
}

// labState is the loaded lab with what check, grade and reset share.
type labState struct {
	lab      *lab.Lab
	fixtures fs.FS
	// labDir holds the lab file ("" for the built-in lab).
	labDir  string
	digest  string
	store   *progress.Store
	catalog *msg.Catalog
	// situation is whose lab it is (the learner's own, a class's learner's
	// or an invited learner's): it words the retry of a failed script.
	situation grading.Situation
	// watch: labctl shell --watch reloads the lab's file when it is edited.
	watch bool
	// fileSum is the sum of the lab file's bytes the lab was loaded from
	// (labwatch.Sum): --watch reloads it when they change.
	fileSum [32]byte
}

// loadLabState loads the lab, its digest, the learner's progress store and
// the message catalogue.
func (g *globals) loadLabState() (*labState, error) {
	l, fixtures, source, labDir, err := g.loadLab()
	if err != nil {
		return nil, err
	}
	raw, err := g.labBytes(source)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", source, err)
	}
	digest, err := lab.Digest(raw, fixtures)
	if err != nil {
		return nil, err
	}
	dir, err := statedir.Dir(os.Getenv, l.Metadata.Name)
	if err != nil {
		return nil, err
	}
	return &labState{
		lab:      l,
		fixtures: fixtures,
		labDir:   labDir,
		digest:   digest,
		fileSum:  labwatch.Sum(raw),
		store:    progress.NewStore(dir),
		catalog:  msg.New(msg.Choose(l.Metadata.Language, os.Getenv)),
	}, nil
}

// grader connects to the lab's live environment; done releases it.
func (g *globals) grader(ctx context.Context) (*grading.Grader, func(), error) {
	st, err := g.loadLabState()
	if err != nil {
		return nil, nil, err
	}
	env, err := g.connectLab(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	return &grading.Grader{
		Lab:       st.lab,
		Digest:    st.digest,
		Store:     st.store,
		Checker:   env,
		Scripts:   env,
		Situation: st.situation,
		Catalog:   st.catalog,
		Out:       g.streams.Out,
		Err:       g.statusOut(),
		Color:     !g.noColor() && resultsOnTerminal(g.streams.Out),
	}, func() { env.Close() }, nil
}

// connectLab connects to the lab's live environment, or says to run
// `labctl up`.
func (g *globals) connectLab(ctx context.Context, st *labState) (liveLab, error) {
	return g.env.Connect(ctx, g.upOptions(st))
}

// upOptions are the options that bring st's lab up, as up, reset and test
// pass them.
func (g *globals) upOptions(st *labState) kind.Options {
	return kind.Options{
		Lab:           st.lab,
		Catalog:       st.catalog,
		Fixtures:      st.fixtures,
		LabDir:        st.labDir,
		Status:        g.statusLogger(),
		Log:           g.detail(),
		CheckerBinary: g.cfg.GetString("checker-binary"),
	}
}

// statusOut is where status lines go: stderr, or nowhere with -q.
func (g *globals) statusOut() io.Writer {
	if g.quiet() {
		return io.Discard
	}
	return g.streams.Err
}

// resultsOnTerminal reports whether results written to w reach a terminal
// that shows colour.
func resultsOnTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("TERM") != "dumb"
}
