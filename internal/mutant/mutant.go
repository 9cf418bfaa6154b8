// Package mutant derives wrong answers from a right one: given the objects
// of a lab as a step started and as its solve left them, it lists mutants,
// each one small change a learner could make instead (a verb widened to
// `*`, a selector emptied, a policy deleted). `labctl test --mutate`
// applies each in turn and expects some check of the step to fail; a
// mutant every check lets pass is a probable misgrade. The package is pure:
// objects are unstructured (map[string]any, as a Kubernetes API or
// kubectl's JSON gives them) and nothing here reaches a cluster.
package mutant

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Object is a Kubernetes object as unstructured JSON.
type Object = map[string]any

// Edit is one write of a mutant: From is the object as it is (nil: the
// write creates To), To the object as the mutant leaves it (nil: the write
// deletes From). Recreate says that To replaces From by a delete and a
// create, because the change touches a field the API does not let change
// (a RoleBinding's roleRef), or because To is elsewhere (another
// namespace, another kind). An edit with Label writes no object: it
// labels running Pods, as kubectl label does.
type Edit struct {
	From, To Object
	Recreate bool
	Label    *Relabel
}

// Mutant is one wrong answer: a readable, stable id and the edits that make
// it, in order. Undoing it runs Undo's edits.
type Mutant struct {
	// ID is "<Kind> <namespace>/<name>: <where> → <what>", e.g.
	// "NetworkPolicy shop/api-ingress: spec.ingress[0].from[0].podSelector → {}".
	ID    string
	Edits []Edit
}

// Undo is the edits that bring back what m's edits changed, in order.
func (m Mutant) Undo() []Edit {
	out := make([]Edit, len(m.Edits))
	for i, e := range m.Edits {
		u := Edit{From: e.To, To: e.From, Recreate: e.Recreate}
		if e.Label != nil {
			u.Label = e.Label.Undo()
		}
		out[len(m.Edits)-1-i] = u
	}
	return out
}

// Lab is what the catalogue knows of the lab beyond one object.
type Lab struct {
	// Namespaces are the lab's namespaces, where a misplaced object may go.
	Namespaces []string
	// ServiceAccounts are the lab's ServiceAccounts at the solve's end, as
	// "namespace/name", another subject a binding may name by mistake.
	ServiceAccounts []string
	// Objects are the lab's objects at the solve's end (a binding's Role).
	Objects []Object
	// Start is the object of the same identity at the step's start (nil:
	// the solve created it).
	Start Object
}

// Generate lists the mutants of the solve that took the lab from start to
// end: for each object the solve created or changed (Changed), the
// catalogue's mutations of its kind, then the mutations of any object;
// then, for each object the solve deleted, that object kept.
// Mutants are in a stable order: by object, then by the catalogue's order;
// two with the same id are kept once.
func Generate(start, end []Object, namespaces []string) []Mutant {
	lab := Lab{Namespaces: namespaces, Objects: end}
	for _, o := range end {
		if Kind(o) == "ServiceAccount" {
			lab.ServiceAccounts = append(lab.ServiceAccounts, Namespace(o)+"/"+Name(o))
		}
	}
	sort.Strings(lab.ServiceAccounts)
	var out []Mutant
	seen := map[string]bool{}
	for _, c := range Changed(start, end) {
		l := lab
		l.Start = c.Start
		for _, m := range Of(c.End, l) {
			if !seen[m.ID] {
				seen[m.ID] = true
				out = append(out, m)
			}
		}
	}
	for _, o := range Removed(start, end) {
		m := Mutant{ID: Ref(o) + ": kept (the solve deletes it)", Edits: []Edit{{To: Clean(o)}}}
		if !seen[m.ID] {
			seen[m.ID] = true
			out = append(out, m)
		}
	}
	return out
}

// Removed lists the objects of start the solve deleted (none of end has
// their identity), sorted by identity.
func Removed(start, end []Object) []Object {
	after := map[string]bool{}
	for _, o := range end {
		after[Key(o)] = true
	}
	var out []Object
	for _, o := range start {
		if !after[Key(o)] {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return Key(out[i]) < Key(out[j]) })
	return out
}

// Change is one object the solve created (Start nil) or changed.
type Change struct {
	Start, End Object
}

// Changed pairs each object of end with its version in start and keeps
// those the solve created or changed, ignoring what the API server and the
// controllers write (status, resource versions, managed fields), in the
// order of end sorted by identity.
func Changed(start, end []Object) []Change {
	before := map[string]Object{}
	for _, o := range start {
		before[Key(o)] = o
	}
	var out []Change
	for _, o := range end {
		s := before[Key(o)]
		if s != nil && equal(Clean(s), Clean(o)) {
			continue
		}
		out = append(out, Change{Start: s, End: o})
	}
	sort.Slice(out, func(i, j int) bool { return Key(out[i].End) < Key(out[j].End) })
	return out
}

