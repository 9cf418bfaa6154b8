package classroom

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/provision/class"
)

// Status is `labctl class status -o json`; its field names are stable
// (docs/cli.md).
type Status struct {
	Lab      string          `json:"lab"`
	Prefix   string          `json:"prefix"`
	Learners []LearnerStatus `json:"learners"`
}

// LearnerStatus is one learner's line of a Status.
type LearnerStatus struct {
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

// Ready says whether every learner's lab is ready (none of an empty
// class).
func (s *Status) Ready() bool {
	for _, l := range s.Learners {
		if !l.Ready {
			return false
		}
	}
	return len(s.Learners) > 0
}

// Status is every learner's status, Parallel learners at a time: for each
// whose lab is ready, one round of every step's checks but those of
// probes (a probe changes the learner's cluster and runs their scripts
// while they work), recording nothing.
func (s *Session[L]) Status(ctx context.Context) (*Status, error) {
	infos, err := s.Class.Learners(ctx)
	if err != nil {
		return nil, err
	}
	st := &Status{Lab: s.Lab.Metadata.Name, Prefix: s.Prefix, Learners: make([]LearnerStatus, len(infos))}
	ForEach(len(infos), Parallel, func(i int) {
		st.Learners[i] = s.learnerStatus(ctx, infos[i])
	})
	return st, nil
}

func (s *Session[L]) learnerStatus(ctx context.Context, info class.LearnerInfo) LearnerStatus {
	st := LearnerStatus{Name: info.Name, Namespace: info.Namespace, Ready: info.Ready, Problem: info.Problem,
		Steps: len(s.Lab.Steps)}
	if !info.Ready && !info.Settling {
		if st.Problem == "" {
			st.Problem = "not ready"
		}
		return st
	}
	env, err := s.Connect(ctx, info.Name)
	if err != nil {
		st.Ready, st.Problem = false, err.Error()
		return st
	}
	defer env.Close()
	st.Ready, st.Problem = true, ""
	l := grading.WithoutProbes(s.Lab)
	results, err := grading.RunAll(ctx, env, nil, l, s.learnerProgress(info.Name), s.Catalog)
	if err != nil {
		st.Problem = "the checks could not run: " + err.Error()
		return st
	}
	r := report.Build(l, s.Digest, time.Now(), results)
	st.Score, st.MaxScore = &r.Score, &r.MaxScore
	for i, step := range r.Steps {
		if !step.Passed {
			st.Step, st.StepNumber = step.ID, i+1
			break
		}
	}
	return st
}

// WriteStatus writes s as an aligned table, nothing for a class without
// learners.
func WriteStatus(out io.Writer, s *Status) error {
	if len(s.Learners) == 0 {
		return nil
	}
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
	_, err := out.Write(b.Bytes())
	return err
}

// learnerProgress is the learner's progress as their store holds it, read
// once for the status's round: it gives the audit checks their windows.
// Progress that cannot be read is nil: audit checks then judge the whole
// log.
func (s *Session[L]) learnerProgress(learner string) *progress.Progress {
	if s.Store == nil {
		return nil
	}
	store, err := s.Store(learner)
	if err != nil {
		return nil
	}
	p, err := store.Load(s.Lab.Metadata.Name)
	if err != nil {
		return nil
	}
	return p
}
