package shell

import (
	"fmt"
	"strings"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
)

// crlf turns \n line ends into \r\n, as a terminal in raw mode needs.
func crlf(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", "\r\n")
}

// shown is a line the lab's author wrote (a title, a check's name or
// description) as the terminal may show it: escaped (textsafe).
func shown(s string) string { return textsafe.EscapeLine(s) }

// paint wraps text in an SGR colour when colour is on.
func (s *Session) paint(sgr, text string) string {
	if !s.cfg.Color {
		return text
	}
	return "\x1b[" + sgr + "m" + text + "\x1b[0m"
}

// stepNumber is step's 1-based position in the lab.
func (s *Session) stepNumber(id string) int {
	for i, st := range s.lab().Steps {
		if st.ID == id {
			return i + 1
		}
	}
	return 0
}

// stepText is a step's heading and instructions.
func (s *Session) stepText(heading string, step lab.Step) string {
	var b strings.Builder
	b.WriteString(s.paint("1", heading) + "\n")
	if in := s.md.Render(step.Instructions); in != "" {
		b.WriteString("\n" + indent(in) + "\n")
	}
	return b.String()
}

// goalText is the lab's title and goal, shown when the shell starts and in
// lab status; "" when the lab states no goal.
func (s *Session) goalText() string {
	goal := s.md.Render(s.lab().Metadata.Goal)
	if goal == "" {
		return ""
	}
	return s.paint("1", s.catalog().Goal) + "\n" + indent(goal) + "\n"
}

// whyText says why step matters, as the lab explains it.
func (s *Session) whyText(step lab.Step) string {
	why := s.md.Render(step.Why)
	if why == "" {
		return fmt.Sprintf(s.catalog().NoWhy, shown(step.Title)) + "\n"
	}
	return s.paint("1", fmt.Sprintf(s.catalog().Why, shown(step.Title))) + "\n" + indent(why) + "\n"
}

// labWhyText says why the lab matters, as its metadata.why explains; ""
// when it does not.
func (s *Session) labWhyText() string {
	why := s.md.Render(s.lab().Metadata.Why)
	if why == "" {
		return ""
	}
	return s.paint("1", s.catalog().LabWhy) + "\n" + indent(why) + "\n"
}

func indent(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return strings.Join(lines, "\n")
}

// welcome is shown when the shell starts.
func (s *Session) welcome(st State) string {
	n := len(s.lab().Steps)
	if st.Current == nil {
		return fmt.Sprintf(s.catalog().AllDone, n) + "\n"
	}
	heading := fmt.Sprintf(s.catalog().ShellStep, s.stepNumber(st.Current.ID), n, shown(st.Current.Title))
	goal := s.goalText()
	if goal != "" {
		goal += "\n"
	}
	return goal + s.stepText(heading, *st.Current) + "\n" + s.catalog().ShellHelp + "\n\n"
}

// passedBanner says step passed and what comes next.
func (s *Session) passedBanner(step lab.Step, after State) string {
	var b strings.Builder
	b.WriteString(s.paint("1;32", "✓ "+fmt.Sprintf(s.catalog().StepPassed, shown(step.Title))) + "\n")
	if strings.TrimSpace(step.Why) != "" {
		b.WriteString("\n" + s.whyText(step))
	}
	n := len(s.lab().Steps)
	if after.Current == nil {
		b.WriteString("\n" + fmt.Sprintf(s.catalog().AllDone, n) + "\n")
		if why := s.labWhyText(); why != "" {
			b.WriteString("\n" + why)
		}
		return b.String()
	}
	heading := fmt.Sprintf(s.catalog().NextStep, s.stepNumber(after.Current.ID), n, shown(after.Current.Title))
	b.WriteString("\n" + s.stepText(heading, *after.Current))
	return b.String()
}

// resultsText lists each check with its mark and sums up the step, as
// `labctl check` does (report.StepResults).
func (s *Session) resultsText(step lab.Step, results []checks.Result, ev report.Evidence) string {
	return report.StepResults(&step, results, ev, s.catalog(), s.cfg.Color)
}

// couldNotRunText reports checks that could not run at all.
func (s *Session) couldNotRunText(err error) string {
	l := report.StatusLook(checks.Error)
	return s.paint(l.SGR, l.Mark+" "+fmt.Sprintf(s.catalog().CouldNotRun, 1)) + "\n  (" + textsafe.Escape(err.Error()) + ")\n"
}

// statusText lists the steps, marking those passed and the current one.
func (s *Session) statusText(st State) string {
	var b strings.Builder
	title := shown(s.lab().Metadata.Title)
	if title == "" {
		title = s.lab().Metadata.Name
	}
	b.WriteString(fmt.Sprintf(s.catalog().Progress, title, len(st.Passed), len(s.lab().Steps)) + "\n")
	if goal := s.md.Render(s.lab().Metadata.Goal); goal != "" {
		b.WriteString(indent(goal) + "\n")
	}
	for i, step := range s.lab().Steps {
		mark := " "
		switch {
		case st.Passed[step.ID]:
			mark = s.paint("32", "✓")
		case st.Current != nil && st.Current.ID == step.ID:
			mark = "→"
		}
		b.WriteString(fmt.Sprintf("  %s %d. %s\n", mark, i+1, shown(step.Title)))
	}
	return b.String()
}

// Reloaded makes the session speak l (the lab's file, named file, was
// edited and reloaded: labctl shell --watch) with cat's words, and says so
// on the terminal with the edited lab's lint warnings.
func (s *Session) Reloaded(l *lab.Lab, cat *msg.Catalog, file string, warnings []string) error {
	if err := s.SetLab(l, cat); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(s.paint("1", fmt.Sprintf(s.catalog().LabReloaded, textsafe.Escape(file), len(l.Steps))) + "\n")
	for _, w := range warnings {
		b.WriteString("  " + s.paint("33", textsafe.Escape(w)) + "\n")
	}
	s.Notify(b.String())
	return nil
}

// NotReloaded says on the terminal that an edit of the lab's file was not
// taken, and why; the session keeps the lab it speaks.
func (s *Session) NotReloaded(file, problem string) {
	s.Notify(s.paint("1;31", fmt.Sprintf(s.catalog().LabNotReloaded, textsafe.Escape(file), textsafe.Escape(problem))) + "\n")
}
