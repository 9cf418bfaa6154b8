package app

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	// nodeAccessOn is the instructor's consent to a lab that makes each
	// learner root on their node: the label (and taint) KEY=VALUE of the
	// class-cluster nodes dedicated to such learners.
	nodeAccessOn string
	// renewOutdated makes anew the Pods of learners that run from other
	// settings (class up otherwise leaves running Pods as they are).
	renewOutdated bool
	// names are the learners the flags name; retry is the command line
	// that brings up those that failed.
	names []string
	retry func() string
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
			if err := o.checkNodeAccessOn(cmd); err != nil {
				return err
			}
			var err error
			if o.names, err = o.learnerNames(cmd, g.classPrefix()); err != nil {
				return err
			}
			o.retry = func() string { return retryUp(g, cmd) }
			return runClassUp(cmd.Context(), g, o)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.learners, "learners", 0, "make `N` learners: learner-1 … learner-N")
	fl.StringVar(&o.roster, "roster", "", "make the learners named in `FILE`, one per line")
	_ = cmd.MarkFlagFilename("roster")
	fl.IntVar(&o.parallel, "parallel", 4, "bring up at most `P` learners at once")
	fl.BoolVar(&o.learnerNodes, "learner-nodes", false, "give each learner a node of their own, in a privileged container on the class cluster (a lab whose Pods must run needs it)")
	fl.StringVar(&o.nodeAccessOn, "node-access-on", "", "run a lab that makes each learner root on their node (cluster.nodeAccess) only on the class-cluster nodes labelled and tainted `KEY=VALUE`, dedicated to it (needs --learner-nodes)")
	fl.BoolVar(&o.renewOutdated, "renew-outdated", false, "make anew the Pods of learners that run from other settings (an earlier labctl's): their shells end, their /root and cluster's objects are kept")
	return cmd
}

// checkNodeAccessOn says what is wrong with --node-access-on, as a usage
// error: it needs --learner-nodes (the learner is root on a node of their
// own) and a label KEY=VALUE.
func (o classUpOptions) checkNodeAccessOn(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("node-access-on") {
		return nil
	}
	if !o.learnerNodes {
		return &usageError{cmd: cmd, err: errors.New("--node-access-on needs --learner-nodes: the learner is root on a node of their own, " +
			"on the class-cluster nodes labelled and tainted KEY=VALUE")}
	}
	if _, err := class.ParseNodeLabel(o.nodeAccessOn); err != nil {
		return &usageError{cmd: cmd, err: err}
	}
	return nil
}

// names are the learners the command line asks for; mistakes in it are
// usage errors, mistakes in the roster say their line. prefix is the
// class's namespace prefix, which a roster's names must leave room for.
func (o classUpOptions) learnerNames(cmd *cobra.Command, prefix string) ([]string, error) {
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

// runClassUp brings the class up (classroom.Up, a status line a step) and
// says what the outcome asks of the instructor.
func runClassUp(ctx context.Context, g *globals, o classUpOptions) error {
	names := o.names
	st, err := g.loadLabState()
	if err != nil {
		return err
	}
	nodeAccessOn, err := class.ParseNodeLabel(o.nodeAccessOn)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	if err := class.CheckLab(st.lab, class.Consent{LearnerNodes: o.learnerNodes, NodeAccessOn: nodeAccessOn}); err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	needsNodes := class.NeedsNodes(st.lab)
	if o.learnerNodes && !needsNodes && !g.quiet() {
		fmt.Fprintf(g.streams.Err, "Note: lab %s declares its workloads (workloads: declare), so its learners need no node: --learner-nodes changes nothing.\n", st.lab.Metadata.Name)
	}
	if !nodeAccessOn.IsZero() && !st.lab.Cluster.NodeAccess {
		// The consent is to root on a node; a lab without it keeps the
		// instructor's placement as it is.
		if !g.quiet() {
			fmt.Fprintf(g.streams.Err, "Note: lab %s does not make its learners root on their node (cluster.nodeAccess), so --node-access-on changes nothing.\n", st.lab.Metadata.Name)
		}
		nodeAccessOn = class.NodeLabel{}
	}
	cs, err := g.openClassWith(ctx, st, needsNodes, nodeAccessOn)
	if err != nil {
		return err
	}
	defer cs.Close()
	up := classroom.UpOptions{Lab: st.lab.Metadata.Name, Learners: names, Parallel: o.parallel, RenewOutdated: o.renewOutdated,
		Status: statusline.New(g.streams.Err, statusline.Options{Quiet: g.quiet(), NoColor: g.noColor(), Elapsed: true})}
	if needsNodes {
		// The lab's images go into each learner's node from here.
		up.Images = func(ctx context.Context) error {
			_, err := g.env.EnsureWorkloads(ctx, imageOptions(g, imagesOptions{}), st.lab, st.labDir)
			return err
		}
	}
	res, err := classroom.Up(ctx, cs.class, up)
	var room *classroom.RoomError
	switch {
	case ctx.Err() != nil:
		return &ExitError{Code: exitInterrupted, Err: fmt.Errorf("class up was interrupted with %d of %d learner(s) ready; "+
			"they stay up: run the same command again to continue", res.Done, len(names))}
	case errors.As(err, &room):
		return &ExitError{Code: exitError, Err: err}
	case err != nil:
		return err
	}
	if g.quiet() {
		// What the class cluster lets through is said even then.
		if res.OpenNetwork {
			fmt.Fprintf(g.streams.Err, "⚠ WARNING: the learners are not walled off from each other. %s.\n", res.Open)
		}
		for _, c := range res.Caveats {
			fmt.Fprintf(g.streams.Err, "⚠ Not enforced by the class cluster: %s.\n", c)
		}
	} else if len(res.Outdated) > 0 {
		fmt.Fprintf(g.streams.Err, "Note: %s run(s) Pods made from other settings (an earlier labctl's, another image or node configuration); "+
			"class up leaves running Pods as they are, so as not to end a session. At a quiet moment, run the same `labctl class up` "+
			"with --renew-outdated: it makes their Pods anew from these settings (their shells end; their /root and their cluster's objects are kept).\n",
			strings.Join(res.Outdated, ", "))
	}
	if len(res.Failed) > 0 {
		return &ExitError{Code: exitError, Err: fmt.Errorf("%d of %d learner(s) are not ready: %s (the others are up)\n"+
			"retry them with: %s", len(res.Failed), len(names), strings.Join(res.Failed, ", "), o.retry())}
	}
	if !g.quiet() {
		fmt.Fprintf(g.streams.Err, "\nEvery learner is ready: `labctl class invite LEARNER` writes the file each one connects with.\n")
	}
	return nil
}

// retryUp is the command that brings up the failed learners again: the
// same command, which leaves the learners already up as they are.
func retryUp(g *globals, cmd *cobra.Command) string {
	line := classCommandLine(g) + " up"
	names := []string{"learners", "roster", "parallel", "learner-nodes", "node-access-on", "renew-outdated"}
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
