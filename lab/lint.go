package lab

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"
)

// Warning is a problem in a valid lab file that makes the lab worse to
// take but not impossible: a check reading a path the instructions never
// mention, a step without mistake scripts. Line and Column are 1-based;
// zero means unknown.
type Warning struct {
	File   string
	Line   int
	Column int
	// Path names the field, e.g. steps[3].checks[1].file.path.
	Path string
	Msg  string
}

// String formats the warning as file:line:column: warning: path: message.
func (w Warning) String() string {
	var b strings.Builder
	if w.File != "" {
		b.WriteString(w.File + ":")
	}
	if w.Line > 0 {
		fmt.Fprintf(&b, "%d:", w.Line)
		if w.Column > 0 {
			fmt.Fprintf(&b, "%d:", w.Column)
		}
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	b.WriteString("warning: ")
	if w.Path != "" {
		b.WriteString(w.Path + ": ")
	}
	b.WriteString(w.Msg)
	return b.String()
}

// Lint returns the warnings of a lab that loaded without errors, in the
// order of the file:
//
//   - every path a check reads (file.path, file.notInside, git.repo), and
//     every namespace and object name a kube check reads, should be
//     mentioned in the instructions of the check's step or an earlier
//     step, or in the lab's goal; otherwise the learner has to guess it;
//   - a lab marked metadata.draft is unfinished: its placeholder checks
//     and solves that only fail are warned about (without draft, labctl
//     lint reports them as problems, see Unfinished);
//   - every step should have mistake scripts, so that labctl test proves
//     its checks catch a wrong solution, and every mistake a way back: a
//     recover script, or an explain that sends the learner to
//     `labctl reset --to STEP`;
//   - cluster.podSecurity: privileged lets the learner run privileged,
//     host namespace and hostPath Pods, that is become root on the node;
//     so does an access rule that writes namespaces, by relabelling one;
//   - a cluster-wide rule beyond reading, or a node or sandbox image of the
//     lab's own, reaches the host (Risks): install, up and test refuse the
//     lab without the user's consent;
//   - an image with build is never optional: labctl builds it, so up
//     always has it.;
//   - a lab with cluster.workloads: declare promises its Pods need not
//     run; a kube check reading what only a running Pod sets (a Pod's
//     status.phase, readyReplicas, containerStatuses ...) or a script or
//     command check running kubectl logs, exec, port-forward, rollout
//     status (and the like) breaks that promise.
//
// A path counts as mentioned when it is written whole, or when one of its
// parent directories is written and so is the rest of it (a repository,
// then apps/web/deployment.yaml relative to it).
func (l *Lab) Lint() []Warning {
	var ws []Warning
	add := func(p, format string, args ...any) {
		w := Warning{Path: p, Msg: fmt.Sprintf(format, args...)}
		if file, line, col, ok := l.Position(p); ok {
			w.File, w.Line, w.Column = file, line, col
		}
		ws = append(ws, w)
	}
	if l.Cluster.PodSecurity == PodSecurityPrivileged {
		add("cluster.podSecurity", "privileged lets the learner run privileged, hostPID, hostNetwork and hostPath Pods in the lab's namespaces, "+
			"which makes them root on the cluster's node (its CA key, admin credentials) and gives them a route to the host; "+
			"use %s or %s unless the lab is about exactly that", PodSecurityBaseline, PodSecurityRestricted)
	}
	warned := map[string]bool{} // rules warned about for writing namespaces
	for _, rs := range []struct {
		field string
		rules []PolicyRule
	}{{"access.rules", l.Access.Rules}, {"access.clusterRules", l.Access.ClusterRules}} {
		for i, r := range rs.rules {
			if writesNamespaces(r) {
				warned[joinIndex(rs.field, i)] = true
				add(joinIndex(rs.field, i), "this rule lets the learner change namespaces, and so relabel the lab's namespaces out of their Pod Security level (cluster.podSecurity); "+
					"grant namespaces only get, list and watch unless the lab is about namespaces")
			}
		}
	}
	for _, r := range l.Risks() {
		if r.Path == "cluster.podSecurity" || warned[r.Path] {
			continue // warned about above
		}
		add(r.Path, "%s: %s; install, up and test refuse the lab unless the user passes --allow-host-access, "+
			"so ask for it only when the lab is about exactly that", r.Value, r.Why)
	}
	for i, im := range l.Cluster.Images {
		if im.Optional && im.Build != "" {
			add(joinIndex("cluster.images", i)+".optional", "image %q is built from %s, so up always has it: optional changes nothing; remove it", im.Name, im.Build)
		}
	}
	if l.Cluster.Workloads == WorkloadsDeclare {
		for _, u := range l.runningPodUses() {
			add(u.path, "%s %s, which needs a running Pod, but cluster.workloads is %s: the lab's Pods may never run (a class's control planes have no nodes); "+
				"check what the API server stores instead (specs, status.replicas), or set cluster.workloads: %s", u.what, u.why, WorkloadsDeclare, WorkloadsRun)
		}
	}
	l.unmentioned(func(i, j int, r read) {
		add(joinIndex(joinIndex("steps", i)+".checks", j)+"."+r.field, "check %q reads %s %s, which neither the instructions of step %q or an earlier step nor the lab's goal mention; name it there so the learner need not guess",
			l.Steps[i].Checks[j].Name, r.what, r.value, l.Steps[i].ID)
	})
	if l.Metadata.Draft {
		unfinished := l.Unfinished()
		ws = append(ws, unfinished...)
		if len(unfinished) == 0 {
			add("metadata.draft", "the lab is marked a draft, but every step has checks and a solve: remove draft")
		} else {
			add("metadata.draft", "the lab is a draft: remove draft when every step has real checks and a solve; lint then requires it")
		}
	}
	for i, s := range l.Steps {
		if len(s.Mistakes) == 0 {
			add(joinIndex("steps", i)+".id", "step %q has no mistakes; add a known wrong solution with the checks that must catch it, so that labctl test proves they do", s.ID)
		}
		for j, m := range s.Mistakes {
			if strings.TrimSpace(m.Recover) == "" && !strings.Contains(m.Explain, "labctl reset --to "+s.ID) {
				add(joinIndex(joinIndex("steps", i)+".mistakes", j)+".name", "mistake %q has no way back: write what its explain tells the learner to do now as recover, so that labctl test proves the step passes after it; "+
					"when only a fresh start helps (the API server's record of what was done keeps a check failing), say labctl reset --to %s in its explain", m.Name, s.ID)
			}
			if len(m.Evidence) > 0 {
				continue
			}
			for _, o := range s.Suspects(m.Fails, false) {
				if o.Name != m.Name {
					add(joinIndex(joinIndex("steps", i)+".mistakes", j)+".fails", "mistakes %q and %q fail the same checks, so a learner who makes one is told both; "+
						"give %q evidence that holds only after it (labctl test requires it)", m.Name, o.Name, m.Name)
					break
				}
			}
		}
	}
	l.lintTranslations(add)
	for _, tag := range slices.Sorted(maps.Keys(l.Translations)) {
		tr := l.In(tag)
		tr.unmentioned(func(i, j int, r read) {
			id := l.Steps[i].ID
			if l.Translations[tag].Steps[id].Instructions == "" {
				return // warned about as a missing text
			}
			add(joinKey(joinKey("translations", tag)+".steps", id)+".instructions", "check %q reads %s %s, which the %s instructions of step %q and earlier steps and the %s goal never mention",
				l.Steps[i].Checks[j].Name, r.what, r.value, tag, id, tag)
		})
	}
	sort.SliceStable(ws, func(i, j int) bool {
		a, b := ws[i], ws[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return ws
}

// unmentioned calls found for each thing a check reads (steps[i].checks[j])
// that neither the instructions of its step or an earlier step nor the
// lab's goal mention.
func (l *Lab) unmentioned(found func(i, j int, r read)) {
	texts := []string{l.Metadata.Goal}
	for i := range l.Steps {
		s := &l.Steps[i]
		texts = append(texts, s.Instructions)
		seen := map[string]bool{}
		for j := range s.Checks {
			for _, r := range checkReads(&s.Checks[j]) {
				if r.value == "" || seen[r.what+" "+r.value] {
					continue
				}
				seen[r.what+" "+r.value] = true
				mentioned := mentionsName(texts, r.value)
				if r.isPath {
					mentioned = mentionsPath(texts, r.value)
				}
				if !mentioned {
					found(i, j, r)
				}
			}
		}
	}
}

// read is one thing a check reads that the learner must be told about.
type read struct {
	field, what, value string
	isPath             bool
}

func checkReads(c *Check) []read {
	var rs []read
	switch {
	case c.File != nil:
		rs = append(rs, read{"file.path", "path", c.File.Path, true})
		if c.File.NotInside != "" {
			rs = append(rs, read{"file.notInside", "path", c.File.NotInside, true})
		}
	case c.Git != nil:
		rs = append(rs, read{"git.repo", "repository", c.Git.Repo, true})
	case c.Kube != nil:
		if c.Kube.Namespace != "" {
			rs = append(rs, read{"kube.namespace", "namespace", c.Kube.Namespace, false})
		}
		if c.Kube.Name != "" {
			rs = append(rs, read{"kube.name", c.Kube.Kind, c.Kube.Name, false})
		}
	}
	return rs
}

// mentionsPath reports whether the texts name p whole, or name one of its
// parent directories (other than /) and the rest of p.
func mentionsPath(texts []string, p string) bool {
	p = path.Clean(p)
	if mentionsName(texts, p) {
		return true
	}
	for dir := path.Dir(p); dir != "/" && dir != "."; dir = path.Dir(dir) {
		if mentionsName(texts, dir) && mentionsName(texts, strings.TrimPrefix(p, dir+"/")) {
			return true
		}
	}
	return false
}

// mentionsName reports whether some text holds name as a whole word: not
// preceded or followed by a letter, digit, '_' or '-' (a '/' may follow,
// so a directory written as dir/ counts, and a '.' that ends a sentence).
func mentionsName(texts []string, name string) bool {
	for _, t := range texts {
		for off := 0; ; {
			i := strings.Index(t[off:], name)
			if i < 0 {
				break
			}
			start, end := off+i, off+i+len(name)
			if (start == 0 || !nameByte(t[start-1])) && endsWord(t, end) {
				return true
			}
			off = start + 1
		}
	}
	return false
}

func endsWord(t string, end int) bool {
	switch {
	case end == len(t):
		return true
	case t[end] == '.':
		return end+1 == len(t) || !nameByte(t[end+1])
	}
	return !nameByte(t[end])
}

// nameByte reports whether c can be part of a file or object name.
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// writesNamespaces reports whether r grants a verb other than get, list and
// watch on the core group's namespaces, or on their status or finalize
// (which carry a namespace's labels as well).
func writesNamespaces(r PolicyRule) bool {
	core := slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, "*")
	ns := slices.ContainsFunc(r.Resources, func(res string) bool {
		return res == "*" || res == "namespaces" || strings.HasPrefix(res, "namespaces/") || strings.HasPrefix(res, "*/")
	})
	writes := slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" })
	return core && ns && writes
}
