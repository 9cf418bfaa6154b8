package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/atomicfile"
	"github.com/labctl/labctl/internal/grading"
	"github.com/labctl/labctl/internal/report"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/provision"
)

type classGradeOptions struct {
	format string
	output string
}

func newClassGradeCommand(g *globals) *cobra.Command {
	var o classGradeOptions
	cmd := &cobra.Command{
		Use:   "grade",
		Short: "Grade every learner in one report",
		Long: "Runs every step's checks of every learner's lab, in parallel, records each grade in the learner's\n" +
			"history under the lab's state directory (class/LEARNER) and writes one report: a table, JSON (each\n" +
			"learner's report is `labctl grade -o json`'s) or JUnit XML (one testsuite per learner).\n" +
			"Exit status: 0 when every learner passes, 1 when one fails, 2 when one could not be graded.",
		Example: "  labctl class grade\n  labctl class grade -o json\n  labctl class grade -o junit --output-file class.xml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			deprecatedFormat(cmd, g.streams.Err)
			return runClassGrade(cmd.Context(), g, o)
		},
	}
	addReportFlags(cmd, &o.format, &o.output)
	return cmd
}

// classReport is `labctl class grade -o json`; its field names are stable
// (docs/cli.md).
type classReport struct {
	Lab      string         `json:"lab"`
	Learners []learnerGrade `json:"learners"`
}

type learnerGrade struct {
	Name string `json:"name"`
	// Report is the learner's grade report (internal/report's JSON), null
	// when the learner could not be graded; Error then says why.
	Report  *report.Report `json:"report"`
	Error   string         `json:"error"`
	verdict grading.Verdict
}

func runClassGrade(ctx context.Context, g *globals, o classGradeOptions) error {
	cs, err := g.openClass(ctx)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	defer cs.Close()
	infos, err := cs.class.Learners(ctx)
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	if len(infos) == 0 {
		return &ExitError{Code: exitError, Err: fmt.Errorf("the class has no learner on this cluster (prefix %s): `labctl class up` makes them", cs.prefix)}
	}
	rep := classReport{Lab: cs.st.lab.Metadata.Name, Learners: make([]learnerGrade, len(infos))}
	inParallel(len(infos), classParallel, func(i int) {
		rep.Learners[i] = cs.gradeLearner(ctx, infos[i])
	})
	var b bytes.Buffer
	switch o.format {
	case jsonFormat:
		err = writeJSON(&b, rep)
	case junitFormat:
		err = writeClassJUnit(&b, rep)
	default:
		err = writeClassGrade(&b, rep)
	}
	if err != nil {
		return &ExitError{Code: exitError, Err: err}
	}
	if o.output == "" {
		if _, err := g.streams.Out.Write(b.Bytes()); err != nil {
			return &ExitError{Code: exitError, Err: err}
		}
	} else {
		if err := atomicfile.WriteFile(o.output, b.Bytes(), 0o644); err != nil {
			return &ExitError{Code: exitError, Err: fmt.Errorf("writing the report to %s: %w", o.output, err)}
		}
		fmt.Fprintf(g.statusOut(), cs.st.catalog.ReportWritten+"\n", o.output)
		if o.format != textFormat {
			fmt.Fprintln(g.statusOut(), classTotal(rep))
		}
	}
	return classVerdict(rep)
}

// gradeLearner grades one learner as `labctl grade` does, into their own
// history.
func (cs *classSession) gradeLearner(ctx context.Context, info provision.LearnerInfo) learnerGrade {
	lg := learnerGrade{Name: info.Name, verdict: grading.Errored}
	if !info.Ready {
		lg.Error = "the learner's lab is not ready: " + info.Problem
		return lg
	}
	env, err := cs.connect(ctx, info.Name)
	if err != nil {
		lg.Error = err.Error()
		return lg
	}
	defer env.Close()
	st, err := cs.learnerState(info.Name)
	if err != nil {
		lg.Error = err.Error()
		return lg
	}
	gr := &grading.Grader{Lab: st.lab, Digest: st.digest, Store: st.store, Checker: env, Scripts: env,
		Catalog: st.catalog, Out: io.Discard, Err: io.Discard}
	r, v, err := gr.Grade(ctx)
	if err != nil {
		lg.Error = err.Error()
		return lg
	}
	lg.Report, lg.verdict = r, v
	return lg
}

// classVerdict is the exit status of a class grade: 2 when a learner could
// not be graded, else 1 when one fails, else 0.
func classVerdict(rep classReport) error {
	worst := grading.Passed
	for _, l := range rep.Learners {
		switch {
		case l.verdict == grading.Errored:
			return &ExitError{Code: exitError}
		case l.verdict == grading.Failed:
			worst = grading.Failed
		}
	}
	return verdictError(worst, nil)
}

// writeClassGrade prints one row per learner and a total line.
func writeClassGrade(out io.Writer, rep classReport) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LEARNER\tSCORE\tCHECKS\tFIRST FAILING")
	for _, l := range rep.Learners {
		if l.Report == nil {
			fmt.Fprintf(tw, "%s\t-\t-\tnot graded: %s\n", l.Name, textsafe.EscapeLine(l.Error))
			continue
		}
		sum := l.Report.Summary()
		fmt.Fprintf(tw, "%s\t%d/%d\t%d/%d\t%s\n", l.Name, l.Report.Score, l.Report.MaxScore,
			sum.Required-sum.Failed-sum.Errored, sum.Required, firstFailing(l.Report))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(&b, classTotal(rep))
	_, err := out.Write(b.Bytes())
	return err
}

// firstFailing is "STEP: CHECK" of the first required check that does not
// pass, or "-".
func firstFailing(r *report.Report) string {
	for _, s := range r.Steps {
		for _, c := range s.Checks {
			if c.Status != checks.Pass && !c.Optional {
				what := textsafe.EscapeLine(s.ID + ": " + c.Name)
				if c.Status == checks.Error {
					what += " (could not run)"
				}
				return what
			}
		}
	}
	return "-"
}

// classTotal is the report's total line.
func classTotal(rep classReport) string {
	var passed, failed, errored int
	for _, l := range rep.Learners {
		switch l.verdict {
		case grading.Passed:
			passed++
		case grading.Failed:
			failed++
		default:
			errored++
		}
	}
	total := fmt.Sprintf("%d learner(s): %d passed, %d failed", len(rep.Learners), passed, failed)
	if errored > 0 {
		total += fmt.Sprintf(", %d could not be graded", errored)
	}
	return total
}

// writeClassJUnit writes one testsuite per learner; a learner who could
// not be graded is a suite of one errored case.
func writeClassJUnit(w io.Writer, rep classReport) error {
	doc := report.JUnitSuites{Name: "labctl class " + rep.Lab}
	var took time.Duration
	for _, l := range rep.Learners {
		if l.Report == nil {
			doc.Suites = append(doc.Suites, report.JUnitSuite{Name: l.Name, Time: "0.000", Cases: []report.JUnitCase{{
				Name: "grade", Classname: l.Name, Time: "0.000",
				Error: &report.JUnitProblem{Message: textsafe.Escape(l.Error), Type: "error"},
			}}})
			continue
		}
		doc.Suites = append(doc.Suites, report.LearnerSuite(l.Name, l.Report))
		for _, s := range l.Report.Steps {
			for _, c := range s.Checks {
				took += time.Duration(c.DurationMs) * time.Millisecond
			}
		}
	}
	doc.Time = report.JUnitSeconds(took)
	if err := report.EncodeJUnit(w, &doc); err != nil {
		return fmt.Errorf("writing the JUnit report: %w", err)
	}
	return nil
}
