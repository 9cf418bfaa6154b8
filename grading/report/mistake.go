package report

import (
	"fmt"
	"strings"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
)

// Mistake is a known mistake of a step that the step's failing checks look
// like, as its lab declares it.
type Mistake struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Explain     string `json:"explain"`
}

// Evidence names the mistakes of one step whose evidence held in the
// round after its checks' (grading.Evidence judges it). Nil judged none: a
// mistake that needs evidence is then not named.
type Evidence map[string]bool

// LikelyMistakes are the mistakes of step whose fails are exactly the
// checks that failed in rs and whose evidence held by ev
// (lab.Step.LikelyMistakes); none when a check could not run.
func LikelyMistakes(step *lab.Step, rs []checks.Result, ev Evidence) []Mistake {
	failing, errored := Failing(rs)
	out := []Mistake{}
	for _, m := range step.LikelyMistakes(failing, errored, func(m *lab.Mistake) bool { return ev[m.Name] }) {
		out = append(out, Mistake{Name: m.Name, Description: m.Description, Explain: strings.TrimSpace(m.Explain)})
	}
	return out
}

// MistakeText says which known mistake the results look like and what the
// lab explains about it, one paragraph per mistake, each line starting
// with indent; "" when there is none. The lab's words are the author's,
// shown as written, escaped (textsafe).
func MistakeText(ms []Mistake, c *msg.Catalog, indent string) string {
	var b strings.Builder
	for _, m := range ms {
		what := m.Description
		if what == "" {
			what = m.Name
		}
		fmt.Fprintf(&b, "%s"+c.LikelyMistake+"\n", indent, textsafe.EscapeLine(what))
		if m.Explain != "" {
			for _, l := range strings.Split(textsafe.Escape(m.Explain), "\n") {
				fmt.Fprintf(&b, "%s  %s\n", indent, l)
			}
		}
	}
	return b.String()
}

// Failing are the names of the checks that failed in rs, and whether one
// could not run.
func Failing(rs []checks.Result) (failing []string, errored bool) {
	for _, r := range rs {
		switch r.Status {
		case checks.Fail:
			failing = append(failing, r.Name)
		case checks.Error:
			errored = true
		}
	}
	return failing, errored
}
