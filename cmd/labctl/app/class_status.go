package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/internal/grading"
	"github.com/labctl/labctl/internal/report"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/provision"
)

func newClassStatusCommand(g *globals) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show each learner's lab: ready or not, the step they are on, their score",
		Long: "Lists the class's learners as the cluster reports them. For each learner whose lab is ready, one round\n" +
			"of every step's checks gives the step they are on and their score (nothing is recorded); for the others\n" +
			"it says what is wrong. Status runs no probe, nor the checks that judge one (a probe changes the learner's\n" +
			"cluster while they work): the score is of the checks it runs; `labctl class grade` runs them all.\n" +
			"Exit status: 0 when every learner is ready, 3 when one is not or the class has no learner, 2 when the\n" +
			"cluster cannot be read.",
		Example: "  labctl class status\n  labctl class status -o json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runClassStatus(cmd.Context(), g, format)
		},
	}
	addOutputFlag(cmd, &format, textFormat, jsonFormat)
	return cmd
}

// classStatus is `labctl class status -o json`; its field names are stable
// (docs/cli.md).
type classStatus struct {
	Lab      string          `json:"lab"`
	Prefix   string          `json:"prefix"`
	Learners []learnerStatus `json:"learners"`
}

type learnerStatus struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Ready     bool   `json:"ready"`
	// Problem says why the lab is not ready, or why its checks could not
	// run; "" when neither.
	Problem string `json:"problem"`
	// Step is the first step whose checks do not all pass ("" when every
	// step passes or no checks ran), StepNumber its number from 1.
	Step       string `json:"step"`
	StepNumber int    `json:"stepNumber"`
	Steps      int    `json:"steps"`
	// Score and MaxScore are null when no checks ran.
	Score    *int `json:"score"`
	MaxScore *int `json:"maxScore"`
}

func runClassStatus(ctx context.Context, g *globals, format string) error {
	cs, err := g.openClass(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	infos, err := cs.class.Learners(ctx)
	if err != nil {
		return err
	}
	s := classStatus{Lab: cs.st.lab.Metadata.Name, Prefix: cs.prefix, Learners: make([]learnerStatus, len(infos))}
	inParallel(len(infos), classParallel, func(i int) {
		s.Learners[i] = cs.learnerStatus(ctx, infos[i])
	})
	if format == jsonFormat {
		err = writeJSON(g.streams.Out, s)
	} else {
		err = writeClassStatus(g.streams.Out, s)
	}
	if err != nil {
		return err
	}
	for _, l := range s.Learners {
		if !l.Ready {
			return &ExitError{Code: exitNotUp}
		}
	}
	if len(s.Learners) == 0 {
		return &ExitError{Code: exitNotUp, Err: fmt.Errorf("the class has no learner on this cluster (prefix %s): `labctl class up` makes them", cs.prefix)}
	}
	return nil
}

// learnerStatus is one learner's line: a round of every step's checks but
// those of probes when the lab is ready.
func (cs *classSession) learnerStatus(ctx context.Context, info provision.LearnerInfo) learnerStatus {
	st := learnerStatus{Name: info.Name, Namespace: info.Namespace, Ready: info.Ready, Problem: info.Problem,
		Steps: len(cs.st.lab.Steps)}
	if !info.Ready {
		if st.Problem == "" {
			st.Problem = "not ready"
		}
		return st
	}
	env, err := cs.connect(ctx, info.Name)
	if err != nil {
		st.Ready, st.Problem = false, err.Error()
		return st
	}
	defer env.Close()
	// A probe changes the learner's cluster and runs their scripts while
	// they work: status runs none, nor the checks that judge one.
	l := grading.WithoutProbes(cs.st.lab)
	results, err := grading.RunAll(ctx, env, nil, l, cs.st.catalog)
	if err != nil {
		st.Problem = "the checks could not run: " + err.Error()
		return st
	}
	r := report.Build(l, cs.st.digest, time.Now(), results)
	st.Score, st.MaxScore = &r.Score, &r.MaxScore
	for i, step := range r.Steps {
		if !step.Passed {
			st.Step, st.StepNumber = step.ID, i+1
			break
		}
	}
	return st
}

// writeClassStatus prints s as an aligned table.
func writeClassStatus(out io.Writer, s classStatus) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LEARNER\tSTEP\tSCORE\tSTATE")
	for _, l := range s.Learners {
		step, score, state := "-", "-", "ready"
		if l.Score != nil {
			score = fmt.Sprintf("%d/%d", *l.Score, *l.MaxScore)
			step = "all passed"
			if l.Step != "" {
				step = fmt.Sprintf("%d/%d %s", l.StepNumber, l.Steps, l.Step)
			}
		}
		if l.Problem != "" {
			state = textsafe.EscapeLine(l.Problem)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Name, step, score, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Learners) == 0 {
		b.Reset()
	}
	_, err := out.Write(b.Bytes())
	return err
}
