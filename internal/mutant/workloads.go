package mutant

import (
	"fmt"
	"strings"
)

// --- NetworkPolicy ---

var netpolMutations = []Mutation{
	{"podSelector to {}", func(o Object, _ Lab) []Mutant {
		if len(sub(o, "spec", "podSelector")) == 0 {
			return nil
		}
		return []Mutant{change(o, "spec.podSelector", "{}", func(c Object) { set(c, map[string]any{}, "spec", "podSelector") })}
	}},
	{"one label fewer", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for _, s := range selectors(o) {
			labels := sub(o, append(s, "matchLabels")...)
			if len(labels) < 2 {
				continue // one label fewer is the selector emptied
			}
			for _, k := range keys(labels) {
				out = append(out, change(o, where(s)+".matchLabels."+k, "(dropped)", func(c Object) {
					delete(sub(c, append(s, "matchLabels")...), k)
				}))
			}
		}
		return out
	}},
	{"peer to {} or dropped", eachPeer(func(o Object, dir string, i, j int, peer map[string]any) []Mutant {
		var out []Mutant
		w := fmt.Sprintf("spec.%s[%d].%s[%d]", dir, i, peerField(dir), j)
		for _, sel := range []string{"podSelector", "namespaceSelector"} {
			if m, ok := peer[sel].(map[string]any); ok && len(m) > 0 {
				out = append(out, change(o, w+"."+sel, "{}", func(c Object) {
					peerOf(c, dir, i, j)[sel] = map[string]any{}
				}))
			}
		}
		out = append(out, change(o, w, "(dropped)", func(c Object) {
			rule := at(c, "spec", dir)[i].(map[string]any)
			peers := without(rule[peerField(dir)].([]any), j)
			if len(peers) == 0 {
				delete(rule, peerField(dir)) // no peers: every peer
			} else {
				rule[peerField(dir)] = peers
			}
		}))
		return out
	})},
	{"ipBlock to 0.0.0.0/0", eachPeer(func(o Object, dir string, i, j int, peer map[string]any) []Mutant {
		b, ok := peer["ipBlock"].(map[string]any)
		if !ok || b["cidr"] == "0.0.0.0/0" {
			return nil
		}
		return []Mutant{change(o, fmt.Sprintf("spec.%s[%d].%s[%d].ipBlock", dir, i, peerField(dir), j), "0.0.0.0/0", func(c Object) {
			peerOf(c, dir, i, j)["ipBlock"] = map[string]any{"cidr": "0.0.0.0/0"}
		})}
	})},
	{"remove a rule", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for _, dir := range []string{"ingress", "egress"} {
			for i := range list(o, "spec", dir) {
				out = append(out, change(o, fmt.Sprintf("spec.%s[%d]", dir, i), "(removed)", func(c Object) {
					set(c, without(at(c, "spec", dir), i), "spec", dir)
				}))
			}
		}
		return out
	}},
	{"ports", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for _, dir := range []string{"ingress", "egress"} {
			for i, r := range list(o, "spec", dir) {
				rule, _ := r.(map[string]any)
				for k, p := range list(rule, "ports") {
					port, _ := p.(map[string]any)
					w := fmt.Sprintf("spec.%s[%d].ports[%d]", dir, i, k)
					portsOf := func(c Object) map[string]any { return at(c, "spec", dir)[i].(map[string]any) }
					out = append(out, change(o, w, "(removed)", func(c Object) {
						rule := portsOf(c)
						if ps := without(rule["ports"].([]any), k); len(ps) > 0 {
							rule["ports"] = ps
						} else {
							delete(rule, "ports") // no ports: every port
						}
					}))
					if n, ok := number(port["port"]); ok {
						out = append(out, change(o, w+".port", fmt.Sprint(n+1), func(c Object) {
							portsOf(c)["ports"].([]any)[k].(map[string]any)["port"] = n + 1
						}))
					}
					if port["protocol"] != "UDP" {
						out = append(out, change(o, w+".protocol", "UDP", func(c Object) {
							portsOf(c)["ports"].([]any)[k].(map[string]any)["protocol"] = "UDP"
						}))
					}
				}
			}
		}
		return out
	}},
	{"drop a policyType", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		types := list(o, "spec", "policyTypes")
		for i, t := range types {
			out = append(out, change(o, fmt.Sprintf("spec.policyTypes[%d]", i), fmt.Sprintf("(%v dropped)", t), func(c Object) {
				if rest := without(at(c, "spec", "policyTypes"), i); len(rest) > 0 {
					set(c, rest, "spec", "policyTypes")
				} else {
					delete(sub(c, "spec"), "policyTypes")
				}
			}))
		}
		return out
	}},
	{"delete the policy", func(o Object, _ Lab) []Mutant { return []Mutant{deleted(o)} }},
	{"labels on the running Pods instead", selectorOnPods("spec", "podSelector", "matchLabels")},
}

