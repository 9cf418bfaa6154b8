package lab

import "slices"

// LikelyMistakes are the declared mistakes of s whose fails are exactly
// the checks failing and whose evidence held, in lab order: the same rule
// `labctl test` proves for every mistake, so a learner is only told "this
// looks like X" for a set of failures the lab has shown X to produce, and,
// where several mistakes fail the same checks, for the evidence that tells
// X from the others. held says whether a mistake's evidence held (nil:
// none was judged); a mistake without evidence needs none. A check that
// could not run hides the picture: with couldNotRun true there is no
// answer. A set of failures no mistake names exactly (nothing done yet, or
// two mistakes at once) has none.
func (s *Step) LikelyMistakes(failing []string, couldNotRun bool, held func(*Mistake) bool) []*Mistake {
	var out []*Mistake
	for _, m := range s.Suspects(failing, couldNotRun) {
		if len(m.Evidence) == 0 || (held != nil && held(m)) {
			out = append(out, m)
		}
	}
	return out
}

// Suspects are the declared mistakes of s whose fails are exactly the
// checks failing, before their evidence is judged (see LikelyMistakes).
func (s *Step) Suspects(failing []string, couldNotRun bool) []*Mistake {
	if couldNotRun || len(failing) == 0 {
		return nil
	}
	set := make(map[string]bool, len(failing))
	for _, n := range failing {
		set[n] = true
	}
	var out []*Mistake
	for i := range s.Mistakes {
		if m := &s.Mistakes[i]; sameSet(m.Fails, set) {
			out = append(out, m)
		}
	}
	return out
}

func sameSet(names []string, set map[string]bool) bool {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !set[n] {
			return false
		}
		seen[n] = true
	}
	return len(seen) == len(set)
}

// EveryCheck calls f with each check of s: its own, then its mistakes'
// evidence. Whatever the lab needs for a check to run (defaults, the
// grader's reads and grants) it needs for both.
func (s *Step) EveryCheck(f func(*Check)) {
	for i := range s.Checks {
		f(&s.Checks[i])
	}
	for i := range s.Mistakes {
		for j := range s.Mistakes[i].Evidence {
			f(&s.Mistakes[i].Evidence[j])
		}
	}
}

// SinceStep is GitCheck.Since that counts from the step's start.
const SinceStep = "step"

// HeadRepos are the repositories whose commit at the step's start the
// checks of s count from (GitCheck.Since), each once, in check order: the
// host notes where each is when the step begins.
func (s *Step) HeadRepos() []string {
	var out []string
	s.EveryCheck(func(c *Check) {
		if g := c.Git; g != nil && g.Since == SinceStep && !slices.Contains(out, g.Repo) {
			out = append(out, g.Repo)
		}
	})
	return out
}
