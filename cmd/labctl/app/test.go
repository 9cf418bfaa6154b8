package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/kind"
	"github.com/labctl/labctl/sandbox"
	"github.com/labctl/labctl/usecase/importer"
	"github.com/labctl/labctl/usecase/labtest"
)

type testOptions struct {
	step string
	only string
	// mistakes and alternatives test only those answers of the step.
	mistakes, alternatives bool
	// mutate makes mutants of each solve (labtest.Options.Mutate).
	mutate bool
	// draft drafts the checks of the steps whose checks are placeholders
	// from what their solves make, writes them, and tests them --mutate.
	draft bool
	// drafted is the run after --draft wrote its checks: testDrafts
	// removes the environment it keeps.
	drafted bool
	keep    bool
	reuse   bool
	clean   bool
	format  string
	output  string
	timeout time.Duration
	// allowHostAccess consents to a lab that reaches the host.
	allowHostAccess bool
}

// teardownTimeout bounds removing the test environment, even after an
// interrupt.
const teardownTimeout = 5 * time.Minute

func newTestCommand(g *globals) *cobra.Command {
	var o testOptions
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Prove the lab end to end on a fresh environment of its own",
		Long: "Brings up a fresh copy of the lab named <name>-test (its own cluster and sandbox; a running lab is\n" +
			"never touched) and, step by step, checks that the step's checks fail before its solve, that every\n" +
			"mistake script makes exactly the checks it names fail (resetting to the step's start after each, as\n" +
			"`labctl reset --to` does), that every alternative solution makes every check pass (reset likewise),\n" +
			"and that the solve makes every check pass and keeps them passing; a step with a probe is checked\n" +
			"through it, as `labctl check` does. Then the whole lab must grade 100 % and a reset must make the\n" +
			"first step fail again. With --mutate, after each step's solve passes, labctl makes mutants of it (small\n" +
			"wrong changes of the objects the solve made or changed: a verb widened to *, a selector emptied, a\n" +
			"policy deleted), applies each in place as the learner, runs the step's checks once and undoes it: a\n" +
			"mutant every check lets pass is a survivor, a failure unless an alternative declares it right (mutant,\n" +
			"why). With --draft, for each step whose checks are all placeholders (an imported lab's), labctl lists the\n" +
			"lab's objects before and after its solve and writes typed kube checks of what it created, changed and\n" +
			"deleted into the lab file in their place, marked a draft (metadata.draft: true; TODO.md says which),\n" +
			"then tests the lab again with --mutate on the same environment, reset: a drafted check that a small\n" +
			"wrong answer passes is reported as a survivor. The environment is\n" +
			"removed at the end unless --keep.\n" +
			"Exit status: 0 when the lab proves itself, 1 when it does not, 2 when it could not be tested.",
		Example: "  labctl test\n  labctl --lab ./my-lab/lab.yaml test --step deploy-app --keep\n" +
			"  labctl --lab ./my-lab/lab.yaml test --step deploy-app --only wrong-port\n" +
			"  labctl --lab ./my-lab/lab.yaml test --step deploy-app --mutate\n" +
			"  labctl test -o junit --output-file lab-test.xml",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			deprecatedFormat(cmd, g.streams.Err)
			return runTest(cmd.Context(), g, o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.step, "step", "", "test only this step (the earlier steps are solved first)")
	_ = cmd.RegisterFlagCompletionFunc("step", completeStep(g))
	fl.StringVar(&o.only, "only", "", "with --step, test only the mistake or alternative of this name (the solve is skipped)")
	_ = cmd.RegisterFlagCompletionFunc("only", completeAnswer(g))
	fl.BoolVar(&o.mistakes, "mistakes", false, "with --step, test only the step's mistakes (the solve is skipped)")
	fl.BoolVar(&o.alternatives, "alternatives", false, "with --step, test only the step's alternatives (the solve is skipped)")
	fl.BoolVar(&o.mutate, "mutate", false, "after each solve passes, apply mutants of it (small wrong changes of what it made) one by one and require each to fail a check; a survivor fails the test unless an alternative declares it right")
	fl.BoolVar(&o.draft, "draft", false, "draft typed checks of the steps whose checks are placeholders from what their solves make, write them into the lab file (a draft: metadata.draft), then test the lab --mutate on the same environment")
	fl.BoolVar(&o.keep, "keep", false, "keep the test environment at the end, for debugging")
	fl.BoolVar(&o.clean, "clean", false, "remove the test environment an earlier --keep or --reuse kept, and test nothing")
	fl.BoolVar(&o.reuse, "reuse", false, "run on the test environment an earlier --keep or --reuse kept, reset to the lab's start, when the edits since allow it (the cluster, sandbox, access, fixtures and image directories unchanged); keep it at the end")
	addReportFlags(cmd, &o.format, &o.output)
	fl.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after this long")
	addAllowHostAccessFlag(fl, &o.allowHostAccess)
	return cmd
}

