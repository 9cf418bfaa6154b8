package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/provision/class"
	"github.com/labctl/labctl/usecase/classroom"
)

type classUpOptions struct {
	learners int
	roster   string
	parallel int
	// learnerNodes is the instructor's consent to a node per learner,
	// which a lab whose Pods must run needs.
	learnerNodes bool
	// renewOutdated makes anew the Pods of learners that run from other
	// settings (class up otherwise leaves running Pods as they are).
	renewOutdated bool
}

func newClassUpCommand(g *globals) *cobra.Command {
	var o classUpOptions
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Create or repair each learner's lab on the class cluster",
		Long: "Creates each learner's lab (learner-1 … learner-N with --learners N, or the names of a roster file: one\n" +
			"per line, # comments and blank lines ignored) and waits until it is ready, P learners at a time. A\n" +
			"learner already up is left as it is, so running it again continues an interrupted or failed run.\n" +
			"It first checks that the lab can run as a class and that the cluster has room for the learners not yet up.\n" +
			"Exit status: 0 when every learner is ready, 2 when one is not (the others stay up), 130 when interrupted.",
		Example: "  labctl class up --learners 20\n  labctl class up --roster learners.txt --parallel 8\n" +
			"  labctl --lab ./my-lab class up --context training --learners 3",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			names, err := o.names(cmd, g.classPrefix())
			if err != nil {
				return err
			}
			return runClassUp(cmd.Context(), g, names, o, cmd)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.learners, "learners", 0, "make `N` learners: learner-1 … learner-N")
	fl.StringVar(&o.roster, "roster", "", "make the learners named in `FILE`, one per line")
	_ = cmd.MarkFlagFilename("roster")
	fl.IntVar(&o.parallel, "parallel", 4, "bring up at most `P` learners at once")
	fl.BoolVar(&o.learnerNodes, "learner-nodes", false, "give each learner a node of their own, in a privileged container on the class cluster (a lab whose Pods must run needs it)")
	fl.BoolVar(&o.renewOutdated, "renew-outdated", false, "make anew the Pods of learners that run from other settings (an earlier labctl's): their shells end, their /root and cluster's objects are kept")
	return cmd
}

// names are the learners the command line asks for; mistakes in it are
// usage errors, mistakes in the roster say their line. prefix is the
// class's namespace prefix, which a roster's names must leave room for.
func (o classUpOptions) names(cmd *cobra.Command, prefix string) ([]string, error) {
	usage := func(format string, args ...any) error {
		return &usageError{cmd: cmd, err: fmt.Errorf(format, args...)}
	}
	byCount, byRoster := cmd.Flags().Changed("learners"), cmd.Flags().Changed("roster")
	switch {
	case byCount && byRoster:
		return nil, usage("--learners and --roster exclude each other")
	case !byCount && !byRoster:
		return nil, usage("say who the learners are: --learners N or --roster FILE")
	case o.parallel < 1:
		return nil, usage("--parallel %d: bring up at least 1 learner at once", o.parallel)
	case byCount && o.learners < 1:
		return nil, usage("--learners %d: a class has at least 1 learner", o.learners)
	case byCount:
		return classroom.Numbered(o.learners), nil
	}
	f, err := os.Open(o.roster)
	if err != nil {
		return nil, &ExitError{Code: exitError, Err: fmt.Errorf("reading the roster: %w", err)}
	}
	defer f.Close()
	names, err := classroom.ParseRoster(f, o.roster, prefix)
	if err != nil {
		return nil, &ExitError{Code: exitError, Err: err}
	}
	return names, nil
}

