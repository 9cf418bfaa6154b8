package app

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/sandbox"
)

func newStatusCommand(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show whether the lab's cluster and sandbox are up, and the learner's progress",
		Long: "Show whether the lab's cluster and sandbox are up, the Docker objects labelled with the lab,\n" +
			"and the learner's progress. Exits 0 when the lab is up and 3 when it is not.",
		Example: "  labctl status\n  labctl status -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(cmd, g, format)
		},
	}
	addOutputFlag(cmd, &format, textFormat, jsonFormat)
	return cmd
}

// labStatus is `labctl status -o json`; its field names are stable
// (docs/cli.md).
type labStatus struct {
	Lab      string          `json:"lab"`
	Up       bool            `json:"up"`
	Stopped  bool            `json:"stopped"`
	Cluster  clusterStatus   `json:"cluster"`
	Sandbox  containerStatus `json:"sandbox"`
	Grader   containerStatus `json:"grader"`
	Objects  []labObject     `json:"objects"`
	Progress *labProgress    `json:"progress"`
}

type clusterStatus struct {
	// None is set for a lab with no cluster (cluster.provider: none).
	None     bool   `json:"none,omitempty"`
	Name     string `json:"name"`
	Exists   bool   `json:"exists"`
	APIReady bool   `json:"apiReady"`
}

type containerStatus struct {
	Name   string `json:"name"`
	Exists bool   `json:"exists"`
	State  string `json:"state"`
}

type labObject struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

type labProgress struct {
	Passed  int    `json:"passed"`
	Steps   int    `json:"steps"`
	Current string `json:"current"`
}

func runStatus(cmd *cobra.Command, g *globals, format string) error {
	l, _, _, _, err := g.loadLab()
	if err != nil {
		return err
	}
	st, err := g.env.Inspect(cmd.Context(), l)
	if err != nil {
		return err
	}
	name := l.Metadata.Name
	s := labStatus{
		Lab:     name,
		Up:      st.Up(),
		Stopped: st.Stopped,
		Cluster: clusterStatus{None: st.NoCluster, Name: provision.ClusterName(name), Exists: st.ClusterExists, APIReady: st.APIReady},
		Sandbox: containerStatus{Name: sandbox.ContainerName(name), Exists: st.Sandbox.Exists, State: st.Sandbox.Status},
		Grader:  containerStatus{Name: sandbox.GraderName(name), Exists: st.Grader.Exists, State: st.Grader.Status},
		Objects: []labObject{},
	}
	for _, o := range st.Objects {
		s.Objects = append(s.Objects, labObject{Kind: o.Kind, Name: o.Name})
	}
	if dir, err := statedir.Dir(os.Getenv, name); err == nil {
		if p, err := progress.NewStore(dir).Load(name); err == nil {
			s.Progress = &labProgress{Passed: len(p.Passed), Steps: len(l.Steps), Current: p.Current}
		}
	}
	if format == jsonFormat {
		err = writeJSON(g.streams.Out, s)
	} else {
		err = writeStatus(g.streams.Out, s)
	}
	if err != nil {
		return err
	}
	if !s.Up {
		return &ExitError{Code: exitNotUp}
	}
	return nil
}

// writeStatus prints s as aligned lines for a person.
func writeStatus(out io.Writer, s labStatus) error {
	cluster := "missing"
	switch {
	case s.Cluster.Exists && s.Stopped:
		cluster = "stopped"
	case s.Cluster.Exists && s.Cluster.APIReady:
		cluster = "running"
	case s.Cluster.Exists:
		cluster = "not answering (run `labctl up` to repair it)"
	}
	clusterLine := s.Cluster.Name + " " + cluster
	if s.Cluster.None {
		clusterLine = "none (the lab has no cluster)"
	}
	sandboxState := "missing"
	if s.Sandbox.Exists {
		sandboxState = s.Sandbox.State
	}
	graderState := "missing (run `labctl up` to make it)"
	if s.Grader.Exists {
		graderState = s.Grader.State
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lab:      %s\n", s.Lab)
	fmt.Fprintf(&b, "cluster:  %s\n", clusterLine)
	fmt.Fprintf(&b, "sandbox:  %s\n", sandboxState)
	fmt.Fprintf(&b, "grader:   %s\n", graderState)
	var objs []string
	for _, o := range s.Objects {
		objs = append(objs, o.Kind+" "+o.Name)
	}
	if len(objs) > 0 {
		fmt.Fprintf(&b, "objects:  %s\n", strings.Join(objs, ", "))
	}
	if s.Stopped {
		fmt.Fprintf(&b, "state:    stopped: its cluster, sandbox and /root are kept; run `labctl start` to resume it\n")
	}
	if p := s.Progress; p != nil {
		current := p.Current
		if current == "" {
			current = "(first not passed)"
		}
		fmt.Fprintf(&b, "progress: %d of %d steps passed, current step %s\n", p.Passed, p.Steps, current)
	}
	_, err := io.WriteString(out, b.String())
	return err
}