func runTest(ctx context.Context, g *globals, o testOptions) error {
	if !o.draft {
		return runTestOnce(ctx, g, o, nil)
	}
	drafts := map[string][]importer.DraftCheck{}
	if err := runTestOnce(ctx, g, o, drafts); err != nil {
		return err
	}
	return testDrafts(ctx, g, o, drafts)
}

// runTestOnce is one labctl test; with o.draft, it records the checks
// drafted of each step in drafts and keeps the environment, reporting
// nothing.
func runTestOnce(ctx context.Context, g *globals, o testOptions, drafts map[string][]importer.DraftCheck) (err error) {
	f, err := report.ParseFormat(o.format)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	l, fixtures, source, labDir, err := g.loadLab()
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	if err := g.checkHostAccess(l, labDir, "tested", o.allowHostAccess); err != nil {
		return err
	}
	if o.step != "" {
		if _, err := progress.Step(l, o.step); err != nil {
			return &ExitError{Code: exitError, Err: err}
		}
	}
	if err := labtest.CheckPart(l, o.step, o.only, o.mistakes, o.alternatives); err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	if o.draft && (o.step != "" || o.only != "" || o.mistakes || o.alternatives || o.mutate || o.reuse || o.clean) {
		return &ExitError{Code: exitError, Err: fmt.Errorf("--draft tests the whole lab, then tests it again --mutate: it takes no --step, --only, --mistakes, --alternatives, --mutate, --reuse or --clean")}
	}
	if o.draft && labDir != "" && !isLabPath(g.labPath()) {
		return &ExitError{Code: exitError, Err: fmt.Errorf("--draft writes the checks it drafts into the lab file, and %q is an installed lab, labctl's checked copy: run --draft on the lab's own directory (--lab DIR), then install it again", g.labPath())}
	}
	if o.draft && labDir == "" {
		return &ExitError{Code: exitError, Err: fmt.Errorf("--draft writes the checks it drafts into the lab file: name a lab directory or file with --lab")}
	}
	if o.mutate && (o.only != "" || o.mistakes || o.alternatives) {
		return &ExitError{Code: exitError, Err: fmt.Errorf("--mutate makes its mutants from the step's solve, which --only, --mistakes and --alternatives skip; drop one or the other")}
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	tl := labtest.ForTest(l)
	name := tl.Metadata.Name
	dir, err := statedir.Dir(os.Getenv, name)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	store := progress.NewStore(dir)
	sl := g.statusLogger()
	if o.clean {
		if o.keep || o.reuse || o.step != "" {
			return &ExitError{Code: exitError, Err: fmt.Errorf("--clean tests nothing: it takes no --keep, --reuse or --step")}
		}
		if err := removeTestEnvironment(ctx, g, tl, store, "Removing the kept test environment", true); err != nil {
			return &ExitError{Code: exitError, Err: err}
		}
		return nil
	}

	up := kind.Options{Lab: tl, Fixtures: fixtures, LabDir: labDir, Status: sl, Log: g.detail(),
		CheckerBinary: g.cfg.GetString("checker-binary")}
	keep := o.keep || o.reuse || o.draft
	var env liveLab
	if o.reuse {
		var why string
		if env, why = reuseTestEnvironment(ctx, g, source, tl, store, up); env == nil {
			fmt.Fprintf(g.statusOut(), "Not reusing the test environment: %s. Bringing up a fresh one.\n", why)
		} else {
			fmt.Fprintln(g.statusOut(), "Reusing the kept test environment, reset to the lab's start.")
		}
	}
	if env == nil {
		if err := removeTestEnvironment(ctx, g, tl, store, "Removing the previous test environment", true); err != nil {
			return &ExitError{Code: exitError, Err: err}
		}
	}
	defer func() {
		// --draft keeps the environment for its --mutate run, unless this
		// run failed before it could draft.
		if keep && (!o.draft || err == nil) {
			if !o.draft && !o.drafted {
				fmt.Fprintf(g.statusOut(), "Kept the test environment: cluster %s, sandbox %s (`docker exec -it %s bash`); `labctl test --reuse` runs on it, `labctl test --clean` removes it, any other `labctl test` replaces it.\n",
					provision.ClusterName(name), sandbox.ContainerName(name), sandbox.ContainerName(name))
			}
			return
		}
		tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
		defer cancel()
		if rmErr := removeTestEnvironment(tctx, g, tl, store, "Removing the test environment", false); rmErr != nil && err == nil {
			err = &ExitError{Code: exitError, Err: rmErr}
		}
	}()
	if env == nil {
		if env, err = g.env.Up(ctx, up); err != nil {
			return &ExitError{Code: exitError, Err: fmt.Errorf("bringing up the test environment: %w", err)}
		}
		if err := recordBuiltFrom(g, store.Dir(), source, tl, fixtures, labDir); err != nil {
			env.Close()
			return &ExitError{Code: exitError, Err: fmt.Errorf("recording what the test environment was built from: %w", err)}
		}
	}
	defer env.Close()

	lo := labtest.Options{Lab: tl, Store: store, Step: o.step, Only: o.only,
		Mistakes: o.mistakes, Alternatives: o.alternatives, Mutate: o.mutate, Status: sl, ScriptOutput: g.detail()}
	if o.draft {
		lo.Draft = func(s *lab.Step, start, end []map[string]any) {
			drafts[s.ID] = importer.DraftChecks(start, end)
		}
	}
	rep, err := labtest.Run(ctx, env, lo)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	if o.draft {
		return nil // testDrafts goes on from here
	}
	if o.output == "" {
		err = labtest.Write(g.streams.Out, rep, f)
	} else {
		err = labtest.WriteFile(o.output, rep, f)
	}
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	if !rep.Passed {
		n := len(rep.Failures())
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("lab %s does not prove itself: %s", l.Metadata.Name, count(n, "failure"))}
	}
	return nil
}

// removeTestEnvironment takes the test copy of the lab down with its
// state directory; onlyIfPresent skips it (and its status line) when nothing of
// it exists.
func removeTestEnvironment(ctx context.Context, g *globals, tl *lab.Lab, store *progress.Store, title string, onlyIfPresent bool) error {
	if onlyIfPresent {
		st, err := g.env.Inspect(ctx, tl)
		if err != nil {
			return err
		}
		if !st.ClusterExists && len(st.Objects) == 0 {
			return nil
		}
	}
	sl := g.statusLogger()
	sl.Start(title)
	err := g.env.Down(ctx, tl, false)
	if err == nil {
		// The directory is the test copy's own: its progress and backups.
		err = os.RemoveAll(store.Dir())
	}
	sl.End(err == nil)
	return err
}
