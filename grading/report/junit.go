package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/textsafe"
)

// JUnitSuites is a JUnit XML document, the one model both `labctl grade`
// and `labctl test` write (through EncodeJUnit). Its counts are filled in
// from the cases when it is encoded.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one <testsuite>.
type JUnitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []JUnitProperty `xml:"properties>property,omitempty"`
	Cases      []JUnitCase     `xml:"testcase"`
}

// JUnitProperty is one <property> of a suite.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one <testcase>: passed when it has no problem.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitProblem `xml:"failure,omitempty"`
	Error     *JUnitProblem `xml:"error,omitempty"`
	Skipped   *JUnitProblem `xml:"skipped,omitempty"`
}

// JUnitProblem is a case's <failure>, <error> or <skipped>.
type JUnitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnitSeconds is a duration as JUnit's time attribute writes it.
func JUnitSeconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// EncodeJUnit counts doc's cases into its suites and itself, and writes it
// as an indented XML document with its header and a final newline.
func EncodeJUnit(w io.Writer, doc *JUnitSuites) error {
	doc.Tests, doc.Failures, doc.Errors, doc.Skipped = 0, 0, 0, 0
	for i := range doc.Suites {
		s := &doc.Suites[i]
		s.Tests, s.Failures, s.Errors, s.Skipped = len(s.Cases), 0, 0, 0
		for _, c := range s.Cases {
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Error != nil:
				s.Errors++
			case c.Skipped != nil:
				s.Skipped++
			}
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }

// WriteJUnit writes r as JUnit XML: one testsuite per step, one testcase
// per check (see the package documentation for how statuses map).
func WriteJUnit(w io.Writer, r *Report) error {
	doc := JUnitSuites{Name: "labctl " + r.Lab.Name}
	var total int64
	for _, s := range r.Steps {
		suite := JUnitSuite{
			Name:      s.ID,
			Timestamp: r.GradedAt.UTC().Format(time.RFC3339),
			Properties: []JUnitProperty{
				{Name: "title", Value: textsafe.EscapeLine(s.Title)},
				{Name: "lab.digest", Value: r.Lab.Digest},
			},
		}
		var suiteMs int64
		for _, c := range s.Checks {
			suiteMs += c.DurationMs
			suite.Cases = append(suite.Cases, junitCase(r.Lab.Name+"."+s.ID, c))
		}
		suite.Time = seconds(suiteMs)
		total += suiteMs
		doc.Suites = append(doc.Suites, suite)
	}
	doc.Time = seconds(total)
	if err := EncodeJUnit(w, &doc); err != nil {
		return fmt.Errorf("writing the JUnit report: %w", err)
	}
	return nil
}

// junitCase is the <testcase> of check c.
func junitCase(classname string, c Check) JUnitCase {
	tc := JUnitCase{Name: textsafe.EscapeLine(c.Name), Classname: classname, Time: seconds(c.DurationMs)}
	// Messages quote the learner's text: escaped, they cannot hold a
	// character XML 1.0 forbids or steer a terminal.
	message := textsafe.Escape(c.Message)
	text := message
	if c.Description != "" {
		text = textsafe.Escape(c.Description) + "\n" + message
	}
	switch {
	case c.Status == checks.Pass:
	case c.Optional:
		tc.Skipped = &JUnitProblem{Message: fmt.Sprintf("optional check did not pass (%s): %s", c.Status, message)}
	case c.Status == checks.Fail:
		tc.Failure = &JUnitProblem{Message: message, Type: "fail", Text: text}
	default:
		tc.Error = &JUnitProblem{Message: message, Type: "error", Text: text}
	}
	return tc
}

// LearnerSuite is r as one <testsuite> named name (a learner of a class):
// one <testcase> per check of every step, classname "<name>.<step>".
func LearnerSuite(name string, r *Report) JUnitSuite {
	suite := JUnitSuite{
		Name:       name,
		Timestamp:  r.GradedAt.UTC().Format(time.RFC3339),
		Properties: []JUnitProperty{{Name: "lab.digest", Value: r.Lab.Digest}},
	}
	var ms int64
	for _, s := range r.Steps {
		for _, c := range s.Checks {
			ms += c.DurationMs
			suite.Cases = append(suite.Cases, junitCase(name+"."+s.ID, c))
		}
	}
	suite.Time = seconds(ms)
	return suite
}
