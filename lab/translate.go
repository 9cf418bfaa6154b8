package lab

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Languages lists the languages the lab can be read in: the lab file's
// metadata.language first, then its translations' tags in order.
func (l *Lab) Languages() []string {
	if l.written != nil {
		l = l.written
	}
	return append([]string{l.Metadata.Language}, slices.Sorted(maps.Keys(l.Translations))...)
}

// TextLanguage returns the language, of those the lab can be read in, that
// matches the first of wants that one matches (a tag matches itself, case
// aside, and a tag of the same primary language: en-US matches en), else
// the lab file's metadata.language.
func (l *Lab) TextLanguage(wants ...string) string {
	for _, want := range wants {
		if want == "" {
			continue
		}
		for _, exact := range []bool{true, false} {
			for _, have := range l.Languages() {
				if sameLanguage(want, have, exact) {
					return have
				}
			}
		}
	}
	return l.Languages()[0]
}

// sameLanguage compares two BCP 47 tags (or locale names such as
// en_US.UTF-8): whole, or by their primary language.
func sameLanguage(a, b string, exact bool) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(s))
		if i := strings.IndexAny(s, ".@"); i >= 0 {
			s = s[:i]
		}
		return strings.ReplaceAll(s, "_", "-")
	}
	a, b = norm(a), norm(b)
	if exact {
		return a == b
	}
	primary := func(s string) string { p, _, _ := strings.Cut(s, "-"); return p }
	return primary(a) == primary(b)
}

// In returns the lab with its learner's texts in language tag (one of
// Languages): titles, goal, why, instructions, solutions, hints, check
// descriptions and mistakes' explanations, each as the translation gives
// it, else as written. Everything else (ids, names, checks, scripts) is
// the lab's own; metadata.language becomes tag. For the lab's own language,
// or one it has no translation in, In returns the lab as written. In of a
// lab In returned starts again from the lab as written.
func (l *Lab) In(tag string) *Lab {
	if l.written != nil {
		l = l.written
	}
	tr, ok := l.Translations[tag]
	if !ok || tag == l.Metadata.Language {
		return l
	}
	c := *l
	c.written = l
	c.Metadata.Language = tag
	set(&c.Metadata.Title, tr.Title)
	set(&c.Metadata.Goal, tr.Goal)
	set(&c.Metadata.Why, tr.Why)
	c.Steps = slices.Clone(l.Steps)
	for i := range c.Steps {
		s := &c.Steps[i]
		t, ok := tr.Steps[s.ID]
		if !ok {
			continue
		}
		set(&s.Title, t.Title)
		set(&s.Instructions, t.Instructions)
		set(&s.Why, t.Why)
		set(&s.Solution, t.Solution)
		s.Hints = slices.Clone(s.Hints)
		for j := range min(len(s.Hints), len(t.Hints)) {
			set(&s.Hints[j], t.Hints[j])
		}
		s.Checks = slices.Clone(s.Checks)
		for j := range s.Checks {
			set(&s.Checks[j].Description, t.Checks[s.Checks[j].Name])
		}
		s.Mistakes = slices.Clone(s.Mistakes)
		for j := range s.Mistakes {
			set(&s.Mistakes[j].Explain, t.Mistakes[s.Mistakes[j].Name])
		}
		if s.Probe != nil && len(s.Probe.Broken) > 0 && len(t.Broken) > 0 {
			pr := *s.Probe
			pr.Broken = slices.Clone(pr.Broken)
			for k := range min(len(pr.Broken), len(t.Broken)) {
				set(&pr.Broken[k].Description, t.Broken[k])
			}
			s.Probe = &pr
		}
	}
	return &c
}

func set(dst *string, s string) {
	if s != "" {
		*dst = s
	}
}

