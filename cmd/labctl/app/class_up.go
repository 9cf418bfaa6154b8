package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/provision"
)

type classUpOptions struct {
	learners int
	roster   string
	parallel int
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
			names, err := o.names(cmd)
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
	return cmd
}

// names are the learners the command line asks for; mistakes in it are
// usage errors, mistakes in the roster say their line.
func (o classUpOptions) names(cmd *cobra.Command) ([]string, error) {
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
		return numberedLearners(o.learners), nil
	}
	f, err := os.Open(o.roster)
	if err != nil {
		return nil, &ExitError{Code: exitError, Err: fmt.Errorf("reading the roster: %w", err)}
	}
	defer f.Close()
	prefix, _ := cmd.Flags().GetString("prefix")
	names, err := parseRoster(f, o.roster, prefix)
	if err != nil {
		return nil, &ExitError{Code: exitError, Err: err}
	}
	return names, nil
}

// numberedLearners are learner-1 … learner-n.
func numberedLearners(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("learner-%d", i+1)
	}
	return names
}

// parseRoster reads a roster: one learner name per line, '#' starting a
// comment, blank lines ignored. Every bad or repeated name is reported,
// with its line, in one error; a roster without names is one too.
func parseRoster(r io.Reader, file, prefix string) ([]string, error) {
	var names, problems []string
	first := map[string]int{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		name, _, _ := strings.Cut(sc.Text(), "#")
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if err := provision.ValidLearnerName(prefix, name); err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %v", file, line, err))
			continue
		}
		if at, ok := first[name]; ok {
			problems = append(problems, fmt.Sprintf("%s:%d: learner %q is already on line %d", file, line, name, at))
			continue
		}
		first[name] = line
		names = append(names, name)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the roster %s: %w", file, err)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the roster has %d problem(s); nothing was created:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("the roster %s names no learner: write one name per line", file)
	}
	return names, nil
}

func runClassUp(ctx context.Context, g *globals, names []string, o classUpOptions, cmd *cobra.Command) error {
	st, err := g.loadLabState()
	if err != nil {
		return err
	}
	if err := provision.CheckClassLab(st.lab); err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	cs, err := g.openClassOf(ctx, st)
	if err != nil {
		return err
	}
	defer cs.Close()
	if err := checkRoom(ctx, cs.class, names); err != nil {
		return err
	}

	status := statusline.New(g.streams.Err, statusline.Options{Quiet: g.quiet(), NoColor: g.noColor(), Elapsed: true})
	status.Start(fmt.Sprintf("Bringing up %d learner(s) of lab %s, %d at a time", len(names), st.lab.Metadata.Name, o.parallel))
	var mu sync.Mutex
	var failed []string
	ready := 0
	inParallel(len(names), o.parallel, func(i int) {
		name := names[i]
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		err := cs.class.Up(ctx, name)
		mu.Lock()
		defer mu.Unlock()
		took := statusline.Elapsed(time.Since(start))
		switch {
		case err == nil:
			ready++
			status.Printf("✓ %s ready (%s)", name, took)
		case ctx.Err() != nil:
		default:
			failed = append(failed, name)
			status.Printf("✗ %s: %v", name, err)
		}
		status.Update(fmt.Sprintf("%d of %d ready", ready, len(names)))
	})
	status.End(ready == len(names))
	if ctx.Err() != nil {
		return &ExitError{Code: exitInterrupted, Err: fmt.Errorf("class up was interrupted with %d of %d learner(s) ready; "+
			"they stay up: run the same command again to continue", ready, len(names))}
	}
	if len(failed) > 0 {
		return &ExitError{Code: exitError, Err: fmt.Errorf("%d of %d learner(s) are not ready: %s (the others are up)\n"+
			"retry them with: %s", len(failed), len(names), strings.Join(failed, ", "), retryUp(g, cmd))}
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
	names := []string{"learners", "roster", "parallel"}
	for _, f := range classFlags {
		names = append(names, f.flag)
	}
	for _, name := range names {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			line += " --" + name + " " + shellQuote(f.Value.String())
		}
	}
	return line
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkRoom refuses to start when the cluster cannot schedule the learners
// not yet up.
func checkRoom(ctx context.Context, c classroom, names []string) error {
	have, err := c.Learners(ctx)
	if err != nil {
		return err
	}
	// A learner whose namespace exists has its Pods' requests counted in
	// Capacity already, ready or not (an interrupted run, a restarted
	// node): only the learners not there yet need room.
	up := map[string]bool{}
	for _, l := range have {
		up[l.Name] = true
	}
	missing := 0
	for _, n := range names {
		if !up[n] {
			missing++
		}
	}
	if missing == 0 {
		return nil
	}
	cap, err := c.Capacity(ctx)
	if err != nil {
		return err
	}
	if fits := cap.Fits(); fits < missing {
		return &ExitError{Code: exitError, Err: errors.New(roomMessage(cap, missing))}
	}
	return nil
}

// roomMessage says that the cluster has no room for missing more learners,
// what it has and what one learner costs, and what to do.
func roomMessage(c provision.Capacity, missing int) string {
	if c.Nodes == 0 && len(c.OtherArch) > 0 {
		return fmt.Sprintf("the class cluster has no Ready node that can run this labctl's checker, built for %s: it has %s.\n"+
			"Set checker-binary (LABCTL_CHECKER_BINARY) to a labctl built for them "+
			"(CGO_ENABLED=0 GOARCH=%s go build -o labctl-nodes ./cmd/labctl), or add %s nodes.",
			c.Arch, archText(c.OtherArch), slices.Sorted(maps.Keys(c.OtherArch))[0], c.Arch)
	}
	msg := fmt.Sprintf("the class cluster has room for %d more learner(s), not the %d not yet up: "+
		"%s of memory and %s CPU are free on %d node(s), and each learner asks for %s and %s CPU.\n"+
		"Bring up fewer learners (--learners, or a shorter roster), or add nodes to the cluster.",
		max(c.Fits(), 0), missing, bytesText(c.FreeMemory), milliCPUText(c.FreeMilliCPU), c.Nodes,
		bytesText(c.LearnerMemory), milliCPUText(c.LearnerMilliCPU))
	if len(c.OtherArch) > 0 {
		msg += fmt.Sprintf("\nNot counted: %s, which cannot run this labctl's checker (built for %s).", archText(c.OtherArch), c.Arch)
	}
	return msg
}

// archText lists node counts by architecture: "2 node(s) of arm64".
func archText(m map[string]int) string {
	var parts []string
	for _, a := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d node(s) of %s", m[a], a))
	}
	return strings.Join(parts, ", ")
}

// bytesText is n bytes as GiB or MiB.
func bytesText(n int64) string {
	const mib, gib = 1 << 20, 1 << 30
	if n >= gib {
		return fmt.Sprintf("%.1f GiB", float64(n)/gib)
	}
	return fmt.Sprintf("%d MiB", n/mib)
}

// milliCPUText is m thousandths of a CPU as a number of CPUs.
func milliCPUText(m int64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.3f", float64(m)/1000), "0"), ".")
}
