package importer

import (
	"slices"
	"strings"
)

// nsUse is what the source's scripts say of namespaces: those its kubectl
// and helm commands name (-n, --namespace), those it creates, and those
// its manifests name.
type nsUse struct {
	named, created, manifests []string
	// viaDefault says a script names the default namespace.
	viaDefault bool
}

var (
	// assignRE is a shell variable set to a plain word: NS=shop,
	// export NAMESPACE="shop".
	assignRE = lazyRegexp(`(?m)^\s*(?:export\s+|local\s+|readonly\s+|declare\s+)?([A-Za-z_][A-Za-z0-9_]*)=(["']?)([a-z0-9][a-z0-9-]*)(["']?)\s*(?:;.*|#.*)?$`)
	// segmentSepRE splits a line into the commands of a list or pipeline.
	segmentSepRE = lazyRegexp(`\|\||&&|[|;&]|\$\(|` + "`" + `|\(|\)|\bthen\b|\bdo\b|\belse\b`)
	// manifestNSRE is a manifest's namespace field.
	manifestNSRE = lazyRegexp(`(?m)^\s*namespace:\s*["']?([a-z0-9][a-z0-9-]*)["']?\s*(?:#.*)?$`)
	// varRE is a reference to a shell variable: $NS or ${NS}.
	varRE = lazyRegexp(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$`)
)

// shellVars reads the plain assignments of the scripts, each variable's
// values in order.
func shellVars(scripts string) map[string][]string {
	vars := map[string][]string{}
	for _, m := range assignRE.FindAllStringSubmatch(scripts, -1) {
		if m[2] != m[4] {
			continue
		}
		if !slices.Contains(vars[m[1]], m[3]) {
			vars[m[1]] = append(vars[m[1]], m[3])
		}
	}
	return vars
}

// expand reads one word of a command as the namespaces it can name: a
// plain name, or a variable the scripts set to plain names.
func expand(w string, vars map[string][]string) []string {
	w = strings.Trim(w, `"'`)
	if m := varRE.FindStringSubmatch(w); m != nil {
		return vars[m[1]]
	}
	if dnsLabelRE.MatchString(w) && len(w) <= 63 {
		return []string{w}
	}
	return nil
}

// commandWords returns the words of a command segment from its program
// on, past sudo, environment assignments and wrappers; nil unless the
// program is kubectl (or the k alias) or helm.
func commandWords(seg string) []string {
	words := strings.Fields(seg)
	for len(words) > 0 {
		w := words[0]
		switch {
		case w == "sudo" || w == "command" || w == "exec" || w == "!" || w == "if" || w == "until" || w == "while" || w == "watch":
			words = words[1:]
		case w == "timeout" && len(words) > 1:
			words = words[2:]
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "-"):
			words = words[1:]
		default:
			switch strings.TrimPrefix(w, "/usr/local/bin/") {
			case "kubectl", "k", "helm", "/usr/bin/kubectl":
				return words
			}
			return nil
		}
	}
	return nil
}

// scanNamespaces reads every kubectl and helm command of the scripts for
// the namespaces it names or creates, and the manifests in them for their
// namespace fields and Namespace objects.
func scanNamespaces(scripts string, manifests []string) nsUse {
	var u nsUse
	vars := shellVars(scripts)
	add := func(list *[]string, names []string) {
		for _, n := range names {
			if n == "default" {
				u.viaDefault = true
				continue
			}
			if !slices.Contains(*list, n) {
				*list = append(*list, n)
			}
		}
	}
	for line := range strings.SplitSeq(scripts, "\n") {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, seg := range segmentSepRE.Split(line, -1) {
			words := commandWords(seg)
			if words == nil {
				continue
			}
			var args []string
			for i := 1; i < len(words); i++ {
				w := words[i]
				switch {
				case (w == "-n" || w == "--namespace") && i+1 < len(words):
					i++
					add(&u.named, expand(words[i], vars))
				case strings.HasPrefix(w, "--namespace="):
					add(&u.named, expand(strings.TrimPrefix(w, "--namespace="), vars))
				case strings.HasPrefix(w, "-n") && len(w) > 2 && !strings.HasPrefix(w, "--"):
					add(&u.named, expand(strings.TrimPrefix(w[2:], "="), vars))
				case strings.HasPrefix(w, "-"):
				default:
					args = append(args, w)
				}
			}
			if words[0] != "helm" && len(args) >= 3 && args[0] == "create" && (args[1] == "ns" || args[1] == "namespace") {
				add(&u.created, expand(args[2], vars))
			}
		}
	}
	for _, m := range append([]string{scripts}, manifests...) {
		for _, mm := range manifestNSRE.FindAllStringSubmatch(m, -1) {
			add(&u.manifests, []string{mm[1]})
		}
		for _, doc := range yamlDocs(m) {
			if name, ok := namespaceObject(doc); ok {
				add(&u.created, []string{name})
			}
		}
	}
	return u
}

var (
	docSepRE       = lazyRegexp(`(?m)^---[ \t]*$`)
	kindNSRE       = lazyRegexp(`(?m)^kind:\s*["']?Namespace["']?\s*$`)
	metadataNameRE = lazyRegexp(`(?m)^metadata:\s*\n(?:[ \t]+.*\n)*?[ \t]+name:\s*["']?([a-z0-9][a-z0-9-]*)["']?\s*$`)
)

// yamlDocs splits a YAML stream at its document separators.
func yamlDocs(s string) []string { return docSepRE.Split(s, -1) }

// namespaceObject reads a YAML document that is a Namespace object: its name.
func namespaceObject(doc string) (string, bool) {
	if !kindNSRE.MatchString(doc) {
		return "", false
	}
	m := metadataNameRE.FindStringSubmatch(doc + "\n")
	if m == nil {
		return "", false
	}
	return m[1], true
}

// withoutNamespaces drops from a YAML stream the Namespace objects among
// declared; it returns the stream and the names it dropped.
func withoutNamespaces(s string, declared []string) (string, []string) {
	docs := yamlDocs(s)
	var kept, dropped []string
	for _, d := range docs {
		if name, ok := namespaceObject(d); ok && slices.Contains(declared, name) {
			dropped = append(dropped, name)
			continue
		}
		kept = append(kept, d)
	}
	if len(dropped) == 0 {
		return s, nil
	}
	out := strings.Join(kept, "---")
	if strings.TrimSpace(out) == "" {
		out = "# labctl creates the lab's namespaces (" + strings.Join(dropped, ", ") + ")\n"
	}
	return out, dropped
}
