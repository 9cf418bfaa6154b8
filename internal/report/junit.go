package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/textsafe"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }

// WriteJUnit writes r as JUnit XML: one testsuite per step, one testcase
// per check (see the package documentation for how statuses map).
func WriteJUnit(w io.Writer, r *Report) error {
	out := junitSuites{Name: "labctl " + r.Lab.Name}
	var total int64
	for _, s := range r.Steps {
		suite := junitSuite{
			Name:      s.ID,
			Timestamp: r.GradedAt.UTC().Format(time.RFC3339),
			Properties: []junitProperty{
				{Name: "title", Value: textsafe.EscapeLine(s.Title)},
				{Name: "lab.digest", Value: r.Lab.Digest},
			},
		}
		var suiteMs int64
		for _, c := range s.Checks {
			tc := junitCase{Name: textsafe.EscapeLine(c.Name), Classname: r.Lab.Name + "." + s.ID, Time: seconds(c.DurationMs)}
			// Messages quote the learner's text: escaped, they cannot
			// hold a character XML 1.0 forbids or steer a terminal.
			message := textsafe.Escape(c.Message)
			text := message
			if c.Description != "" {
				text = textsafe.Escape(c.Description) + "\n" + message
			}
			switch {
			case c.Status == checks.Pass:
			case c.Optional:
				tc.Skipped = &junitProblem{Message: fmt.Sprintf("optional check did not pass (%s): %s", c.Status, message)}
				suite.Skipped++
			case c.Status == checks.Fail:
				tc.Failure = &junitProblem{Message: message, Type: "fail", Text: text}
				suite.Failures++
			default:
				tc.Error = &junitProblem{Message: message, Type: "error", Text: text}
				suite.Errors++
			}
			suite.Tests++
			suiteMs += c.DurationMs
			suite.Cases = append(suite.Cases, tc)
		}
		suite.Time = seconds(suiteMs)
		total += suiteMs
		out.Tests += suite.Tests
		out.Failures += suite.Failures
		out.Errors += suite.Errors
		out.Skipped += suite.Skipped
		out.Suites = append(out.Suites, suite)
	}
	out.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("writing the JUnit report: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("writing the JUnit report: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("writing the JUnit report: %w", err)
	}
	return nil
}
