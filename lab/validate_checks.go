package lab

import (
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/labels"
)

// sandboxCheck validates c, at p, and that what it reads in the sandbox
// is where the grader sees it.
func (v *validator) sandboxCheck(p string, c *Check) {
	v.check(p, c)
	reads := sandboxReads(p, c)
	for _, at := range slices.Sorted(maps.Keys(reads)) {
		read := reads[at].path
		if !strings.HasPrefix(read, "/") {
			continue
		}
		// A path the grader does not see is read from the host's side
		// (FileChecksOutside, RepoChecksOutside), but never one of these.
		if d := neverRead(read); d != "" {
			v.add(at, "%s is in %s, which no check can read: %s holds the kernel's views of processes, devices and the system, never the learner's work; "+
				"check the file or repository the learner writes instead (e.g. /root/out.txt, /etc/app.conf, /srv/app)", read, d, d)
		}
	}
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
	if c.Service != nil {
		kinds = append(kinds, "service")
		v.serviceCheck(p+".service", c.Service)
	}
	v.clusterCheck(p, c)
	switch len(kinds) {
	case 1:
	case 0:
		v.add(p, "a check needs exactly one of file, git, kube, access, reach, matrix, command, audit or service")
	default:
		v.add(p, "a check has exactly one of file, git, kube, access, reach, matrix, command, audit or service, found %s; split it into several checks", strings.Join(kinds, " and "))
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

// unitName is a systemd service's name as a service check takes it.
var unitName = regexp.MustCompile(`^[A-Za-z0-9:_.@\\-]+\.service$`)

// serviceCheck checks a service check: the lab gives the learner its
// nodes, the node is one of the cluster's, and the unit is a service.
func (v *validator) serviceCheck(p string, s *ServiceCheck) {
	c := v.labCluster
	switch {
	case s.Node == "":
		v.add(p+".node", "a service check names the node it looks at: control-plane, worker, worker2, ...")
	case c == nil || !c.NodeAccess:
		v.add(p+".node", "looks at node %q, but the lab does not give the learner its nodes: set cluster.nodeAccess: true, or check what the service does through the cluster instead", s.Node)
	case !slices.Contains(NodeRoles(c), s.Node):
		v.add(p+".node", "%q is not a node of the lab's cluster; use one of %s", s.Node, strings.Join(NodeRoles(c), ", "))
	}
	if !unitName.MatchString(s.Unit) {
		v.add(p+".unit", "%q is not a systemd service's name; name it in full, e.g. kubelet.service", s.Unit)
	}
}