func runClassUp(ctx context.Context, g *globals, names []string, o classUpOptions, cmd *cobra.Command) error {
	st, err := g.loadLabState()
	if err != nil {
		return err
	}
	if err := class.CheckLab(st.lab, o.learnerNodes); err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	needsNodes := class.NeedsNodes(st.lab)
	if o.learnerNodes && !needsNodes && !g.quiet() {
		fmt.Fprintf(g.streams.Err, "Note: lab %s declares its workloads (workloads: declare), so its learners need no node: --learner-nodes changes nothing.\n", st.lab.Metadata.Name)
	}
	if needsNodes {
		// The lab's images go into each learner's node from here.
		if _, err := g.env.EnsureWorkloads(ctx, imageOptions(g, imagesOptions{}), st.lab, st.labDir); err != nil {
			return err
		}
	}
	cs, err := g.openClassWith(ctx, st, needsNodes)
	if err != nil {
		return err
	}
	defer cs.Close()
	waiting := func(nodes []string) {
		if !g.quiet() {
			fmt.Fprintf(g.streams.Err, "Waiting up to %v for node(s) %s to be Ready…\n", classroom.NodeWait, strings.Join(nodes, ", "))
		}
	}
	if err := classroom.CheckRoom(ctx, cs.class, names, waiting); err != nil {
		return &ExitError{Code: exitError, Err: err}
	}

	var upper classroom.Upper = cs.class
	if o.renewOutdated {
		if old := cs.class.Outdated(ctx, names); len(old) > 0 {
			if !g.quiet() {
				fmt.Fprintf(g.streams.Err, "Making anew the Pods of %s, which run from other settings: their shells end; their /root and their cluster's objects are kept.\n",
					strings.Join(old, ", "))
			}
			upper = renewing{cs.class, old}
		}
	}
	status := statusline.New(g.streams.Err, statusline.Options{Quiet: g.quiet(), NoColor: g.noColor(), Elapsed: true})
	status.Start(fmt.Sprintf("Bringing up %d learner(s) of lab %s, %d at a time", len(names), st.lab.Metadata.Name, o.parallel))
	run := classroom.UpAll(ctx, upper, names, o.parallel, func(r classroom.Outcome) {
		switch {
		case r.Err == nil:
			status.Printf("✓ %s ready (%s)", r.Learner, statusline.Elapsed(r.Took))
		case !r.Interrupted:
			status.Printf("✗ %s: %v", r.Learner, r.Err)
		}
		status.Update(fmt.Sprintf("%d of %d ready", r.Done, len(names)))
	})
	status.End(run.Done == len(names))
	if ctx.Err() == nil {
		checkIsolation(ctx, g, cs.class, names, run.Failed)
		for _, c := range cs.class.Caveats(ctx) {
			fmt.Fprintf(g.streams.Err, "⚠ Not enforced by the class cluster: %s.\n", c)
		}
		noteOutdated(ctx, g, cs.class, names, run.Failed)
	}
	if ctx.Err() != nil {
		return &ExitError{Code: exitInterrupted, Err: fmt.Errorf("class up was interrupted with %d of %d learner(s) ready; "+
			"they stay up: run the same command again to continue", run.Done, len(names))}
	}
	if len(run.Failed) > 0 {
		return &ExitError{Code: exitError, Err: fmt.Errorf("%d of %d learner(s) are not ready: %s (the others are up)\n"+
			"retry them with: %s", len(run.Failed), len(names), strings.Join(run.Failed, ", "), retryUp(g, cmd))}
	}
	if !g.quiet() {
		fmt.Fprintf(g.streams.Err, "\nEvery learner is ready: `labctl class invite LEARNER` writes the file each one connects with.\n")
	}
	return nil
}

// noteOutdated says which learners that are up run Pods made from other
// settings (an earlier labctl's, another image, their node's configuration),
// which class up leaves as they are, and how to bring one to these.
func noteOutdated(ctx context.Context, g *globals, c classCluster, names, failed []string) {
	var up []string
	for _, n := range names {
		if !slices.Contains(failed, n) {
			up = append(up, n)
		}
	}
	old := c.Outdated(ctx, up)
	if len(old) == 0 || g.quiet() {
		return
	}
	fmt.Fprintf(g.streams.Err, "Note: %s run(s) Pods made from other settings (an earlier labctl's, another image or node configuration); "+
		"class up leaves running Pods as they are, so as not to end a session. At a quiet moment, run the same `labctl class up` "+
		"with --renew-outdated: it makes their Pods anew from these settings (their shells end; their /root and their cluster's objects are kept).\n",
		strings.Join(old, ", "))
}

// renewing brings learners up as class up does, first stopping the Pods
// of those in old that run from other settings (classCluster.Renew).
type renewing struct {
	classCluster
	old []string
}

func (r renewing) Up(ctx context.Context, learner string) error {
	if slices.Contains(r.old, learner) {
		if err := r.Renew(ctx, learner); err != nil {
			return err
		}
	}
	return r.classCluster.Up(ctx, learner)
}

// checkIsolation tries the network wall of the first learner that is up,
// and says loudly when the class cluster ignores it: learners could then
// reach each other's API servers and sandboxes.
func checkIsolation(ctx context.Context, g *globals, c classCluster, names, failed []string) {
	i := slices.IndexFunc(names, func(n string) bool { return !slices.Contains(failed, n) })
	if i < 0 {
		return
	}
	err := c.CheckIsolation(ctx, names[i])
	switch {
	case err == nil:
		if !g.quiet() {
			fmt.Fprintf(g.streams.Err, "✓ The learners are walled off from each other: from %s's Pods the class cluster's API server is out of reach.\n", names[i])
		}
	case errors.Is(err, class.ErrOpenNetwork):
		fmt.Fprintf(g.streams.Err, "\n⚠ WARNING: the learners are not walled off from each other. %v.\n", err)
	default:
		fmt.Fprintf(g.streams.Err, "\n⚠ Could not try the learners' network walls: %v\n", err)
	}
}

// retryUp is the command that brings up the failed learners again: the
// same command, which leaves the learners already up as they are.
func retryUp(g *globals, cmd *cobra.Command) string {
	line := classCommandLine(g) + " up"
	names := []string{"learners", "roster", "parallel", "learner-nodes", "renew-outdated"}
	for _, f := range classFlags {
		names = append(names, f.flag)
	}
	for _, name := range names {
		f := cmd.Flags().Lookup(name)
		switch {
		case f == nil || !f.Changed:
		case f.Value.Type() == "bool" && f.Value.String() == "true":
			line += " --" + name
		case f.Value.Type() == "bool":
			line += " --" + name + "=" + f.Value.String()
		default:
			line += " --" + name + " " + shellQuote(f.Value.String())
		}
	}
	return line
}