// selectors are the paths of a policy's label selectors: its podSelector
// and each peer's.
func selectors(o Object) [][]string {
	out := [][]string{{"spec", "podSelector"}}
	for _, dir := range []string{"ingress", "egress"} {
		for i, r := range list(o, "spec", dir) {
			rule, _ := r.(map[string]any)
			for j, p := range list(rule, peerField(dir)) {
				peer, _ := p.(map[string]any)
				for _, sel := range []string{"podSelector", "namespaceSelector"} {
					if _, ok := peer[sel].(map[string]any); ok {
						out = append(out, []string{"spec", dir, fmt.Sprint(i), peerField(dir), fmt.Sprint(j), sel})
					}
				}
			}
		}
	}
	return out
}

// where writes a selector's path as an id does: spec.ingress[0].from[1].podSelector.
func where(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if p != "" && p[0] >= '0' && p[0] <= '9' {
			fmt.Fprintf(&b, "[%s]", p)
			continue
		}
		if i > 0 {
			b.WriteString(".")
		}
		b.WriteString(p)
	}
	return b.String()
}

// eachPeer makes f's mutants of each peer of each rule of a policy.
func eachPeer(f func(o Object, dir string, i, j int, peer map[string]any) []Mutant) func(Object, Lab) []Mutant {
	return func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for _, dir := range []string{"ingress", "egress"} {
			for i, r := range list(o, "spec", dir) {
				rule, _ := r.(map[string]any)
				for j, p := range list(rule, peerField(dir)) {
					if peer, ok := p.(map[string]any); ok {
						out = append(out, f(o, dir, i, j, peer)...)
					}
				}
			}
		}
		return out
	}
}

func peerField(dir string) string {
	if dir == "egress" {
		return "to"
	}
	return "from"
}

func peerOf(c Object, dir string, i, j int) map[string]any {
	return at(c, "spec", dir)[i].(map[string]any)[peerField(dir)].([]any)[j].(map[string]any)
}

// number reads a JSON number (float64 from encoding/json, int64 from a
// Kubernetes client's unstructured objects).
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		return int64(n), n == float64(int64(n))
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

// --- Deployment, StatefulSet and DaemonSet ---

var probes = []string{"livenessProbe", "readinessProbe", "startupProbe"}

var workloadMutations = []Mutation{
	{"image tag to latest", eachContainer(func(o Object, w string, ci int, c map[string]any) []Mutant {
		image, _ := c["image"].(string)
		if image == "" || strings.Contains(image, "@") {
			return nil
		}
		repo := image
		if slash := strings.LastIndex(image, "/"); strings.LastIndex(image, ":") > slash {
			repo = image[:strings.LastIndex(image, ":")]
		}
		if repo+":latest" == image {
			return nil
		}
		return []Mutant{change(o, w+".image", repo+":latest", func(x Object) { container(x, ci)["image"] = repo + ":latest" })}
	})},
	{"replicas ±1", func(o Object, _ Lab) []Mutant {
		if Kind(o) == "DaemonSet" {
			return nil
		}
		n, ok := number(get(o, "spec", "replicas"))
		if !ok {
			n = 1
		}
		out := []Mutant{change(o, "spec.replicas", fmt.Sprint(n+1), func(c Object) { set(c, n+1, "spec", "replicas") })}
		if n > 0 {
			out = append(out, change(o, "spec.replicas", fmt.Sprint(n-1), func(c Object) { set(c, n-1, "spec", "replicas") }))
		}
		return out
	}},
	{"one template label fewer", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for _, k := range keys(sub(o, "spec", "template", "metadata", "labels")) {
			out = append(out, change(o, "spec.template.metadata.labels."+k, "(dropped)", func(c Object) {
				delete(sub(c, "spec", "template", "metadata", "labels"), k)
			}))
		}
		return out
	}},
	{"remove a port, env var, probe or resources", eachContainer(func(o Object, w string, ci int, c map[string]any) []Mutant {
		var out []Mutant
		for _, field := range []string{"ports", "env"} {
			for j, x := range list(c, field) {
				name, _ := x.(map[string]any)["name"].(string)
				what := fmt.Sprintf("%s[%d]", field, j)
				if name != "" {
					what = fmt.Sprintf("%s[%d] (%s)", field, j, name)
				}
				out = append(out, change(o, w+"."+what, "(removed)", func(x Object) {
					ct := container(x, ci)
					if rest := without(ct[field].([]any), j); len(rest) > 0 {
						ct[field] = rest
					} else {
						delete(ct, field)
					}
				}))
			}
		}
		for _, field := range append(probes, "resources") {
			// The API server stores resources: {} on every container that sets
			// none: removing it changes nothing, a mutant no check could fail.
			if v, ok := c[field]; ok && !(field == "resources" && isEmptyMap(v)) {
				out = append(out, change(o, w+"."+field, "(removed)", func(x Object) { delete(container(x, ci), field) }))
			}
		}
		return out
	})},
	{"labels on the running Pods instead", templateOnPods},
}

