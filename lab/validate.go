package lab

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/labels"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
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

func (v *validator) cluster(c *Cluster) {
	switch c.Provider {
	case DefaultProvider:
	case ProviderNone:
		v.noCluster(v.lab)
	default:
		v.add("cluster.provider", "%q is not supported; use %q (a kind cluster, the default) or %q (no cluster: the sandbox and the grader only)", c.Provider, DefaultProvider, ProviderNone)
	}
	switch c.PodSecurity {
	case PodSecurityBaseline, PodSecurityRestricted, PodSecurityPrivileged:
	default:
		v.add("cluster.podSecurity", "%q is not a Pod Security Standard; use %s (the default), %s or %s",
			c.PodSecurity, PodSecurityBaseline, PodSecurityRestricted, PodSecurityPrivileged)
	}
	switch c.Workloads {
	case WorkloadsRun, WorkloadsDeclare:
	default:
		v.add("cluster.workloads", "%q is not a workloads mode; use %s (the default: the lab's Pods must run) or %s (its checks only read what the API server stores)",
			c.Workloads, WorkloadsRun, WorkloadsDeclare)
	}
	v.workers(c.Workers)
	v.addons(c.Addons)
	first := map[string]string{}
	for i, ns := range c.Namespaces {
		p := joinIndex("cluster.namespaces", i)
		if !isDNSLabel(ns, maxDNSLabelLen) {
			v.add(p, "%q is not a DNS label: use at most %d lower-case letters, digits and '-'", ns, maxDNSLabelLen)
			continue
		}
		if f, dup := first[ns]; dup {
			v.add(p, "namespace %q is listed twice (first at %s)", ns, v.line(f))
			continue
		}
		first[ns] = p
		if why := ReservedNamespace(ns); why != "" {
			v.add(p, "%q is %s, never a lab's: the learner would be admin of it and reset would empty it; "+
				"give the lab a namespace of its own, such as %s (the learner's kubeconfig starts in the lab's first namespace)", ns, why, suggestNamespace(c.Namespaces))
		}
	}
	v.images(c.Images)
}

// images requires workload images named by a version tag, each once, built
// (when they are) from a directory of the lab that holds a Dockerfile.
func (v *validator) images(images []Image) {
	first := map[string]string{}
	for i, im := range images {
		p := joinIndex("cluster.images", i)
		if err := checkImageName(im.Name); err != nil {
			v.add(p+".name", "%v", err)
		} else if f, dup := first[NormalizeImageName(im.Name)]; dup {
			v.add(p+".name", "image %q is listed twice (first at %s)", im.Name, v.line(f))
		} else {
			first[NormalizeImageName(im.Name)] = p + ".name"
		}
		if im.Build == "" {
			continue
		}
		if err := checkBuildPath(im.Build); err != nil {
			v.add(p+".build", "%v", err)
		} else if v.labDir != "" {
			if err := checkBuildDir(v.labDir, im.Build); err != nil {
				v.add(p+".build", "%v", err)
			}
		}
	}
}

