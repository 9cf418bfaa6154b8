package lab

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Limits on names (which become Kubernetes and Docker object names), exit
// codes and language tags.
const (
	maxLabNameLen     = 40
	maxDNSLabelLen    = 63
	maxIdentLen       = 63
	maxExitCode       = 255
	maxLanguageTagLen = 35
)

var (
	dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	identRE    = regexp.MustCompile(`^[a-z0-9-]+$`)
	languageRE = regexp.MustCompile(`^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$`)
)

// isDNSLabel reports whether s is an RFC 1123 label of at most maxLen characters.
func isDNSLabel(s string, maxLen int) bool {
	return len(s) <= maxLen && dnsLabelRE.MatchString(s)
}

// Validate checks a defaulted Lab against every rule of the lab file API and
// returns all problems as Errors, or nil.
func (l *Lab) Validate() error { return l.validate().orNil() }

// validator collects problems, each placed at its field's position.
type validator struct {
	src  *source
	errs Errors
	// labDir is the directory holding the lab file, when it was loaded from
	// one: the images' build directories are looked for there.
	labDir string
	// labCluster is the lab's, which some checks must fit.
	labCluster *Cluster
	// lab is the lab being validated.
	lab *Lab
}

func (v *validator) add(p, format string, args ...any) {
	e := Error{Path: p, Msg: fmt.Sprintf(format, args...)}
	if v.src != nil {
		if v.src.decodeFailedAt(p) {
			return
		}
		pos := v.src.lookup(p)
		e.File, e.Line, e.Column = v.src.file, pos.line, pos.column
	}
	v.errs = append(v.errs, e)
}

// decodeFailedAt reports whether p, a field holding it, or an element of
// the list p failed to decode (and so was reported already).
func (s *source) decodeFailedAt(p string) bool {
	for q := p; ; q = parentPath(q) {
		if s.bad[q] {
			return true
		}
		if q == "" {
			break
		}
	}
	return s.badElems[p]
}

// line returns where path was written, for "first at line N" messages.
func (v *validator) line(p string) string {
	if v.src == nil {
		return p
	}
	return fmt.Sprintf("line %d", v.src.lookup(p).line)
}

func (l *Lab) validate() Errors { return l.validateIn("") }

// validateIn is validate for a lab whose file is in labDir; "" is a lab
// that is not on disk, whose images' build directories are not looked for.
func (l *Lab) validateIn(labDir string) Errors {
	v := &validator{src: l.src, labDir: labDir, labCluster: &l.Cluster, lab: l}
	switch l.APIVersion {
	case APIVersion:
	case "":
		v.add("apiVersion", "missing; a lab file starts with apiVersion: %s", APIVersion)
	default:
		v.add("apiVersion", "%q is not supported; this labctl reads apiVersion: %s", l.APIVersion, APIVersion)
	}
	switch l.Kind {
	case Kind:
	case "":
		v.add("kind", "missing; write kind: %s", Kind)
	default:
		v.add("kind", "%q is not a lab; write kind: %s", l.Kind, Kind)
	}
	v.metadata(&l.Metadata)
	v.cluster(&l.Cluster)
	for _, im := range []struct{ path, ref string }{{"cluster.nodeImage", l.Cluster.NodeImage}, {"sandbox.image", l.Sandbox.Image}} {
		if im.ref == "" {
			continue
		}
		if err := checkImageRef(im.ref); err != nil {
			v.add(im.path, "%v", err)
		}
	}
	v.absolute("sandbox.workDir", l.Sandbox.WorkDir)
	v.absolute("sandbox.fixtures", l.Sandbox.Fixtures)
	if ns := l.Sandbox.Namespace; ns != "" && !slices.Contains(l.Cluster.Namespaces, ns) {
		v.add("sandbox.namespace", "%q is not one of the lab's namespaces (cluster.namespaces); the learner's kubectl starts in one of them", ns)
	}
	v.rules("access.rules", l.Access.Rules)
	v.rules("access.clusterRules", l.Access.ClusterRules)
	v.clusterView(l.Access.ClusterView)
	if len(l.Steps) == 0 {
		v.add("steps", "a lab needs at least one step")
	}
	firstStep := map[string]string{}
	for i := range l.Steps {
		p := joinIndex("steps", i)
		s := &l.Steps[i]
		if s.ID != "" {
			if first, dup := firstStep[s.ID]; dup {
				v.add(p+".id", "step id %q is used twice (first at %s); step ids must be unique", s.ID, v.line(first))
			} else {
				firstStep[s.ID] = p + ".id"
			}
		}
		v.step(p, s)
	}
	v.translations(l)
	return v.errs
}

