package lab

// LikelyMistakes are the declared mistakes of s whose fails are exactly
// the checks failing, in lab order (two mistakes may fail the same checks): the same rule `labctl test` proves for every mistake, so
// a learner is only told "this looks like X" for a set of failures the lab
// has shown X to produce. A check that could not run hides the picture:
// with couldNotRun true there is no answer. A set of failures no mistake
// names exactly (nothing done yet, or two mistakes at once) has none.
func (s *Step) LikelyMistakes(failing []string, couldNotRun bool) []*Mistake {
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