func (v *validator) rules(p string, rules []PolicyRule) {
	for i, r := range rules {
		if len(r.Verbs) == 0 {
			v.add(joinIndex(p, i)+".verbs", "a rule needs at least one verb, e.g. [get, list, watch]")
		}
	}
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

// sandboxCheck validates c, at p, and that what it reads in the sandbox
// is where the grader sees it.
func (v *validator) sandboxCheck(p string, c *Check) {
	v.check(p, c)
	reads := sandboxReads(p, c)
	for _, at := range slices.Sorted(maps.Keys(reads)) {
		read, file := reads[at].path, reads[at].file
		if !strings.HasPrefix(read, "/") {
			continue
		}
		if d := neverRead(read); d != "" {
			v.add(at, "%s is in %s, which no check can read: %s holds the kernel's views of processes, devices and the system, never the learner's work; "+
				"check the file the learner writes instead (e.g. /root/out.txt, /etc/app.conf)", read, d, d)
			continue
		}
		if v.lab.GraderSees(read) || file {
			// A file elsewhere in the sandbox is read from the host's
			// side (FileChecksOutside).
			continue
		}
		v.add(at, "%s is neither in the learner's home (%s) nor in the lab's fixtures (%s): a git check or a git: reference reads only those of the sandbox, "+
			"so it would read something else (the grader's own image); keep the repository under %s, or judge its files with file checks, which may read any path of the sandbox",
			read, HomeDir, v.lab.Sandbox.Fixtures, HomeDir)
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

func (v *validator) check(p string, c *Check) {
	if c.Timeout.Duration <= 0 {
		v.add(p+".timeout", "%s must be positive", c.Timeout.Duration)
	}
	if c.Kube != nil && c.Kube.Wait && c.Timeout.Duration > MaxWaitTimeout {
		v.add(p+".timeout", "%s is longer than a kube check with wait may read again (%s): a condition that never comes holds up the grade that long; give a timeout of at most %s",
			c.Timeout.Duration, MaxWaitTimeout, MaxWaitTimeout)
	}
	if c.Points < 0 {
		v.add(p+".points", "%d is negative; a check is worth 0 or more points", c.Points)
	}
	var kinds []string
	if c.File != nil {
		kinds = append(kinds, "file")
		v.fileCheck(p+".file", c.File)
	}
	if c.Git != nil {
		kinds = append(kinds, "git")
		v.gitCheck(p+".git", c.Git)
	}
	if c.Kube != nil {
		kinds = append(kinds, "kube")
		v.kubeCheck(p+".kube", c.Kube)
	}
	if c.Access != nil {
		kinds = append(kinds, "access")
		v.accessCheck(p+".access", c.Access)
	}
	if c.Permissions != nil {
		kinds = append(kinds, "permissions")
		v.permissionsCheck(p+".permissions", c.Permissions)
	}
	if c.Reach != nil {
		kinds = append(kinds, "reach")
		v.reachCheck(p+".reach", c.Reach)
	}
	if c.Matrix != nil {
		kinds = append(kinds, "matrix")
		v.matrixCheck(p+".matrix", c.Matrix)
	}
	if c.Command != nil {
		kinds = append(kinds, "command")
		v.commandCheck(p+".command", c.Command)
	}
	if c.Audit != nil {
		kinds = append(kinds, "audit")
		v.auditCheck(p+".audit", c.Audit)
	}
	v.clusterCheck(p, c)
	switch len(kinds) {
	case 1:
	case 0:
		v.add(p, "a check needs exactly one of file, git, kube, access, reach, matrix, command or audit")
	default:
		v.add(p, "a check has exactly one of file, git, kube, access, reach, matrix, command or audit, found %s; split it into several checks", strings.Join(kinds, " and "))
	}
}

func (v *validator) fileCheck(p string, f *FileCheck) {
	v.absolute(p+".path", f.Path)
	if f.Node != "" {
		v.nodeOfFile(p, f)
	}
	if f.NotInside != "" {
		v.absolute(p+".notInside", f.NotInside)
	}
	v.enum(p+".type", f.Type, "file", "dir")
	v.value(p+".equals", f.Equals)
	for i, re := range f.Matches {
		v.regex(joinIndex(p+".matches", i), re)
	}
	for i, re := range f.NotMatches {
		v.regex(joinIndex(p+".notMatches", i), re)
	}
	v.rangeOf(p+".lines", f.Lines)
	if s := f.Script; s != nil {
		if _, ok := unicode.Scripts[s.Name]; !ok {
			v.add(p+".script.name", "%q is not a Unicode script name%s", s.Name, suggestScript(s.Name))
		}
		if !(s.Min > 0 && s.Min <= 1) {
			v.add(p+".script.min", "%v must be a share in (0, 1], e.g. 0.6 for 60%%", s.Min)
		}
	}
	if f.Field != nil {
		v.fieldAssert(p+".field", f.Field)
	}
}

// suggestScript names a Unicode script that differs from name only in case.
func suggestScript(name string) string {
	for s := range unicode.Scripts {
		if strings.EqualFold(s, name) {
			return fmt.Sprintf("; did you mean %q?", s)
		}
	}
	return " such as Latin, Han, Hangul, Hiragana, Katakana, Cyrillic"
}

func (v *validator) gitCheck(p string, g *GitCheck) {
	v.absolute(p+".repo", g.Repo)
	for i, key := range g.Config {
		if section, name, ok := strings.Cut(key, "."); !ok || section == "" || name == "" {
			v.add(joinIndex(p+".config", i), "%q is not a git config key such as user.name", key)
		}
	}
	v.rangeOf(p+".commits", g.Commits)
	if g.Since != "" {
		v.enum(p+".since", g.Since, SinceStep)
		if g.Commits == nil {
			v.add(p+".since", "since counts commits: add commits (e.g. {min: 1}) or remove since")
		}
	}
	for i, t := range g.Tracked {
		if err := checkRepoFile(t); err != nil {
			v.add(joinIndex(p+".tracked", i), "%v", err)
		}
	}
	if m := g.Message; m != nil {
		v.enum(p+".message.which", m.Which, "last", "first", "any", "all")
		v.regex(p+".message.matches", m.Matches)
		if m.MinLength < 0 {
			v.add(p+".message.minLength", "%d is negative", m.MinLength)
		}
		if m.Touching != "" {
			if err := checkRepoFile(m.Touching); err != nil {
				v.add(p+".message.touching", "%v", err)
			}
		}
	}
	if f := g.Field; f != nil {
		if f.File == "" {
			v.add(p+".field.file", "missing; name the file in the repository, e.g. apps/web/deployment.yaml")
		} else if err := checkRepoFile(f.File); err != nil {
			v.add(p+".field.file", "%v", err)
		}
		v.fieldAssert(p+".field", &f.FieldAssert)
	}
}

func (v *validator) kubeCheck(p string, k *KubeCheck) {
	if k.APIVersion == "" {
		v.add(p+".apiVersion", "missing; e.g. apps/v1 or v1")
	}
	if k.Kind == "" {
		v.add(p+".kind", "missing; e.g. Deployment")
	}
	switch {
	case k.Name == "" && k.Selector == nil:
		v.add(p+".name", "missing; name the object to read, or select objects by label with selector")
	case k.Name != "" && k.Selector != nil:
		v.add(p+".selector", "a kube check reads one object by name or the objects a selector selects, not both; remove name or selector")
	case k.Selector != nil:
		if _, err := labels.Parse(*k.Selector); err != nil {
			v.add(p+".selector", "%q is not a label selector (%v); write it as kubectl -l does, e.g. app=web,tier!=db", *k.Selector, err)
		}
		if k.Exists != nil {
			v.add(p+".exists", "a kube check with a selector counts the objects instead; write count: {max: 0} for none, or count: {min: 1}")
		}
	}
	if k.Count != nil && k.Selector == nil {
		v.add(p+".count", "count bounds the objects a selector selects; add a selector, or remove count")
	}
	v.rangeOf(p+".count", k.Count)
	if k.Namespace != "" && !isDNSLabel(k.Namespace, maxDNSLabelLen) {
		v.add(p+".namespace", "%q is not a DNS label", k.Namespace)
	}
	for key := range k.Labels {
		if key == "" {
			v.add(p+".labels", "a label key is empty")
		}
	}
	if k.Field != nil {
		v.fieldAssert(p+".field", k.Field)
	}
	if k.MatchesFile != "" {
		v.absolute(p+".matchesFile", k.MatchesFile)
		if k.Selector == nil {
			v.add(p+".matchesFile", "compares the objects a selector selects with the file's; add selector: \"\" (every object of the kind in the namespace)")
		}
		if k.APIVersion != "networking.k8s.io/v1" || k.Kind != "NetworkPolicy" {
			v.add(p+".matchesFile", "compares NetworkPolicies only (apiVersion networking.k8s.io/v1, kind NetworkPolicy), the kind whose defaults labctl adds to the file's; compare other kinds' fields with field and a file reference")
		}
	}
}

func (v *validator) accessCheck(p string, a *AccessCheck) {
	switch {
	case a.ServiceAccount == "" && a.User == "":
		v.add(p, "name the identity asked about: serviceAccount (namespace/name) or user")
	case a.ServiceAccount != "" && a.User != "":
		v.add(p+".user", "ask about one identity: serviceAccount or user, not both")
	case a.ServiceAccount != "":
		ns, name, ok := strings.Cut(a.ServiceAccount, "/")
		if !ok || !isDNSLabel(ns, maxDNSLabelLen) || len(k8svalidation.IsDNS1123Subdomain(name)) > 0 {
			v.add(p+".serviceAccount", "%q is not namespace/name, e.g. ci/deployer", a.ServiceAccount)
		}
		if len(a.Groups) > 0 {
			v.add(p+".groups", "a service account's groups are the API server's own; groups go with user only")
		}
	}
	if a.Verb == "" || strings.ContainsAny(a.Verb, " /") {
		v.add(p+".verb", "%q is not a verb; e.g. get, list, create, patch, delete", a.Verb)
	}
	if a.Resource == "" || strings.ContainsAny(a.Resource, " /.") {
		v.add(p+".resource", "%q is not a plural resource name; e.g. deployments, with group: apps", a.Resource)
	}
	if strings.ContainsAny(a.Subresource, " /.") {
		v.add(p+".subresource", "%q is not a subresource; e.g. scale or log", a.Subresource)
	}
	if strings.ContainsAny(a.Group, " /") {
		v.add(p+".group", "%q is not an API group; e.g. apps, or \"\" for the core group", a.Group)
	}
	if a.Namespace != "" && !isDNSLabel(a.Namespace, maxDNSLabelLen) {
		v.add(p+".namespace", "%q is not a DNS label", a.Namespace)
	}
	if a.Allowed == nil {
		v.add(p+".allowed", "missing; say the answer the check requires: true (may) or false (may not)")
	}
}

func (v *validator) reachCheck(p string, r *ReachCheck) {
	if v.labCluster != nil {
		if v.labCluster.Workloads == WorkloadsDeclare {
			v.add(p, "a reach check starts a Pod, and a lab with workloads: declare runs none; use workloads: run")
		}
		if !slices.Contains(v.labCluster.Namespaces, r.From.Namespace) {
			v.add(p+".from.namespace", "%q is not one of the lab's namespaces (cluster.namespaces: %s); the check's Pod runs in one of them", r.From.Namespace, strings.Join(v.labCluster.Namespaces, ", "))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.From.Labels)) {
		if errs := k8svalidation.IsQualifiedName(k); len(errs) > 0 {
			v.add(p+".from.labels", "%q is not a label key: %s", k, errs[0])
		}
		if errs := k8svalidation.IsValidLabelValue(r.From.Labels[k]); len(errs) > 0 {
			v.add(p+".from.labels."+k, "%q is not a label value: %s", r.From.Labels[k], errs[0])
		}
	}
	if _, _, err := SplitReachTarget(r.To); err != nil {
		v.add(p+".to", "%v", err)
	}
	if r.Allowed == nil {
		v.add(p+".allowed", "missing; say what the check requires: true (the connection opens) or false (it does not)")
	}
}

// ---------------------------------------------------------------- matrix checks

func (v *validator) matrixCheck(p string, m *MatrixCheck) {
	if v.labCluster != nil {
		if v.labCluster.Workloads == WorkloadsDeclare {
			v.add(p, "a matrix check starts prober Pods, and a lab with workloads: declare runs none; use workloads: run")
		}
		if !slices.Contains(v.labCluster.Addons, AddonNetworkPolicy) {
			v.add(p, "a matrix check waits for the network policy agent; add networkPolicy to cluster.addons")
		}
	}
	if len(m.Sources) == 0 {
		v.add(p+".sources", "missing; name at least one workload shape, e.g. {name: web, namespace: shop, labels: {app: shop}}")
	}
	if len(m.Targets) == 0 {
		v.add(p+".targets", "missing; name at least one target, e.g. {name: db, to: db.shop:5432}")
	}
	sources, targets := map[string]bool{}, map[string]bool{}
	for i, s := range m.Sources {
		sp := fmt.Sprintf("%s.sources[%d]", p, i)
		v.matrixName(sp+".name", s.Name, sources)
		if v.labCluster != nil && !slices.Contains(v.labCluster.Namespaces, s.Namespace) {
			v.add(sp+".namespace", "%q is not one of the lab's namespaces (cluster.namespaces: %s); the source's prober Pod runs in one of them", s.Namespace, strings.Join(v.labCluster.Namespaces, ", "))
		}
		for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
			if errs := k8svalidation.IsQualifiedName(k); len(errs) > 0 {
				v.add(sp+".labels", "%q is not a label key: %s", k, errs[0])
			}
			if errs := k8svalidation.IsValidLabelValue(s.Labels[k]); len(errs) > 0 {
				v.add(sp+".labels."+k, "%q is not a label value: %s", s.Labels[k], errs[0])
			}
		}
		for j, o := range m.Sources[:i] {
			if o.Namespace == s.Namespace && maps.Equal(o.Labels, s.Labels) {
				v.add(sp, "the same shape as sources[%d] (%s): one prober stands for both; remove one", j, o.Name)
			}
		}
	}
	for i, t := range m.Targets {
		tp := fmt.Sprintf("%s.targets[%d]", p, i)
		v.matrixName(tp+".name", t.Name, targets)
		switch {
		case t.To != "" && t.Source != "":
			v.add(tp, "a target is either to (host:port) or source (a source's prober), not both")
		case t.Source != "":
			if !slices.ContainsFunc(m.Sources, func(s MatrixSource) bool { return s.Name == t.Source }) {
				v.add(tp+".source", "%q is none of the check's sources", t.Source)
			}
			if t.Port < 0 || t.Port > 65535 {
				v.add(tp+".port", "%d is not a port; give one of 1-65535", t.Port)
			}
		default:
			if t.Port != 0 {
				v.add(tp+".port", "port goes with source (a prober's port); with to, give the port in host:port")
			}
			if _, _, err := SplitReachTarget(t.To); err != nil {
				v.add(tp+".to", "%v", err)
			}
		}
	}
	switch m.Unlisted {
	case MatrixOpen, MatrixClosed:
	case "":
		v.add(p+".unlisted", "missing; say what every cell not listed must be: closed (deny unless listed) or open")
	default:
		v.add(p+".unlisted", "%q is neither closed nor open", m.Unlisted)
	}
	// A cell listed both open and closed has no answer.
	open := map[[2]string]bool{}
	for _, set := range []struct {
		field string
		cells []MatrixCells
	}{{"open", m.Open}, {"closed", m.Closed}} {
		for i, c := range set.cells {
			cp := fmt.Sprintf("%s.%s[%d]", p, set.field, i)
			v.matrixRefs(cp+".from", c.From, sources, "sources")
			v.matrixRefs(cp+".to", c.To, targets, "targets")
			for _, s := range m.Sources {
				for _, t := range m.Targets {
					if !(slices.Contains(c.From, MatrixAny) || slices.Contains(c.From, s.Name)) || !(slices.Contains(c.To, MatrixAny) || slices.Contains(c.To, t.Name)) {
						continue
					}
					key := [2]string{s.Name, t.Name}
					if set.field == "open" {
						open[key] = true
					} else if open[key] {
						v.add(cp, "the cell from %s to %s is listed open too; list each cell once", s.Name, t.Name)
					}
				}
			}
		}
	}
}

func (v *validator) matrixName(p, name string, seen map[string]bool) {
	switch {
	case !isDNSLabel(name, maxDNSLabelLen):
		v.add(p, "%q is not a name of lowercase letters, digits and dashes", name)
	case seen[name]:
		v.add(p, "%q is named twice; give each a name of its own", name)
	}
	seen[name] = true
}

func (v *validator) matrixRefs(p string, names []string, declared map[string]bool, what string) {
	if len(names) == 0 {
		v.add(p, "missing; name one or more of the check's %s, or * for all of them", what)
	}
	for _, n := range names {
		if n != MatrixAny && !declared[n] {
			v.add(p, "%q is none of the check's %s (%s)", n, what, strings.Join(slices.Sorted(maps.Keys(declared)), ", "))
		}
	}
}

func (v *validator) commandCheck(p string, c *CommandCheck) {
	if len(c.Run) == 0 || c.Run[0] == "" {
		v.add(p+".run", "missing; name the program and its arguments, e.g. [test, -s, /root/notes.txt]")
	}
	v.absolute(p+".dir", c.Dir)
	if c.ExitCode != nil && (*c.ExitCode < 0 || *c.ExitCode > maxExitCode) {
		v.add(p+".exitCode", "%d is not an exit code (0 to %d)", *c.ExitCode, maxExitCode)
	}
	v.regex(p+".stdout", c.Stdout)
}

func (v *validator) fieldAssert(p string, f *FieldAssert) {
	if f.Path == "" {
		v.add(p+".path", "missing; e.g. spec.replicas or metadata.labels[\"app\"]")
	} else if _, err := ParsePath(f.Path); err != nil {
		v.add(p+".path", "%v", err)
	}
	v.enum(p+".format", f.Format, "json", "yaml")
	a := &f.Assert
	v.value(p+".equals", a.Equals)
	v.value(p+".notEquals", a.NotEquals)
	v.value(p+".gte", a.GTE)
	v.value(p+".lte", a.LTE)
	v.value(p+".subsetOf", a.SubsetOf)
	v.value(p+".storedAs", a.StoredAs)
	v.regex(p+".matches", a.Matches)
	v.regex(p+".notMatches", a.NotMatches)
	v.enum(p+".type", a.Type, "string", "number", "integer", "boolean", "object", "array", "null")
	for _, bound := range []struct {
		name string
		val  *Value
	}{{"gte", a.GTE}, {"lte", a.LTE}} {
		if bound.val == nil || bound.val.IsRef() {
			continue
		}
		switch bound.val.Literal.(type) {
		case int, int64, uint64, float64:
		default:
			v.add(p+"."+bound.name, "%s compares numbers; found %v", bound.name, bound.val.Literal)
		}
	}
	if a.SubsetOf != nil && !a.SubsetOf.IsRef() {
		if _, ok := a.SubsetOf.Literal.(map[string]any); !ok {
			v.add(p+".subsetOf", "expected a mapping of the entries the object must contain")
		}
	}
	if a.Any && a.Exists != nil && !*a.Exists {
		v.add(p+".any", "any asks one of the values to hold, exists: false that there is none; keep one")
	}
}

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

// workers checks the worker nodes' count, labels and taints.
func (v *validator) workers(ws []Node) {
	if len(ws) > MaxWorkers {
		v.add("cluster.workers", "%d workers is more than %d: each is a node container with its own kubelet; teach with fewer", len(ws), MaxWorkers)
	}
	for i, w := range ws {
		p := joinIndex("cluster.workers", i)
		for _, k := range slices.Sorted(maps.Keys(w.Labels)) {
			if errs := k8svalidation.IsQualifiedName(k); len(errs) > 0 {
				v.add(p+".labels", "%q is not a label key: %s", k, errs[0])
			} else if strings.HasPrefix(k, "kubernetes.io/") || strings.HasPrefix(k, "node-role.kubernetes.io/") || strings.Contains(k, ".kubernetes.io/") || strings.HasPrefix(k, "k8s.io/") {
				v.add(p+".labels", "%q is a label the cluster sets itself: use a key of your own, such as zone or disk", k)
			}
			if errs := k8svalidation.IsValidLabelValue(w.Labels[k]); len(errs) > 0 {
				v.add(p+".labels."+k, "%q is not a label value: %s", w.Labels[k], errs[0])
			}
		}
		for j, t := range w.Taints {
			if _, err := ParseTaint(t); err != nil {
				v.add(joinIndex(p+".taints", j), "%v", err)
			}
		}
	}
}

// addons checks the add-on names.
func (v *validator) addons(as []string) {
	seen := map[string]bool{}
	for i, a := range as {
		p := joinIndex("cluster.addons", i)
		switch {
		case !slices.Contains(Addons, a):
			v.add(p, "%q is not an add-on; use one of %s", a, strings.Join(Addons, ", "))
		case seen[a]:
			v.add(p, "add-on %q is listed twice", a)
		}
		seen[a] = true
	}
}

// Taint is one node taint as kubectl taint writes it.
type Taint struct {
	Key, Value, Effect string
	// Valued says a value was written (key=value, or key= for the empty
	// one): a toleration of key:Effect tolerates the key with any value.
	Valued bool
}

// TaintError says what is wrong with a taint as written.
type TaintError struct {
	// Taint is the taint as written, Key its key.
	Taint, Key string
	// Part is what is wrong: "effect" (none written, or not one), "key" or
	// "value".
	Part string
	// Problem says what is wrong with the part, e.g. `"x y" is not a taint
	// key: ...`; "" when no effect is written.
	Problem string
}

func (e *TaintError) Error() string {
	if e.Problem == "" {
		return fmt.Sprintf("taint %q has no effect: write key=value:NoSchedule (or PreferNoSchedule, NoExecute)", e.Taint)
	}
	return fmt.Sprintf("taint %q: %s", e.Taint, e.Problem)
}

// ParseTaint reads key=value:Effect, key=:Effect or key:Effect, and checks
// the effect, the key (a qualified name) and the value (a label value); its
// errors are *TaintError.
func ParseTaint(s string) (Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	key, value, valued := strings.Cut(kv, "=")
	if !ok {
		return Taint{}, &TaintError{Taint: s, Key: key, Part: "effect"}
	}
	switch effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		return Taint{}, &TaintError{Taint: s, Key: key, Part: "effect",
			Problem: fmt.Sprintf("%q is not an effect; use NoSchedule, PreferNoSchedule or NoExecute", effect)}
	}
	if errs := k8svalidation.IsQualifiedName(key); len(errs) > 0 {
		return Taint{}, &TaintError{Taint: s, Key: key, Part: "key", Problem: fmt.Sprintf("%q is not a taint key: %s", key, errs[0])}
	}
	if errs := k8svalidation.IsValidLabelValue(value); len(errs) > 0 {
		return Taint{}, &TaintError{Taint: s, Key: key, Part: "value", Problem: fmt.Sprintf("%q is not a taint value: %s", value, errs[0])}
	}
	return Taint{Key: key, Value: value, Effect: effect, Valued: valued}, nil
}

// HasAddon reports whether the lab asks for add-on name.
func (c *Cluster) HasAddon(name string) bool { return slices.Contains(c.Addons, name) }

// nodeOfFile checks a file check that reads a node: the lab gives the
// learner its nodes, the node is one of the cluster's, and the check asks
// nothing a node's file cannot answer (times of the sandbox's probe, the
// sandbox's other paths).
func (v *validator) nodeOfFile(p string, f *FileCheck) {
	c := v.labCluster
	if c == nil || !c.NodeAccess {
		v.add(p+".node", "reads node %q, but the lab does not give the learner its nodes: set cluster.nodeAccess: true, or check a file of the sandbox", f.Node)
		return
	}
	if !slices.Contains(NodeRoles(c), f.Node) {
		v.add(p+".node", "%q is not a node of the lab's cluster; use one of %s", f.Node, strings.Join(NodeRoles(c), ", "))
	}
	if f.WrittenDuringProbe || f.NotInside != "" {
		v.add(p+".node", "a file on a node has no writtenDuringProbe nor notInside: remove them, or check a file of the sandbox")
	}
}

// NodeRoles names the nodes of a lab's cluster as file checks name them:
// control-plane, then worker, worker2, ... (kind's names after the
// cluster's).
func NodeRoles(c *Cluster) []string {
	roles := []string{"control-plane"}
	for i := range c.Workers {
		if i == 0 {
			roles = append(roles, "worker")
		} else {
			roles = append(roles, fmt.Sprintf("worker%d", i+1))
		}
	}
	return roles
}