func (v *validator) metadata(m *Metadata) {
	switch {
	case m.Name == "":
		v.add("metadata.name", "missing; name the lab with a DNS label such as gitops-drift")
	case len(m.Name) > maxLabNameLen:
		v.add("metadata.name", "%q is %d characters; use at most %d", m.Name, len(m.Name), maxLabNameLen)
	case !dnsLabelRE.MatchString(m.Name):
		v.add("metadata.name", "%q is not a DNS label: use lower-case letters, digits and '-', starting and ending with a letter or digit", m.Name)
	}
	if len(m.Language) > maxLanguageTagLen || !languageRE.MatchString(m.Language) {
		v.add("metadata.language", "%q is not a BCP 47 language tag such as en, ja or pt-BR", m.Language)
	}
	v.codeBlocks("metadata.goal", "the lab's goal", m.Goal)
	v.codeBlocks("metadata.why", "the lab's why", m.Why)
}

// absolute requires an absolute path inside the sandbox.
func (v *validator) absolute(p, value string) {
	if !path.IsAbs(value) {
		v.add(p, "%q must be an absolute path (starting with /)", value)
	}
}

// ident requires a name of lower-case letters, digits and '-'.
func (v *validator) ident(p, what, value string) bool {
	switch {
	case value == "":
		v.add(p, "missing; give the %s a name of lower-case letters, digits and '-'", what)
	case len(value) > maxIdentLen || !identRE.MatchString(value):
		v.add(p, "%s %q may hold only lower-case letters, digits and '-' (at most %d)", what, value, maxIdentLen)
	default:
		return true
	}
	return false
}

func (v *validator) step(p string, s *Step) {
	v.ident(p+".id", "step", s.ID)
	if strings.TrimSpace(s.Title) == "" {
		v.add(p+".title", "missing; give the step a title")
	}
	if strings.TrimSpace(s.Instructions) == "" {
		v.add(p+".instructions", "missing; tell the learner what to do")
	}
	if strings.TrimSpace(s.Solve) == "" {
		v.add(p+".solve", "missing; write the bash script a correct learner would run, so labctl test can prove the step is solvable")
	}
	if len(s.Checks) == 0 {
		v.add(p+".checks", "a step needs at least one check")
	}
	checks := map[string]string{}
	for i := range s.Checks {
		cp := joinIndex(p+".checks", i)
		c := &s.Checks[i]
		v.uniqueName(cp+".name", "check", c.Name, checks)
		v.sandboxCheck(cp, c)
	}
	mistakes := map[string]string{}
	for i, m := range s.Mistakes {
		mp := joinIndex(p+".mistakes", i)
		v.uniqueName(mp+".name", "mistake", m.Name, mistakes)
		if strings.TrimSpace(m.Script) == "" {
			v.add(mp+".script", "missing; write the bash script that makes this mistake")
		}
		if len(m.Fails) == 0 {
			v.add(mp+".fails", "name at least one check of this step that must catch the mistake")
		}
		named := map[string]bool{}
		for j, name := range m.Fails {
			fp := joinIndex(mp+".fails", j)
			switch {
			case named[name]:
				v.add(fp, "check %q is named twice", name)
			case name == ProbeResult && s.Probe != nil:
			case checks[name] == "":
				v.add(fp, "step %q has no check %q; it has %s", s.ID, name, listNames(checks))
			}
			named[name] = true
		}
		evidence := map[string]string{}
		for j := range m.Evidence {
			ep := joinIndex(mp+".evidence", j)
			v.uniqueName(ep+".name", "check", m.Evidence[j].Name, evidence)
			v.sandboxCheck(ep, &m.Evidence[j])
			if c := &m.Evidence[j]; (c.File != nil && c.File.WrittenDuringProbe) || (c.Audit != nil && c.Audit.DuringProbe) {
				v.add(ep, "evidence names a mistake after a round of the step's checks, without the probe; judge the probe's run in the step's checks")
			}
		}
	}
	v.alternatives(p, s)
	v.probe(p, s, checks)
	v.clusterProbe(p, s)
	v.stepTexts(p, s.ID, StepText{Instructions: s.Instructions, Why: s.Why, Solution: s.Solution, Hints: s.Hints})
}

