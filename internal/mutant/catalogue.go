package mutant

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Mutation is one named way of getting an object of a kind wrong. Make
// lists its mutants of o (none when it does not apply to o).
type Mutation struct {
	Name string
	Make func(o Object, l Lab) []Mutant
}

// Catalogue holds the mutations of each kind, in the order their mutants
// are tried. To teach labctl a new wrong answer, add a Mutation here (and a
// row to docs/authoring.md's table).
var Catalogue = map[string][]Mutation{
	"Role":               roleMutations,
	"ClusterRole":        roleMutations,
	"RoleBinding":        bindingMutations,
	"ClusterRoleBinding": bindingMutations,
	"NetworkPolicy":      netpolMutations,
	"Deployment":         workloadMutations,
	"StatefulSet":        workloadMutations,
	"DaemonSet":          workloadMutations,
	"Service":            serviceMutations,
	"ConfigMap":          configMapMutations,
}

// AnyObject holds the mutations of an object of any kind, tried after its
// kind's.
var AnyObject = []Mutation{
	{"misplace", misplace},
	{"revert", revert},
	{"delete", deleteNew},
}

// change is the mutant of o that f makes to a clean copy of it, named
// "<where> → <what>".
func change(o Object, where, what string, f func(c Object)) Mutant {
	c := Clean(o)
	f(c)
	return Mutant{ID: fmt.Sprintf("%s: %s → %s", Ref(o), where, what), Edits: []Edit{{From: Clean(o), To: c}}}
}

// deleted is the mutant that deletes o.
func deleted(o Object) Mutant {
	return Mutant{ID: Ref(o) + ": deleted", Edits: []Edit{{From: Clean(o)}}}
}

// at reads the list at path in c (a copy being changed) for writing.
func at(c Object, path ...string) []any { return list(c, path...) }

// set writes v at path in c, making the maps on the way.
func set(c Object, v any, path ...string) {
	m := c
	for _, p := range path[:len(path)-1] {
		n, ok := m[p].(map[string]any)
		if !ok {
			n = map[string]any{}
			m[p] = n
		}
		m = n
	}
	m[path[len(path)-1]] = v
}

// without is l without its i-th item, as a new list.
func without(l []any, i int) []any {
	return append(slices.Clone(l[:i]), l[i+1:]...)
}

// strs reads a list of strings.
func strs(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// keys are m's keys, sorted.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// --- Role and ClusterRole ---

// addedVerbs are the verbs a learner adds by mistake.
var addedVerbs = []string{"list", "create", "update", "patch", "delete"}

var roleMutations = []Mutation{
	{"verb to *", eachRule(func(o Object, i int, r map[string]any) []Mutant {
		return star(o, i, r, "verbs")
	})},
	{"resource to *", eachRule(func(o Object, i int, r map[string]any) []Mutant {
		return star(o, i, r, "resources")
	})},
	{"apiGroup to *", eachRule(func(o Object, i int, r map[string]any) []Mutant {
		return star(o, i, r, "apiGroups")
	})},
	{"drop resourceNames", eachRule(func(o Object, i int, r map[string]any) []Mutant {
		if len(strs(r["resourceNames"])) == 0 {
			return nil
		}
		return []Mutant{change(o, fmt.Sprintf("rules[%d].resourceNames", i), "(dropped)", func(c Object) {
			delete(at(c, "rules")[i].(map[string]any), "resourceNames")
		})}
	})},
	{"add a verb", eachRule(func(o Object, i int, r map[string]any) []Mutant {
		verbs := strs(r["verbs"])
		if slices.Contains(verbs, "*") || len(strs(r["nonResourceURLs"])) > 0 {
			return nil
		}
		var out []Mutant
		for _, v := range addedVerbs {
			if slices.Contains(verbs, v) {
				continue
			}
			out = append(out, change(o, fmt.Sprintf("rules[%d].verbs", i), "+"+v, func(c Object) {
				rule := at(c, "rules")[i].(map[string]any)
				rule["verbs"] = append(rule["verbs"].([]any), v)
			}))
		}
		return out
	})},
	{"remove a rule", eachRule(func(o Object, i int, _ map[string]any) []Mutant {
		return []Mutant{change(o, fmt.Sprintf("rules[%d]", i), "(removed)", func(c Object) {
			c["rules"] = without(at(c, "rules"), i)
		})}
	})},
	{"remove a verb", eachRule(func(o Object, i int, r map[string]any) []Mutant {
		verbs := strs(r["verbs"])
		if len(verbs) < 2 {
			return nil
		}
		var out []Mutant
		for j, v := range verbs {
			out = append(out, change(o, fmt.Sprintf("rules[%d].verbs", i), "-"+v, func(c Object) {
				rule := at(c, "rules")[i].(map[string]any)
				rule["verbs"] = without(rule["verbs"].([]any), j)
			}))
		}
		return out
	})},
}

// eachRule makes f's mutants of each rule of a role.
func eachRule(f func(o Object, i int, rule map[string]any) []Mutant) func(Object, Lab) []Mutant {
	return func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for i, r := range list(o, "rules") {
			if rule, ok := r.(map[string]any); ok {
				out = append(out, f(o, i, rule)...)
			}
		}
		return out
	}
}

