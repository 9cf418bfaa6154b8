package classroom

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/labctl/labctl/provision/class"
)

// Numbered are the learners learner-1 … learner-n.
func Numbered(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("learner-%d", i+1)
	}
	return names
}

// ParseRoster reads a roster: one learner name per line, '#' starting a
// comment, blank lines ignored; file names it in messages and prefix is the
// learners' namespace prefix. Every bad or repeated name is reported, with
// its line, in one error; a roster without names is one too.
func ParseRoster(r io.Reader, file, prefix string) ([]string, error) {
	var names, problems []string
	first := map[string]int{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		name, _, _ := strings.Cut(sc.Text(), "#")
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if err := class.ValidLearnerName(prefix, name); err != nil {
			problems = append(problems, fmt.Sprintf("%s:%d: %v", file, line, err))
			continue
		}
		if at, ok := first[name]; ok {
			problems = append(problems, fmt.Sprintf("%s:%d: learner %q is already on line %d", file, line, name, at))
			continue
		}
		first[name] = line
		names = append(names, name)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the roster %s: %w", file, err)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the roster has %d problem(s); nothing was created:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("the roster %s names no learner: write one name per line", file)
	}
	return names, nil
}