// Of lists the mutants of one object: its kind's mutations in the
// catalogue, then those of any object; two with the same id are kept once.
func Of(o Object, l Lab) []Mutant {
	var out []Mutant
	seen := map[string]bool{}
	for _, m := range append(slices.Clone(Catalogue[Kind(o)]), AnyObject...) {
		for _, x := range m.Make(o, l) {
			if !seen[x.ID] {
				seen[x.ID] = true
				out = append(out, x)
			}
		}
	}
	return out
}

// Kind, Namespace and Name read an object's identity.
func Kind(o Object) string      { s, _ := o["kind"].(string); return s }
func Namespace(o Object) string { return str(o, "metadata", "namespace") }
func Name(o Object) string      { return str(o, "metadata", "name") }

// Key is an object's identity: apiVersion's group, kind, namespace, name.
func Key(o Object) string {
	group, _, found := strings.Cut(str(o, "apiVersion"), "/")
	if !found {
		group = ""
	}
	return group + "/" + Kind(o) + "/" + Namespace(o) + "/" + Name(o)
}

// Ref names an object in a mutant's id: "Kind ns/name", or "Kind name"
// for one of the cluster.
func Ref(o Object) string {
	if ns := Namespace(o); ns != "" {
		return Kind(o) + " " + ns + "/" + Name(o)
	}
	return Kind(o) + " " + Name(o)
}

// volatile are the metadata fields the API server writes, which a write
// of the object back must not carry.
var volatile = []string{"resourceVersion", "uid", "managedFields", "creationTimestamp", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds"}

// Clean is a deep copy of o as it can be written back: without status and
// the metadata the API server writes.
func Clean(o Object) Object {
	c := Copy(o)
	delete(c, "status")
	if md, ok := c["metadata"].(map[string]any); ok {
		for _, k := range volatile {
			delete(md, k)
		}
		if a, ok := md["annotations"].(map[string]any); ok {
			// Kubernetes counts a Deployment's rollouts here.
			delete(a, "deployment.kubernetes.io/revision")
			if len(a) == 0 {
				delete(md, "annotations")
			}
		}
	}
	return c
}

// Copy is a deep copy of o.
func Copy(o Object) Object {
	if o == nil {
		return nil
	}
	return copyValue(o).(map[string]any)
}

func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(t))
		for k, x := range t {
			c[k] = copyValue(x)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, x := range t {
			c[i] = copyValue(x)
		}
		return c
	}
	return v
}

// Equal reports whether a and b are the same JSON.
func Equal(a, b Object) bool { return equal(a, b) }

func equal(a, b Object) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// str reads the string at path in o ("" when absent).
func str(o Object, path ...string) string {
	s, _ := get(o, path...).(string)
	return s
}

// get reads the value at path in o (nil when absent).
func get(o Object, path ...string) any {
	var v any = o
	for _, p := range path {
		switch t := v.(type) {
		case map[string]any:
			v = t[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// list reads the list at path in o.
func list(o Object, path ...string) []any {
	l, _ := get(o, path...).([]any)
	return l
}

// sub reads the map at path in o.
func sub(o Object, path ...string) map[string]any {
	m, _ := get(o, path...).(map[string]any)
	return m
}

// show writes a value for a mutant's id: a string as it is, anything else
// as compact JSON.
func show(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Diff writes the changed lines of a mutant, edit by edit: the object's
// YAML before ("-") and after ("+"), with the object it concerns; a
// created or deleted object is named, not written out.
func Diff(m Mutant) string {
	var b strings.Builder
	for _, e := range m.Edits {
		switch {
		case e.Label != nil:
			fmt.Fprintf(&b, "~ Pods %s/%s: kubectl label %s\n", e.Label.Namespace, e.Label.SelectorString(), strings.Join(e.Label.Args(), " "))
		case e.From == nil:
			fmt.Fprintf(&b, "+ %s (created)\n", Ref(e.To))
		case e.To == nil:
			fmt.Fprintf(&b, "- %s (deleted)\n", Ref(e.From))
		case Key(e.From) != Key(e.To):
			fmt.Fprintf(&b, "- %s\n+ %s\n", Ref(e.From), Ref(e.To))
		default:
			b.WriteString(lineDiff(yamlLines(e.From), yamlLines(e.To)))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func yamlLines(o Object) []string {
	y, err := yaml.Marshal(o)
	if err != nil {
		return []string{err.Error()}
	}
	return strings.Split(strings.TrimSuffix(string(y), "\n"), "\n")
}

// lineDiff lists the lines only in a ("- ") or only in b ("+ "), in order,
// by their longest common subsequence.
func lineDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&out, "- %s\n", a[i])
			i++
		default:
			fmt.Fprintf(&out, "+ %s\n", b[j])
			j++
		}
	}
	return out.String()
}
