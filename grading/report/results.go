package report

import (
	"fmt"
	"strings"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
)

// Look is how a check's status shows wherever results are shown: its mark,
// the colour of the mark on a terminal (SGR parameters) and its word (the
// status as the JSON report and the page name it).
type Look struct {
	Mark, SGR, Word string
}

// looks is the one table of the statuses' looks.
var looks = map[checks.Status]Look{
	checks.Pass:  {Mark: "✓", SGR: "32", Word: string(checks.Pass)},
	checks.Fail:  {Mark: "✗", SGR: "31", Word: string(checks.Fail)},
	checks.Error: {Mark: "!", SGR: "33", Word: string(checks.Error)},
}

// StatusLook is the look of s: ✓ green pass, ✗ red fail, ! yellow error
// (also for a status labctl does not know).
func StatusLook(s checks.Status) Look {
	if l, ok := looks[s]; ok {
		return l
	}
	return looks[checks.Error]
}

// Mark is the one-character sign of a status (StatusLook).
func Mark(s checks.Status) string { return StatusLook(s).Mark }

// ResultLine is r as one line, without indent or line end: its mark
// (coloured when color is set), its name and description, and whether it is
// optional. The lab's words are escaped (textsafe).
func ResultLine(r checks.Result, c *msg.Catalog, color bool) string {
	l := StatusLook(r.Status)
	mark := l.Mark
	if color {
		mark = "\x1b[" + l.SGR + "m" + mark + "\x1b[0m"
	}
	line := mark + " " + textsafe.EscapeLine(r.Name)
	if r.Description != "" {
		line += ": " + textsafe.EscapeLine(r.Description)
	}
	if r.Optional {
		line += " " + c.Optional
	}
	return line
}

// ResultMessage is the message of r, when it did not pass, one line per
// line of it after indent; "" otherwise. The message is escaped (textsafe).
func ResultMessage(r checks.Result, indent string) string {
	if r.Status == checks.Pass || r.Message == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(textsafe.Escape(r.Message), "\n"), "\n") {
		b.WriteString(indent + l + "\n")
	}
	return b.String()
}

// StepResults is one round of step's checks as `labctl check` and the
// shell's `lab check` show it: a line per result with its message under
// it, the known mistake the failures look like, and, when the step did not
// pass, how many checks could not run and how many required checks do not
// pass (a check that could not run is one: the step is not passed). ev is
// the evidence judged for the step's mistakes (grading.Evidence). The
// step's passing is the caller's to say, with what comes next.
func StepResults(step *lab.Step, rs []checks.Result, ev Evidence, c *msg.Catalog, color bool) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("  " + ResultLine(r, c, color) + "\n")
		b.WriteString(ResultMessage(r, "      "))
	}
	b.WriteString(MistakeText(LikelyMistakes(step, rs, ev), c, "  "))
	sum := checks.Summarize(rs)
	if sum.Errored > 0 {
		fmt.Fprintf(&b, c.CouldNotRun+"\n", sum.Errored)
	}
	if !sum.Passed() {
		fmt.Fprintf(&b, c.StepNotPassed+"\n", StepTitle(step), sum.Failed+sum.Errored, sum.Required)
	}
	return b.String()
}

// StepTitle is a step's title for a terminal (escaped), else its id.
func StepTitle(s *lab.Step) string {
	if s.Title == "" {
		return s.ID
	}
	return textsafe.EscapeLine(s.Title)
}
