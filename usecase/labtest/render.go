package labtest

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/internal/atomicfile"
	"github.com/labctl/labctl/internal/textsafe"
)

// Write renders r in format f (the formats of `labctl grade -o`).
func Write(w io.Writer, r *Report, f report.Format) error {
	switch f {
	case report.JSON:
		return WriteJSON(w, r)
	case report.JUnit:
		return WriteJUnit(w, r)
	case report.Text, "":
		return WriteText(w, r)
	}
	return fmt.Errorf("unknown report format %q; use text, json or junit", f)
}

// WriteJSON writes r as one indented JSON object.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes a table with a row per phase, every failure under its
// phase, then the totals and the verdict.
func WriteText(w io.Writer, r *Report) error {
	stepW, phaseW := len("STEP"), len("PHASE")
	for _, p := range r.Phases {
		stepW = max(stepW, utf8.RuneCountInString(stepCell(p)))
		phaseW = max(phaseW, utf8.RuneCountInString(phaseName(p)))
	}
	var b strings.Builder
	row := func(mark, step, phase, time string) {
		fmt.Fprintf(&b, "%s %s  %s  %s\n", mark, pad(step, stepW), pad(phase, phaseW), time)
	}
	row(" ", "STEP", "PHASE", "TIME")
	for _, p := range r.Phases {
		mark := "✓"
		switch {
		case !p.Passed:
			mark = "✗"
		case p.Skipped:
			mark = "-"
		}
		row(mark, stepCell(p), phaseName(p), seconds(p.Duration))
		if p.Note != "" {
			fmt.Fprintf(&b, "    %s\n", textsafe.Escape(p.Note))
		}
		for _, f := range p.Failures {
			fmt.Fprintf(&b, "    %s\n", strings.ReplaceAll(textsafe.Escape(f.String()), "\n", "\n      "))
		}
		if p.Mutants != nil {
			for _, sv := range p.Mutants.Survived {
				if sv.Alternative != "" {
					fmt.Fprintf(&b, "    survivor declared right by alternative %s: %s\n", textsafe.Escape(sv.Alternative), textsafe.Escape(sv.ID))
				}
			}
			for _, n := range p.Mutants.NotApplied {
				fmt.Fprintf(&b, "    not applicable: %s: %s\n", textsafe.Escape(n.ID), textsafe.Escape(n.Why))
			}
		}
	}
	b.WriteString("\n")
	if r.Graded {
		fmt.Fprintf(&b, "Grade: %d/%d points\n", r.Score, r.MaxScore)
	}
	fmt.Fprintf(&b, "Resets: %d, %s in all%s%s\n", r.Resets, seconds(r.ResetTime), resetParts(r.ResetParts), kept(r))
	fmt.Fprintf(&b, "Time: %s\n", seconds(r.Duration))
	what := "lab " + r.Lab
	if r.Step != "" {
		what += " step " + r.Step
	}
	if r.Only != "" {
		what += " (only " + r.Only + ")"
	}
	if r.Passed {
		fmt.Fprintf(&b, "PASS: %s proves itself\n", what)
	} else {
		n := len(r.Failures())
		fmt.Fprintf(&b, "FAIL: %s: %d %s\n", what, n, plural(n, "failure"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// phaseName says what a phase proves, for people.
func phaseName(p Phase) string {
	switch p.Kind {
	case FastForward:
		return "solve the earlier steps"
	case Setup:
		return "setup"
	case Before:
		return "checks fail before the solve"
	case Mistake:
		return p.Script + " is caught"
	case Alternative:
		if p.Skipped {
			return p.Script + " skipped: a mutant, judged only with --mutate"
		}
		return p.Script + " passes every check"
	case Reset:
		return "reset to the step's start"
	case Undo:
		if p.Note != "" {
			return p.Script + " not undone in place"
		}
		return p.Script + " undone in place"
	case Solve:
		return "solve passes every check"
	case Again:
		return "no check stops passing after a pause"
	case Grade:
		return "grade is 100 %"
	case FinalReset:
		return "reset brings the first step back"
	case Mutate:
		if p.Mutants != nil {
			return "mutants: " + p.Mutants.String()
		}
		return "mutants of the solve fail a check"
	}
	return string(p.Kind)
}

// resetParts lists where the resets spent their time, longest first.
// kept says how many resets kept the sandbox, restoring its home in place.
func kept(r *Report) string {
	var s string
	if r.SandboxesKept > 0 {
		s = fmt.Sprintf("; %d kept the sandbox, restoring /root in place", r.SandboxesKept)
	}
	if r.UndoneInPlace > 0 {
		s += fmt.Sprintf("; %d %s undone in place instead, %s in all", r.UndoneInPlace, plural(r.UndoneInPlace, "case"), seconds(r.UndoTime))
	}
	if r.StepStartsRestored > 0 {
		s += fmt.Sprintf("; %d went back to the step's start as it was kept, replaying no earlier step", r.StepStartsRestored)
	}
	return s
}

func resetParts(parts map[string]time.Duration) string {
	if len(parts) == 0 {
		return ""
	}
	names := make([]string, 0, len(parts))
	for k := range parts {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if parts[names[i]] != parts[names[j]] {
			return parts[names[i]] > parts[names[j]]
		}
		return names[i] < names[j]
	})
	for i, k := range names {
		names[i] = k + " " + seconds(parts[k])
	}
	return " (" + strings.Join(names, ", ") + ")"
}

func stepCell(p Phase) string {
	if p.Step == "" {
		return "-"
	}
	return p.Step
}

// pad fills s with spaces to width runes.
func pad(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(s)))
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// WriteJUnit writes r as JUnit XML: one testsuite per step (and one named
// after the lab for the grade and the final reset), one testcase per phase.
func WriteJUnit(w io.Writer, r *Report) error {
	doc := report.JUnitSuites{Name: "labctl test " + r.Lab, Time: report.JUnitSeconds(r.Duration)}
	index := map[string]int{}
	durations := map[string]time.Duration{}
	for _, p := range r.Phases {
		suite := p.Step
		if suite == "" || p.Kind == FinalReset {
			suite = r.Lab
		}
		i, ok := index[suite]
		if !ok {
			i = len(doc.Suites)
			index[suite] = i
			doc.Suites = append(doc.Suites, report.JUnitSuite{Name: suite})
		}
		c := report.JUnitCase{Name: phaseName(p), Classname: r.Lab + "." + suite, Time: report.JUnitSeconds(p.Duration)}
		if p.Skipped {
			c.Skipped = &report.JUnitProblem{Message: "a mutant declared right, judged only with --mutate"}
		}
		if !p.Passed {
			lines := make([]string, len(p.Failures))
			for j, f := range p.Failures {
				lines[j] = f.String()
			}
			c.Failure = &report.JUnitProblem{Message: firstLine(lines), Text: strings.Join(lines, "\n")}
		}
		doc.Suites[i].Cases = append(doc.Suites[i].Cases, c)
		durations[suite] += p.Duration
	}
	for i := range doc.Suites {
		doc.Suites[i].Time = report.JUnitSeconds(durations[doc.Suites[i].Name])
	}
	return report.EncodeJUnit(w, &doc)
}

func firstLine(lines []string) string {
	if len(lines) == 0 {
		return "failed"
	}
	l, _, _ := strings.Cut(lines[0], "\n")
	return l
}

// WriteFile renders r in format f into path atomically (see package
// atomicfile), so a reader never sees half a report.
func WriteFile(path string, r *Report, f report.Format) error {
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error { return Write(w, r, f) })
	if err != nil {
		return fmt.Errorf("writing the test report: %w", err)
	}
	return nil
}