// isEmptyMap says whether v is an object without a key.
func isEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// eachContainer makes f's mutants of each container of a workload's Pod
// template.
func eachContainer(f func(o Object, where string, i int, c map[string]any) []Mutant) func(Object, Lab) []Mutant {
	return func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for i, c := range list(o, "spec", "template", "spec", "containers") {
			if cm, ok := c.(map[string]any); ok {
				out = append(out, f(o, fmt.Sprintf("spec.template.spec.containers[%d]", i), i, cm)...)
			}
		}
		return out
	}
}

func container(c Object, i int) map[string]any {
	return at(c, "spec", "template", "spec", "containers")[i].(map[string]any)
}

// --- Service ---

var serviceMutations = []Mutation{
	{"one selector label fewer", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for _, k := range keys(sub(o, "spec", "selector")) {
			out = append(out, change(o, "spec.selector."+k, "(dropped)", func(c Object) { delete(sub(c, "spec", "selector"), k) }))
		}
		return out
	}},
	{"port or targetPort shifted", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for i, p := range list(o, "spec", "ports") {
			port, _ := p.(map[string]any)
			for _, field := range []string{"port", "targetPort"} {
				if n, ok := number(port[field]); ok {
					out = append(out, change(o, fmt.Sprintf("spec.ports[%d].%s", i, field), fmt.Sprint(n+1), func(c Object) {
						at(c, "spec", "ports")[i].(map[string]any)[field] = n + 1
					}))
				}
			}
		}
		return out
	}},
	{"type changed", func(o Object, _ Lab) []Mutant {
		t := str(o, "spec", "type")
		if t == "ExternalName" {
			return nil
		}
		to := "NodePort"
		if t == "NodePort" || t == "LoadBalancer" {
			to = "ClusterIP"
		}
		return []Mutant{change(o, "spec.type", to, func(c Object) {
			set(c, to, "spec", "type")
			if to == "ClusterIP" {
				for _, p := range at(c, "spec", "ports") {
					delete(p.(map[string]any), "nodePort")
				}
				delete(sub(c, "spec"), "externalTrafficPolicy")
			}
		})}
	}},
	{"labels on the running Pods instead", selectorOnPods("spec", "selector")},
}

// --- ConfigMap ---

var configMapMutations = []Mutation{
	{"a key removed", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for _, k := range keys(sub(o, "data")) {
			out = append(out, change(o, "data."+k, "(removed)", func(c Object) { delete(sub(c, "data"), k) }))
		}
		return out
	}},
	{"a value changed", func(o Object, _ Lab) []Mutant {
		var out []Mutant
		for _, k := range keys(sub(o, "data")) {
			out = append(out, change(o, "data."+k, `"changed"`, func(c Object) { sub(c, "data")[k] = "changed" }))
		}
		return out
	}},
}

// --- any object ---

// misplace moves a namespaced object to each other namespace of the lab.
func misplace(o Object, l Lab) []Mutant {
	ns := Namespace(o)
	if ns == "" {
		return nil
	}
	var out []Mutant
	for _, other := range l.Namespaces {
		if other == ns {
			continue
		}
		to := Clean(o)
		set(to, other, "metadata", "namespace")
		if spec := sub(to, "spec"); Kind(o) == "Service" && spec != nil {
			// The cluster gives the moved Service an address of its own.
			delete(spec, "clusterIP")
			delete(spec, "clusterIPs")
		}
		out = append(out, Mutant{ID: fmt.Sprintf("%s: metadata.namespace → %s", Ref(o), other),
			Edits: []Edit{{From: Clean(o), To: to, Recreate: true}}})
	}
	return out
}

// revert puts a changed object back as it was at the step's start.
func revert(o Object, l Lab) []Mutant {
	if l.Start == nil {
		return nil
	}
	to := Clean(l.Start)
	keepAddress(to, o)
	return []Mutant{{ID: Ref(o) + ": reverted to the step's start", Edits: []Edit{{From: Clean(o), To: to}}}}
}

// deleteNew deletes an object the solve created.
func deleteNew(o Object, l Lab) []Mutant {
	if l.Start != nil {
		return nil
	}
	return []Mutant{deleted(o)}
}