// stepTexts checks the code blocks of a step's Markdown texts (its own or
// a translation's) at p.
func (v *validator) stepTexts(p, id string, t StepText) {
	what := fmt.Sprintf("step %q", id)
	v.codeBlocks(p+".instructions", what+"'s instructions", t.Instructions)
	v.codeBlocks(p+".why", what+"'s why", t.Why)
	v.codeBlocks(p+".solution", what+"'s solution", t.Solution)
	for i, h := range t.Hints {
		v.codeBlocks(joinIndex(p+".hints", i), fmt.Sprintf("%s's hint %d", what, i+1), h)
	}
}

// listNames quotes the keys of m, sorted, for messages.
func listNames(m map[string]string) string {
	if len(m) == 0 {
		return "no checks"
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, fmt.Sprintf("%q", k))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// ---------------------------------------------------------------- matrix checks

// value checks a reference's syntax; literals are always valid.
func (v *validator) value(p string, val *Value) {
	if val == nil || !val.IsRef() {
		return
	}
	r, err := ParseRef(val.Ref)
	if err != nil {
		v.add(p+".ref", "%v", err)
		return
	}
	v.clusterRef(p, r)
}

// regex requires an RE2 regular expression, when set.
func (v *validator) regex(p, re string) {
	if re == "" {
		return
	}
	if _, err := regexp.Compile(re); err != nil {
		v.add(p, "not a valid regular expression (RE2 syntax): %v", err)
	}
}

// enum requires value to be empty or one of allowed.
func (v *validator) enum(p, value string, allowed ...string) {
	if value == "" {
		return
	}
	for _, a := range allowed {
		if value == a {
			return
		}
	}
	v.add(p, "%q is not one of %s", value, strings.Join(allowed, ", "))
}

func (v *validator) rangeOf(p string, r *Range) {
	if r == nil {
		return
	}
	if r.Min != nil && *r.Min < 0 {
		v.add(p+".min", "%d is negative", *r.Min)
	}
	if r.Max != nil && *r.Max < 0 {
		v.add(p+".max", "%d is negative", *r.Max)
	}
	if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
		v.add(p, "min %d is greater than max %d", *r.Min, *r.Max)
	}
	if r.Min == nil && r.Max == nil {
		v.add(p, "set min, max or both")
	}
}

// uniqueName validates name, a step's check, mistake or alternative name at
// path, as an identifier used once in the step; seen maps the names met so
// far to their paths.
func (v *validator) uniqueName(path, kind, name string, seen map[string]string) {
	if !v.ident(path, kind, name) {
		return
	}
	if first, dup := seen[name]; dup {
		v.add(path, "%s name %q is used twice in this step (first at %s)", kind, name, v.line(first))
		return
	}
	seen[name] = path
}

// Taint is one node taint as kubectl taint writes it.
type Taint struct {
	Key, Value, Effect string
	// Valued says a value was written (key=value, or key= for the empty
	// one): a toleration of key:Effect tolerates the key with any value.
	Valued bool
}
