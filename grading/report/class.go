package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/textsafe"
)

// Class is the grade of every learner of a class, `labctl class grade`'s
// report. As JSON its field names are stable (docs/cli.md):
//
//	{
//	  "lab": string,       // metadata.name
//	  "learners": [{       // in name order
//	    "name":   string,
//	    "report": object,  // the learner's Report, null when they could not be graded
//	    "error":  string   // why they could not be graded; "" when graded
//	  }]
//	}
//
// As JUnit XML it is one testsuite per learner (LearnerSuite); a learner
// who could not be graded is a suite of one errored case named "grade".
type Class struct {
	Lab      string         `json:"lab"`
	Learners []ClassLearner `json:"learners"`
}

// ClassLearner is one learner's grade in a Class.
type ClassLearner struct {
	Name string `json:"name"`
	// Report is the learner's grade report, nil when the learner could
	// not be graded; Error then says why.
	Report *Report `json:"report"`
	Error  string  `json:"error"`
}

// Verdict is the learner's: Errored when they could not be graded.
func (l ClassLearner) Verdict() checks.Verdict {
	if l.Report == nil {
		return checks.Errored
	}
	return l.Report.Summary().Verdict()
}

// Verdict is the class's: Errored when a learner could not be graded, else
// Failed when one fails, else Passed.
func (c *Class) Verdict() checks.Verdict {
	worst := checks.Passed
	for _, l := range c.Learners {
		switch l.Verdict() {
		case checks.Errored:
			return checks.Errored
		case checks.Failed:
			worst = checks.Failed
		}
	}
	return worst
}

// Total is the report's total line: "N learner(s): P passed, F failed",
// and how many could not be graded when any.
func (c *Class) Total() string {
	var passed, failed, errored int
	for _, l := range c.Learners {
		switch l.Verdict() {
		case checks.Passed:
			passed++
		case checks.Failed:
			failed++
		default:
			errored++
		}
	}
	total := fmt.Sprintf("%d learner(s): %d passed, %d failed", len(c.Learners), passed, failed)
	if errored > 0 {
		total += fmt.Sprintf(", %d could not be graded", errored)
	}
	return total
}

// WriteClass renders c in format f.
func WriteClass(w io.Writer, c *Class, f Format) error {
	switch f {
	case JSON:
		return writeJSON(w, c)
	case JUnit:
		return WriteClassJUnit(w, c)
	default:
		return WriteClassText(w, c)
	}
}

// WriteClassFile renders c in format f into path atomically, as WriteFile
// does a learner's report.
func WriteClassFile(path string, c *Class, f Format) error {
	var b bytes.Buffer
	if err := WriteClass(&b, c, f); err != nil {
		return err
	}
	return writeFile(path, b.Bytes())
}

// WriteClassText writes one row per learner (score, required checks
// passed of all, the first failing check) and the total line.
func WriteClassText(w io.Writer, c *Class) error {
	b := bufio.NewWriter(w)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LEARNER\tSCORE\tCHECKS\tFIRST FAILING")
	for _, l := range c.Learners {
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
	fmt.Fprintln(b, c.Total())
	return b.Flush()
}

// firstFailing is "STEP: CHECK" of the first required check that does not
// pass, or "-".
func firstFailing(r *Report) string {
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

// WriteClassJUnit writes one testsuite per learner; a learner who could
// not be graded is a suite of one errored case.
func WriteClassJUnit(w io.Writer, c *Class) error {
	doc := JUnitSuites{Name: "labctl class " + c.Lab}
	var took time.Duration
	for _, l := range c.Learners {
		if l.Report == nil {
			doc.Suites = append(doc.Suites, JUnitSuite{Name: l.Name, Time: "0.000", Cases: []JUnitCase{{
				Name: "grade", Classname: l.Name, Time: "0.000",
				Error: &JUnitProblem{Message: textsafe.Escape(l.Error), Type: "error"},
			}}})
			continue
		}
		doc.Suites = append(doc.Suites, LearnerSuite(l.Name, l.Report))
		for _, s := range l.Report.Steps {
			for _, ch := range s.Checks {
				took += time.Duration(ch.DurationMs) * time.Millisecond
			}
		}
	}
	doc.Time = JUnitSeconds(took)
	if err := EncodeJUnit(w, &doc); err != nil {
		return fmt.Errorf("writing the JUnit report: %w", err)
	}
	return nil
}
