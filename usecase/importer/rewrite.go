package importer

import (
	"slices"
	"strings"
)

var (
	// sudoRE is sudo before a command (with its options that keep the
	// user: -E, -H, -S): the sandbox has no sudo, and its learner is root.
	sudoRE = lazyRegexp(`(^|[\s;&|(` + "`" + `!])sudo(?:\s+-[EHSn]+)*\s+`)
	// defaultNSRE is the default namespace named to kubectl or in a manifest.
	defaultNSRE = lazyRegexp(`(?m)(\s-n\s*|--namespace[= ]|\bnamespace:\s*["']?)default([\s"';|&)]|$)`)
	// defaultVarRE is a namespace variable set to default.
	defaultVarRE = lazyRegexp(`(?m)^(\s*(?:export\s+)?[A-Za-z_]*(?:NS|[Nn]amespace|NAMESPACE)[A-Za-z_0-9]*=["']?)default(["'\s;]|$)`)
	// createNSCmdRE is a kubectl create namespace command, up to the end
	// of its command.
	createNSCmdRE = lazyRegexp(`\b(?:kubectl|k)\s+create\s+(?:ns|namespace)\s+("[^"\n]*"|'[^'\n]*'|[^\s;&|)]+)[^;&|\n)]*`)
	// heredocRE opens a here-document: <<EOF, <<-'EOF', << "EOF".
	heredocRE = lazyRegexp(`<<-?\s*["']?([A-Za-z_][A-Za-z0-9_]*)["']?`)
)

// stripSudo removes sudo from a script; it reports whether there was any.
func stripSudo(s string) (string, bool) {
	out := sudoRE.ReplaceAllString(s, "$1")
	return out, out != s
}

// mapDefault names the lab's namespace where a script names default.
func mapDefault(s string) string {
	s = defaultNSRE.ReplaceAllString(s, "${1}"+labNamespace+"${2}")
	return defaultVarRE.ReplaceAllString(s, "${1}"+labNamespace+"${2}")
}

// dropCreateNamespace makes every kubectl create namespace of a namespace
// the lab declares a no-op: labctl creates them, and the learner may not.
func dropCreateNamespace(s string, declared []string, vars map[string][]string) string {
	return createNSCmdRE.ReplaceAllStringFunc(s, func(cmd string) string {
		m := createNSCmdRE.FindStringSubmatch(cmd)
		names := expand(m[1], vars)
		if len(names) == 0 {
			return cmd
		}
		for _, n := range names {
			if !slices.Contains(declared, n) && n != "default" {
				return cmd
			}
		}
		return ": labctl creates the namespace: " + strings.ReplaceAll(strings.ReplaceAll(cmd, "`", ""), "$", "")
	})
}

// mapHeredocs applies fn to the body of every here-document of a script.
func mapHeredocs(s string, fn func(string) string) string {
	var b strings.Builder
	for {
		loc := heredocRE.FindStringSubmatchIndex(s)
		if loc == nil {
			b.WriteString(s)
			return b.String()
		}
		delim := s[loc[2]:loc[3]]
		nl := strings.IndexByte(s[loc[1]:], '\n')
		if nl < 0 {
			b.WriteString(s)
			return b.String()
		}
		start := loc[1] + nl + 1
		b.WriteString(s[:start])
		rest := s[start:]
		end := -1
		for off := 0; off < len(rest); {
			line := rest[off:]
			if i := strings.IndexByte(line, '\n'); i >= 0 {
				line = line[:i]
			}
			if strings.TrimSpace(line) == delim {
				end = off
				break
			}
			off += len(line) + 1
		}
		if end < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(fn(rest[:end]))
		s = rest[end:]
	}
}
