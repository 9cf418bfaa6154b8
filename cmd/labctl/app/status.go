package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/progress"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/provision"
)

func newStatusCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show whether the lab's cluster and sandbox are up, and the learner's progress",
		Long: "Show whether the lab's cluster and sandbox are up, the Docker objects labelled with the lab,\n" +
			"and the learner's progress. Exits 0 when the lab is up and 3 when it is not.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(cmd, g)
		},
	}
}

func runStatus(cmd *cobra.Command, g *globals) error {
	l, _, _, err := g.loadLab()
	if err != nil {
		return err
	}
	st, err := provision.Inspect(cmd.Context(), l)
	if err != nil {
		return err
	}
	out := g.streams.Out
	name := l.Metadata.Name
	cluster := "missing"
	switch {
	case st.ClusterExists && st.APIReady:
		cluster = "running"
	case st.ClusterExists:
		cluster = "not answering (run `labctl up` to repair it)"
	}
	sandboxState := "missing"
	if st.Sandbox.Exists {
		sandboxState = st.Sandbox.Status
	}
	fmt.Fprintf(out, "lab:      %s\n", name)
	fmt.Fprintf(out, "cluster:  %s %s\n", provision.ClusterName(name), cluster)
	graderState := "missing (run `labctl up` to make it)"
	if st.Grader.Exists {
		graderState = st.Grader.Status
	}
	fmt.Fprintf(out, "sandbox:  %s\n", sandboxState)
	fmt.Fprintf(out, "grader:   %s\n", graderState)
	var objs []string
	for _, o := range st.Objects {
		objs = append(objs, o.Kind+" "+o.Name)
	}
	if len(objs) > 0 {
		fmt.Fprintf(out, "objects:  %s\n", strings.Join(objs, ", "))
	}
	if dir, err := statedir.Dir(os.Getenv, name); err == nil {
		if p, err := progress.NewStore(dir).Load(name); err == nil {
			current := p.Current
			if current == "" {
				current = "(first not passed)"
			}
			fmt.Fprintf(out, "progress: %d of %d steps passed, current step %s\n", len(p.Passed), len(l.Steps), current)
		}
	}
	if !st.Up() {
		return &ExitError{Code: 3}
	}
	return nil
}