// translations validates every translation: a language tag other than the
// lab's own, and texts only for the steps, hints, checks and mistakes the
// lab has.
func (v *validator) translations(l *Lab) {
	for _, tag := range slices.Sorted(maps.Keys(l.Translations)) {
		p := joinKey("translations", tag)
		switch {
		case len(tag) > maxLanguageTagLen || !languageRE.MatchString(tag):
			v.add(p, "%q is not a BCP 47 language tag such as en, ja or pt-BR", tag)
		case strings.EqualFold(tag, l.Metadata.Language):
			v.add(p, "%q is the lab's own language (metadata.language); a translation is in another one", tag)
		}
		tr := l.Translations[tag]
		v.codeBlocks(p+".goal", "the "+tag+" goal", tr.Goal)
		v.codeBlocks(p+".why", "the "+tag+" why", tr.Why)
		for _, id := range slices.Sorted(maps.Keys(tr.Steps)) {
			sp := joinKey(p+".steps", id)
			i := slices.IndexFunc(l.Steps, func(s Step) bool { return s.ID == id })
			if i < 0 {
				v.add(sp, "the lab has no step %q; translations name steps by their id", id)
				continue
			}
			v.stepTexts(sp, id, tr.Steps[id])
			s, t := &l.Steps[i], tr.Steps[id]
			if len(t.Hints) > len(s.Hints) {
				v.add(sp+".hints", "%d hints, but step %s has %d; a translation gives the step's hints in their order", len(t.Hints), id, len(s.Hints))
			}
			for _, name := range slices.Sorted(maps.Keys(t.Checks)) {
				if !slices.ContainsFunc(s.Checks, func(c Check) bool { return c.Name == name }) {
					v.add(joinKey(sp+".checks", name), "step %s has no check %q", id, name)
				}
			}
			if worlds := 0; len(t.Broken) > 0 {
				if s.Probe != nil {
					worlds = len(s.Probe.Broken)
				}
				if len(t.Broken) > worlds {
					v.add(sp+".broken", "%d descriptions, but step %s's probe has %d broken world(s); a translation describes them in their order", len(t.Broken), id, worlds)
				}
			}
			for _, name := range slices.Sorted(maps.Keys(t.Mistakes)) {
				j := slices.IndexFunc(s.Mistakes, func(m Mistake) bool { return m.Name == name })
				switch {
				case j < 0:
					v.add(joinKey(sp+".mistakes", name), "step %s has no mistake %q", id, name)
				case s.Mistakes[j].Explain == "":
					v.add(joinKey(sp+".mistakes", name), "mistake %q of step %s has no explain to translate", name, id)
				}
			}
		}
	}
}

// lintTranslations warns, per language and step, of each text the lab has
// that the translation leaves out (the learner would read it in the lab's
// own language).
func (l *Lab) lintTranslations(add func(p, format string, args ...any)) {
	for _, tag := range slices.Sorted(maps.Keys(l.Translations)) {
		p := joinKey("translations", tag)
		tr := l.Translations[tag]
		var top []string
		for _, f := range []struct{ name, have, tr string }{
			{"title", l.Metadata.Title, tr.Title}, {"goal", l.Metadata.Goal, tr.Goal}, {"why", l.Metadata.Why, tr.Why},
		} {
			if f.have != "" && f.tr == "" {
				top = append(top, f.name)
			}
		}
		if len(top) > 0 {
			add(p, "no %s text for %s: the learner reads it in %s", tag, strings.Join(top, ", "), l.Metadata.Language)
		}
		for _, s := range l.Steps {
			missing := missingStepTexts(s, tr.Steps[s.ID])
			if len(missing) == 0 {
				continue
			}
			at := joinKey(p+".steps", s.ID)
			if _, ok := tr.Steps[s.ID]; !ok {
				at = p
			}
			add(at, "no %s text for step %s: %s (the learner reads it in %s)", tag, s.ID, strings.Join(missing, ", "), l.Metadata.Language)
		}
	}
}

// missingStepTexts names each text of step s that t leaves out.
func missingStepTexts(s Step, t StepText) []string {
	var out []string
	for _, f := range []struct{ name, have, tr string }{
		{"title", s.Title, t.Title}, {"instructions", s.Instructions, t.Instructions},
		{"why", s.Why, t.Why}, {"solution", s.Solution, t.Solution},
	} {
		if f.have != "" && f.tr == "" {
			out = append(out, f.name)
		}
	}
	for i, h := range s.Hints {
		if h != "" && (i >= len(t.Hints) || t.Hints[i] == "") {
			out = append(out, fmt.Sprintf("hints[%d]", i))
		}
	}
	for _, c := range s.Checks {
		if c.Description != "" && t.Checks[c.Name] == "" {
			out = append(out, "checks."+c.Name)
		}
	}
	for _, m := range s.Mistakes {
		if m.Explain != "" && t.Mistakes[m.Name] == "" {
			out = append(out, "mistakes."+m.Name)
		}
	}
	if s.Probe != nil {
		for i, b := range s.Probe.Broken {
			if b.Description != "" && (i >= len(t.Broken) || t.Broken[i] == "") {
				out = append(out, fmt.Sprintf("broken[%d]", i))
			}
		}
	}
	return out
}