// star widens the rule's field to ["*"] unless it is already, or absent.
func star(o Object, i int, rule map[string]any, field string) []Mutant {
	vs := strs(rule[field])
	if len(vs) == 0 || slices.Equal(vs, []string{"*"}) {
		return nil
	}
	return []Mutant{change(o, fmt.Sprintf("rules[%d].%s", i, field), "[*]", func(c Object) {
		at(c, "rules")[i].(map[string]any)[field] = []any{"*"}
	})}
}

// --- RoleBinding and ClusterRoleBinding ---

var bindingMutations = []Mutation{
	{"subject to its group", eachServiceAccount(func(o Object, i int, ns, name string, _ Lab) []Mutant {
		return []Mutant{subject(o, i, "Group", "system:serviceaccounts:"+ns, "")}
	})},
	{"subject to every ServiceAccount", eachServiceAccount(func(o Object, i int, _, _ string, _ Lab) []Mutant {
		return []Mutant{subject(o, i, "Group", "system:serviceaccounts", "")}
	})},
	{"another ServiceAccount", eachServiceAccount(func(o Object, i int, ns, name string, l Lab) []Mutant {
		var out []Mutant
		for _, sa := range l.ServiceAccounts {
			if sa == ns+"/"+name {
				continue
			}
			ons, oname, _ := strings.Cut(sa, "/")
			out = append(out, subject(o, i, "ServiceAccount", oname, ons))
		}
		return out
	})},
	{"roleRef to edit or admin", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for _, role := range []string{"edit", "admin"} {
			if str(o, "roleRef", "kind") == "ClusterRole" && str(o, "roleRef", "name") == role {
				continue
			}
			m := change(o, "roleRef", "ClusterRole "+role, func(c Object) {
				c["roleRef"] = map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role}
			})
			m.Edits[0].Recreate = true // roleRef cannot change
			out = append(out, m)
		}
		return out
	}},
	{"cluster-wide binding", clusterWide},
	{"remove a subject", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for i := range list(o, "subjects") {
			out = append(out, change(o, fmt.Sprintf("subjects[%d]", i), "(removed)", func(c Object) {
				c["subjects"] = without(at(c, "subjects"), i)
			}))
		}
		return out
	}},
}

// eachServiceAccount makes f's mutants of each ServiceAccount subject of a
// binding.
func eachServiceAccount(f func(o Object, i int, ns, name string, l Lab) []Mutant) func(Object, Lab) []Mutant {
	return func(o Object, l Lab) []Mutant {
		var out []Mutant
		for i, s := range list(o, "subjects") {
			sm, _ := s.(map[string]any)
			if sm == nil || sm["kind"] != "ServiceAccount" {
				continue
			}
			ns, _ := sm["namespace"].(string)
			if ns == "" {
				ns = Namespace(o)
			}
			name, _ := sm["name"].(string)
			out = append(out, f(o, i, ns, name, l)...)
		}
		return out
	}
}

// subject replaces a binding's i-th subject.
func subject(o Object, i int, kind, name, ns string) Mutant {
	s := map[string]any{"kind": kind, "name": name}
	what := kind + " " + name
	if kind == "Group" {
		s["apiGroup"] = "rbac.authorization.k8s.io"
	} else {
		s["namespace"] = ns
		what = kind + " " + ns + "/" + name
	}
	return change(o, fmt.Sprintf("subjects[%d]", i), what, func(c Object) { at(c, "subjects")[i] = s })
}

// clusterWide turns a RoleBinding into a ClusterRoleBinding of the same
// name and subjects, of its ClusterRole, or of a ClusterRole with the
// rules of its Role (named like it): the learner who grants in every
// namespace what one needed.
func clusterWide(o Object, l Lab) []Mutant {
	if Kind(o) != "RoleBinding" {
		return nil
	}
	crb := Clean(o)
	crb["kind"] = "ClusterRoleBinding"
	delete(crb["metadata"].(map[string]any), "namespace")
	ref := str(o, "roleRef", "name")
	m := Mutant{ID: fmt.Sprintf("%s: kind → ClusterRoleBinding of ClusterRole %s", Ref(o), ref)}
	if str(o, "roleRef", "kind") == "Role" {
		var role Object
		for _, x := range l.Objects {
			if Kind(x) == "Role" && Namespace(x) == Namespace(o) && Name(x) == ref {
				role = x
			}
		}
		if role == nil {
			return nil
		}
		cr := Clean(role)
		cr["kind"] = "ClusterRole"
		delete(cr["metadata"].(map[string]any), "namespace")
		set(crb, "ClusterRole", "roleRef", "kind")
		m.Edits = append(m.Edits, Edit{To: cr})
	}
	m.Edits = append(m.Edits, Edit{From: Clean(o), To: crb, Recreate: true})
	return []Mutant{m}
}
