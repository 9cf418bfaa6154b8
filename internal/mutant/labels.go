package mutant

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// Relabel is an edit of running Pods, not of an object: the Pods of
// Namespace that Selector selects get the labels To, in place of From
// (the labels concerned as the Pods carry them before; a key in From and
// not in To is removed, one in To and not in From is added). No key of
// Selector changes, so the same Pods are found to take it back.
type Relabel struct {
	Namespace string
	Selector  map[string]string
	From, To  map[string]string
}

// Undo is the relabelling that puts the Pods' labels back.
func (r Relabel) Undo() *Relabel {
	return &Relabel{Namespace: r.Namespace, Selector: r.Selector, From: r.To, To: r.From}
}

// Args are the arguments of kubectl label that make r: the labels set
// ("k=v") and removed ("k-"), sorted by key.
func (r Relabel) Args() []string {
	var out []string
	for _, k := range keysOf(r.From, r.To) {
		if v, set := r.To[k]; set {
			out = append(out, k+"="+v)
		} else {
			out = append(out, k+"-")
		}
	}
	return out
}

// SelectorString writes r's Selector as kubectl's -l takes it.
func (r Relabel) SelectorString() string { return labelString(r.Selector) }

// keysOf are the keys of every map given, sorted, each once.
func keysOf(ms ...map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// labelString writes labels as "k=v,k2=v2", sorted by key.
func labelString(m map[string]string) string {
	var parts []string
	for _, k := range keysOf(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// labelMap reads a map of string labels (nil when absent or not one).
func labelMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		s, ok := x.(string)
		if !ok {
			return nil
		}
		out[k] = s
	}
	return out
}

// subsetOf says whether every label of a is in b with the same value.
func subsetOf(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// --- labels set on the running Pods instead ---

// templateOnPods is the learner who, instead of changing a workload's Pod
// template labels as the solve did, labels its running Pods: the
// workload stays as it was at the step's start, and its Pods (after the
// rollout back to that template) get the labels the solve gave the
// template. A key of the workload's own selector is never among them: the
// API does not let it change.
func templateOnPods(o Object, l Lab) []Mutant {
	if l.Start == nil {
		return nil
	}
	before := labelMap(get(l.Start, "spec", "template", "metadata", "labels"))
	after := labelMap(get(o, "spec", "template", "metadata", "labels"))
	selector := labelMap(get(o, "spec", "selector", "matchLabels"))
	if before == nil || after == nil || len(selector) == 0 || !subsetOf(selector, before) {
		return nil
	}
	from, to := map[string]string{}, map[string]string{}
	for _, k := range keysOf(before, after) {
		b, inBefore := before[k]
		a, inAfter := after[k]
		if _, own := selector[k]; own || (inBefore == inAfter && a == b) {
			continue
		}
		if inBefore {
			from[k] = b
		}
		if inAfter {
			to[k] = a
		}
	}
	if len(from)+len(to) == 0 {
		return nil
	}
	rl := &Relabel{Namespace: Namespace(o), Selector: selector, From: from, To: to}
	return []Mutant{{
		ID: fmt.Sprintf("%s: spec.template.metadata.labels → the step's start, the running Pods labelled %s instead", Ref(o), strings.Join(rl.Args(), " ")),
		Edits: []Edit{
			{From: Clean(o), To: Clean(l.Start)},
			{Label: rl},
		},
	}}
}

// selectorOnPods is the learner who, instead of changing a Service's
// selector (or a NetworkPolicy's podSelector) as the solve did, labels
// the running Pods so that the selector of the step's start selects them:
// the object stays as it was at the step's start, and the Pods the solve's
// selector selects get the start selector's labels. Only Pods of a
// workload of the lab are labelled, whose labels are known (its Pod
// template's), and never with a key of the workload's own selector,
// which would take them from it.
func selectorOnPods(path ...string) func(Object, Lab) []Mutant {
	return func(o Object, l Lab) []Mutant {
		if l.Start == nil {
			return nil
		}
		before := labelMap(get(l.Start, path...))
		after := labelMap(get(o, path...))
		if len(before) == 0 || len(after) == 0 || maps.Equal(before, after) {
			return nil
		}
		var out []Mutant
		for _, w := range l.Objects {
			if !workloadKinds[Kind(w)] || Namespace(w) != Namespace(o) {
				continue
			}
			labels := labelMap(get(w, "spec", "template", "metadata", "labels"))
			own := labelMap(get(w, "spec", "selector", "matchLabels"))
			if !subsetOf(after, labels) {
				continue // the solve's selector does not select its Pods
			}
			from, to := map[string]string{}, map[string]string{}
			taken := false
			for k, v := range before {
				if labels[k] == v {
					continue
				}
				if _, ok := own[k]; ok {
					taken = true
				}
				if old, ok := labels[k]; ok {
					from[k] = old
				}
				to[k] = v
			}
			if taken || len(to) == 0 {
				continue
			}
			to2 := Clean(l.Start)
			keepAddress(to2, o)
			rl := &Relabel{Namespace: Namespace(o), Selector: after, From: from, To: to}
			out = append(out, Mutant{
				ID: fmt.Sprintf("%s: %s → the step's start, the Pods of %s labelled %s instead", Ref(o), where(path), Ref(w), strings.Join(rl.Args(), " ")),
				Edits: []Edit{
					{From: Clean(o), To: to2},
					{Label: rl},
				},
			})
		}
		return out
	}
}

// workloadKinds are the kinds whose Pods come from a template.
var workloadKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true}

// keepAddress gives a Service to be written the address the cluster gave
// o, which the API does not let change.
func keepAddress(to, o Object) {
	spec := sub(to, "spec")
	if Kind(o) != "Service" || spec == nil {
		return
	}
	for _, f := range []string{"clusterIP", "clusterIPs"} {
		if v := get(o, "spec", f); v != nil {
			spec[f] = copyValue(v)
		}
	}
}
