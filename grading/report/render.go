package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/textsafe"
)

// Format is a rendering of a report.
type Format string

// The formats of `labctl grade -o`.
const (
	Text  Format = "text"
	JSON  Format = "json"
	JUnit Format = "junit"
)

// ParseFormat reads the value of -o.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case Text, JSON, JUnit:
		return f, nil
	case "":
		return Text, nil
	}
	return "", fmt.Errorf("unknown report format %q: use text, json or junit", s)
}

// Write renders r in format f; text uses the messages of c.
func Write(w io.Writer, r *Report, f Format, c *msg.Catalog) error {
	switch f {
	case JSON:
		return WriteJSON(w, r)
	case JUnit:
		return WriteJUnit(w, r)
	default:
		return WriteText(w, r, c)
	}
}

// WriteJSON writes r as the documented JSON object, indented, with a final
// newline.
func WriteJSON(w io.Writer, r *Report) error { return writeJSON(w, r) }

// stepStatus is the status a step shows: fail when a required check
// failed, else error when one could not run, else pass.
func stepStatus(s Step) checks.Status {
	var rs []checks.Result
	for _, c := range s.Checks {
		rs = append(rs, checks.Result{Status: c.Status, Optional: c.Optional})
	}
	sum := checks.Summarize(rs)
	switch {
	case sum.Failed > 0:
		return checks.Fail
	case sum.Errored > 0:
		return checks.Error
	}
	return checks.Pass
}

// WriteText writes r as a table for a person: a points column, then each
// step and under it each check with its mark, and the message of every check
// that did not pass; then the score and the verdict.
func WriteText(w io.Writer, r *Report, c *msg.Catalog) error {
	b := bufio.NewWriter(w)
	title := r.Lab.Title
	if title == "" {
		title = r.Lab.Name
	}
	id := r.Lab.Name
	if r.Lab.Version != "" {
		id += " " + r.Lab.Version
	}
	fmt.Fprintf(b, "%s (%s)\n", textsafe.EscapeLine(title), textsafe.EscapeLine(id))
	if r.Lab.NodeRoot {
		fmt.Fprintln(b, c.NodeRoot)
	}

	width := displayWidth(c.HeaderPoints)
	points := func(got, total int) string { return fmt.Sprintf("%d/%d", got, total) }
	for _, s := range r.Steps {
		var got, total int
		for _, ch := range s.Checks {
			total += ch.Points
			if ch.Status == checks.Pass {
				got += ch.Points
			}
			width = max(width, len(points(ch.Points, ch.Points)))
		}
		width = max(width, len(points(got, total)))
	}
	pad := func(s string) string { return strings.Repeat(" ", width-displayWidth(s)) + s }
	indent := strings.Repeat(" ", width)

	fmt.Fprintf(b, "%s  %s / %s\n", pad(c.HeaderPoints), c.HeaderStep, c.HeaderCheck)
	for i, s := range r.Steps {
		var got, total int
		for _, ch := range s.Checks {
			total += ch.Points
			if ch.Status == checks.Pass {
				got += ch.Points
			}
		}
		line := fmt.Sprintf("%d. %s", i+1, s.ID)
		if s.Title != "" {
			line += ": " + textsafe.EscapeLine(s.Title)
		}
		if s.PassedAt != nil {
			line += fmt.Sprintf(c.KeptFrom, s.PassedAt.Local().Format("2006-01-02 15:04"))
		}
		if s.SolutionShownAt != nil {
			line += fmt.Sprintf(c.SolutionShown, s.SolutionShownAt.Local().Format("2006-01-02 15:04"))
		}
		fmt.Fprintf(b, "%s  %s %s\n", pad(points(got, total)), Mark(stepStatus(s)), line)
		for _, ch := range s.Checks {
			earned := 0
			if ch.Status == checks.Pass {
				earned = ch.Points
			}
			r := checks.Result{Name: ch.Name, Description: ch.Description, Status: ch.Status, Message: ch.Message, Optional: ch.Optional}
			fmt.Fprintf(b, "%s    %s\n", pad(points(earned, ch.Points)), ResultLine(r, c, false))
			b.WriteString(ResultMessage(r, indent+"      "))
		}
		b.WriteString(MistakeText(s.Mistakes, c, indent+"    "))
	}
	sum := r.Summary()
	fmt.Fprintf(b, c.Score+"\n", r.Score, r.MaxScore)
	if sum.Passed() {
		fmt.Fprintln(b, c.GradePassed)
	} else {
		fmt.Fprintf(b, c.GradeNotPassed+"\n", sum.Failed+sum.Errored)
	}
	if sum.Errored > 0 {
		fmt.Fprintf(b, c.CouldNotRun+"\n", sum.Errored)
	}
	return b.Flush()
}

// displayWidth counts the terminal columns of s: East Asian wide and
// full-width characters take two.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		if isWide(r) {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func isWide(r rune) bool {
	return r >= 0x1100 && (r <= 0x115f || // Hangul Jamo
		(r >= 0x2e80 && r <= 0xa4cf && r != 0x303f) || // CJK … Yi
		(r >= 0xac00 && r <= 0xd7a3) || // Hangul syllables
		(r >= 0xf900 && r <= 0xfaff) || // CJK compatibility ideographs
		(r >= 0xfe30 && r <= 0xfe4f) || // CJK compatibility forms
		(r >= 0xff00 && r <= 0xff60) || // full-width forms
		(r >= 0xffe0 && r <= 0xffe6) ||
		(r >= 0x20000 && r <= 0x3fffd))
}

// writeJSON writes v indented, with a final newline and without escaping
// HTML, as every JSON report is written.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing the JSON report: %w", err)
	}
	return nil
}
