package importer

import (
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labctl/labctl/lab"
)

// check is one check of the imported lab, as lab.yaml writes it.
type check struct {
	Name        string        `yaml:"name"`
	Description string        `yaml:"description,omitempty"`
	Timeout     string        `yaml:"timeout,omitempty"`
	File        *fileCheck    `yaml:"file,omitempty"`
	Kube        *kubeCheck    `yaml:"kube,omitempty"`
	Command     *commandCheck `yaml:"command,omitempty"`
}

type fileCheck struct {
	Path    string   `yaml:"path"`
	Exists  *bool    `yaml:"exists,omitempty"`
	Type    string   `yaml:"type,omitempty"`
	Matches []string `yaml:"matches,omitempty"`
}

type kubeCheck struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	Namespace  string      `yaml:"namespace,omitempty"`
	Name       string      `yaml:"name"`
	Exists     *bool       `yaml:"exists,omitempty"`
	Field      *fieldCheck `yaml:"field,omitempty"`
}

type fieldCheck struct {
	Path    string `yaml:"path"`
	Equals  any    `yaml:"equals,omitempty"`
	Matches string `yaml:"matches,omitempty"`
}

type commandCheck struct {
	Run []string `yaml:"run"`
	Dir string   `yaml:"dir,omitempty"`
}

// resource is what a kubectl resource name reads.
type resource struct {
	apiVersion, kind string
	namespaced       bool
}

// resources are the kinds a verify script's `kubectl get` is mapped for,
// by every name kubectl knows them by.
var resources = map[string]resource{}

func init() {
	for _, r := range []struct {
		names      string
		apiVersion string
		kind       string
		namespaced bool
	}{
		{"pod pods po", "v1", "Pod", true},
		{"service services svc", "v1", "Service", true},
		{"configmap configmaps cm", "v1", "ConfigMap", true},
		{"secret secrets", "v1", "Secret", true},
		{"serviceaccount serviceaccounts sa", "v1", "ServiceAccount", true},
		{"persistentvolumeclaim persistentvolumeclaims pvc", "v1", "PersistentVolumeClaim", true},
		{"persistentvolume persistentvolumes pv", "v1", "PersistentVolume", false},
		{"namespace namespaces ns", "v1", "Namespace", false},
		{"node nodes no", "v1", "Node", false},
		{"deployment deployments deploy", "apps/v1", "Deployment", true},
		{"statefulset statefulsets sts", "apps/v1", "StatefulSet", true},
		{"daemonset daemonsets ds", "apps/v1", "DaemonSet", true},
		{"replicaset replicasets rs", "apps/v1", "ReplicaSet", true},
		{"job jobs", "batch/v1", "Job", true},
		{"cronjob cronjobs cj", "batch/v1", "CronJob", true},
		{"ingress ingresses ing", "networking.k8s.io/v1", "Ingress", true},
		{"networkpolicy networkpolicies netpol", "networking.k8s.io/v1", "NetworkPolicy", true},
		{"role roles", "rbac.authorization.k8s.io/v1", "Role", true},
		{"rolebinding rolebindings", "rbac.authorization.k8s.io/v1", "RoleBinding", true},
		{"clusterrole clusterroles", "rbac.authorization.k8s.io/v1", "ClusterRole", false},
		{"clusterrolebinding clusterrolebindings", "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", false},
		{"horizontalpodautoscaler horizontalpodautoscalers hpa", "autoscaling/v2", "HorizontalPodAutoscaler", true},
		{"poddisruptionbudget poddisruptionbudgets pdb", "policy/v1", "PodDisruptionBudget", true},
		{"storageclass storageclasses sc", "storage.k8s.io/v1", "StorageClass", false},
	} {
		for _, n := range strings.Fields(r.names) {
			resources[n] = resource{r.apiVersion, r.kind, r.namespaced}
		}
	}
}

// verifyMapping is what one verify script became.
type verifyMapping struct {
	checks []check
	// typed is true when every line became a typed check; false means the
	// whole script is one command check the author must rewrite.
	typed bool
	// namespaces are the namespaces the typed checks read.
	namespaces []string
}

var (
	// Lines of a verify script that do not assert anything.
	noiseRE = regexp.MustCompile(`^(#.*|set( [-+][a-zA-Z]+| -o [a-z]+| pipefail)+|exit 0)$`)
	// if LINE; then exit 1; fi (or Instruqt's fail-message), and if ! LINE; …
	absentRE  = regexp.MustCompile(`^if ([^!;|&$` + "`" + `][^;|&$` + "`" + `]*); then (exit 1|fail-message "[^"$` + "`" + `]*"(; exit 1)?); fi$`)
	presentRE = regexp.MustCompile(`^if ! ([^;|&$` + "`" + `]+); then (exit 1|fail-message "[^"$` + "`" + `]*"(; exit 1)?); fi$`)
	// grep [-q] [-i] P FILE, or cat FILE | grep [-q] [-i] P
	grepFileRE = regexp.MustCompile(`^(?:grep (-[qi]+ )?(` + plainRE + `) (/[^\s;|&$` + "`" + `'"]+)|cat (/[^\s;|&$` + "`" + `'"]+) \| grep (-[qi]+ )?(` + plainRE + `))$`)
	// [ "$(kubectl get K N -o jsonpath='{...}')" = "V" ]
	compareRE = regexp.MustCompile(`^\[\[? "\$\(((?:kubectl|k) (?:(?:-n|--namespace)[= ][a-z0-9-]+ )?get [^)|;&$` + "`" + `]+)\)" ==? ("[^"$` + "`" + `]*"|'[^']*'|[A-Za-z0-9._:/-]+) \]\]?$`)
	// kubectl get K N -o jsonpath='{...}' | grep -q V
	grepRE = regexp.MustCompile(`^((?:kubectl|k) (?:(?:-n|--namespace)[= ][a-z0-9-]+ )?get [^|;&$` + "`" + `]+) \| grep -(q|qw|wq|Fq|qF) ("[^"$` + "`" + `]*"|'[^']*'|[A-Za-z0-9._:/-]+)$`)
	// stat P, ls P, test -f P, [ -d P ]
	fileRE = regexp.MustCompile(`^(stat|ls|cat|test -[efd]|\[\[? -[efd]) ("[^"$` + "`" + `]+"|'[^']+'|/[^\s;|&$` + "`" + `]+)( \]\]?)?( >\s*/dev/null( 2>&1)?| &>\s*/dev/null)?$`)
	// a grep pattern that means the same as an RE2 expression, quoted or not
	plainRE = `"[A-Za-z0-9 ._:/=-]+"|'[A-Za-z0-9 ._:/=-]+'|[A-Za-z0-9._:/=-]+`
	// a jsonpath of one field: {.spec.replicas} or {.metadata.labels.app}
	jsonpathRE = regexp.MustCompile(`^\{((\.[A-Za-z0-9_-]+)+)\}$`)
)

// mapVerify turns a verify script into checks: each line that asserts what
// a typed check can read (an object that exists or not, one field of it,
// a file) becomes that check; a script with any other line becomes one
// command check, which the grader runs with the learner's files and
// kubeconfig, both the learner's to change.
func mapVerify(script, labNS string) verifyMapping {
	var lines []string
	for l := range strings.SplitSeq(script, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || noiseRE.MatchString(l) {
			continue
		}
		lines = append(lines, l)
	}
	var vm verifyMapping
	names := map[string]int{}
	for _, l := range lines {
		c, ns, ok := mapLine(l, labNS)
		if !ok {
			return verifyMapping{checks: []check{commandVerify(script)}}
		}
		names[c.Name]++
		if n := names[c.Name]; n > 1 {
			c.Name = fmt.Sprintf("%s-%d", c.Name, n)
		}
		vm.checks = append(vm.checks, c)
		if ns != "" {
			vm.namespaces = append(vm.namespaces, ns)
		}
	}
	if len(vm.checks) == 0 {
		return verifyMapping{}
	}
	vm.typed = true
	return vm
}

// commandVerify is the check that runs a whole verify script: with the
// interpreter its first line names, in the learner's home as the
// platform ran it, for as long as the script's own waits take.
func commandVerify(script string) check {
	script = strings.TrimSpace(script)
	run := []string{"bash", "-c", failMessage(script)}
	switch interpreter(script) {
	case "sh", "dash":
		if !strings.Contains(script, "fail-message") { // sh names no function with a '-'
			run = []string{"sh", "-c", script}
		}
	case "python", "python3":
		run = []string{"python3", "-c", script}
	}
	c := check{
		Name:        "verify-script",
		Description: "the scenario's verify script passes (it runs in the sandbox with the learner's kubectl: rewrite it as typed checks)",
		Command:     &commandCheck{Run: run, Dir: lab.HomeDir},
	}
	if d := waits(script); d > 0 {
		c.Timeout = (d + lab.DefaultCheckTimeout).String()
	}
	return c
}

var (
	shebangRE = regexp.MustCompile(`^#!\s*(\S+)(?:\s+(\S+))?`)
	// waitRE is what bounds a wait of a script: --timeout=120s, timeout 60,
	// sleep 5.
	waitRE = regexp.MustCompile(`(?:--timeout[= ]|\btimeout\s+|\bsleep\s+)([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)?\b`)
)

// interpreter is the program a script's first line (#!) names: bash, sh,
// python3 ...; "" without one.
func interpreter(script string) string {
	m := shebangRE.FindStringSubmatch(script)
	if m == nil {
		return ""
	}
	prog := path.Base(m[1])
	if prog == "env" && m[2] != "" {
		prog = path.Base(m[2])
	}
	return prog
}

// maxCheckWait bounds the timeout an imported check takes from its script.
const maxCheckWait = 10 * time.Minute

// waits is how long the script's own waits (kubectl wait --timeout,
// timeout N, sleep N) may take in all.
func waits(script string) time.Duration {
	var total time.Duration
	for _, m := range waitRE.FindAllStringSubmatch(script, -1) {
		unit := m[2]
		if unit == "" {
			unit = "s"
		}
		d, err := time.ParseDuration(m[1] + unit)
		if err == nil {
			total += d
		}
	}
	return min(total, maxCheckWait)
}

// mapLine maps one line of a verify script, returning the namespace its
// check reads ("" for none or a cluster-scoped object).
func mapLine(l, labNS string) (check, string, bool) {
	if strings.HasPrefix(l, "k ") {
		l = "kubectl " + l[2:] // the alias every Kubernetes scenario sets
	}
	if m := presentRE.FindStringSubmatch(l); m != nil {
		return mapLine(m[1], labNS)
	}
	if m := absentRE.FindStringSubmatch(l); m != nil {
		c, ns, ok := mapLine(m[1], labNS)
		no := false
		switch {
		case !ok:
			return check{}, "", false
		case c.Kube != nil && c.Kube.Field == nil && c.Kube.Exists == nil:
			c.Kube.Exists = &no
			return check{Name: c.Name + "-gone", Description: fmt.Sprintf("%s %s does not exist", c.Kube.Kind, c.Kube.Name), Kube: c.Kube}, ns, true
		case c.File != nil && c.File.Type == "" && c.File.Exists == nil && len(c.File.Matches) == 0:
			c.File.Exists = &no
			return check{Name: c.Name + "-gone", Description: c.File.Path + " does not exist", File: c.File}, "", true
		}
		return check{}, "", false
	}
	if m := grepFileRE.FindStringSubmatch(l); m != nil {
		flags, pattern, file := m[1], m[2], m[3]
		if file == "" {
			file, flags, pattern = m[4], m[5], m[6]
		}
		if !graderSees(file) {
			return check{}, "", false
		}
		re := unquote(pattern)
		if strings.Contains(flags, "i") {
			re = "(?i)" + re
		}
		return check{Name: slug("file-"+file, 50), Description: fmt.Sprintf("%s holds %s", file, unquote(pattern)), File: &fileCheck{Path: file, Matches: []string{re}}}, "", true
	}
	if m := compareRE.FindStringSubmatch(l); m != nil {
		k, ok := kubectlGet(m[1], labNS)
		if !ok || k.Field == nil {
			return check{}, "", false
		}
		v, ok := printedEquals(k, unquote(m[2]))
		if !ok {
			return check{}, "", false
		}
		k.Field.Equals = v
		return fieldNamed(k), k.Namespace, true
	}
	if m := grepRE.FindStringSubmatch(l); m != nil {
		k, ok := kubectlGet(m[1], labNS)
		if !ok || k.Field == nil || fieldType(k) != "string" {
			return check{}, "", false
		}
		re, ok := grepRegexp(m[2], unquote(m[3]))
		if !ok {
			return check{}, "", false
		}
		k.Field.Matches = re
		return fieldNamed(k), k.Namespace, true
	}
	if strings.HasPrefix(l, "kubectl ") {
		k, ok := kubectlGet(strings.TrimSuffix(strings.TrimSuffix(l, " >/dev/null 2>&1"), " &>/dev/null"), labNS)
		if !ok || k.Field != nil {
			return check{}, "", false
		}
		return check{Name: slug(strings.ToLower(k.Kind)+"-"+k.Name, 50), Description: fmt.Sprintf("%s %s exists", k.Kind, k.Name), Kube: k}, k.Namespace, true
	}
	if m := fileRE.FindStringSubmatch(l); m != nil {
		p := unquote(m[2])
		if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "*?[~") || !graderSees(p) {
			return check{}, "", false
		}
		fc := &fileCheck{Path: p}
		switch {
		case strings.HasSuffix(m[1], "-f"):
			fc.Type = "file"
		case strings.HasSuffix(m[1], "-d"):
			fc.Type = "dir"
		}
		return check{Name: slug("file-"+p, 50), Description: p + " exists", File: fc}, "", true
	}
	return check{}, "", false
}

// inPodRE is a command run inside a Pod, to the end of its line.
var inPodRE = regexp.MustCompile(`\b(?:kubectl|k)\s+(?:exec|run|debug|cp)\b[^\n]*`)

// absPathRE finds absolute paths in a script.
var absPathRE = regexp.MustCompile(`(?:^|[\s'"=<>])(/[A-Za-z0-9._/-]+)`)

// pathsOutsideHome lists the absolute paths a script names that the
// grader cannot see (not the system's own directories of programs and
// devices, which the grader's image has as well).
func pathsOutsideHome(script string) []string {
	var out []string
	seen := map[string]bool{}
	// A path after kubectl exec, run or debug is inside a Pod.
	script = inPodRE.ReplaceAllString(script, "")
	for _, m := range absPathRE.FindAllStringSubmatch(script, -1) {
		p := m[1]
		if strings.HasPrefix(p, "//") {
			continue // jq's alternative operator, not a path
		}
		if graderSees(p) || seen[p] || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/bin/") || strings.HasPrefix(p, "/usr/") || strings.HasPrefix(p, "/proc/") {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// graderSees reports whether a typed file check can read p: the grader
// sees the learner's home, not the rest of the sandbox (a file the scenario
// checks in /etc stays in a command check, and TODO.md says no check can
// read it).
func graderSees(p string) bool {
	p = path.Clean(p)
	return p == lab.HomeDir || strings.HasPrefix(p, lab.HomeDir+"/")
}

func fieldNamed(k *kubeCheck) check {
	return check{
		Name:        slug(strings.ToLower(k.Kind)+"-"+k.Name+"-"+k.Field.Path, 50),
		Description: fmt.Sprintf("%s %s: %s", k.Kind, k.Name, k.Field.Path),
		Kube:        k,
	}
}

// kubectlGet reads `kubectl get KIND NAME [-n NS] [-o jsonpath=...]` (or
// KIND/NAME) as the kube check reading the same object; anything else
// (another output, a selector, all namespaces) is not mapped.
func kubectlGet(cmd, labNS string) (*kubeCheck, bool) {
	words, ok := shellWords(cmd)
	if !ok || len(words) < 3 || (words[0] != "kubectl" && words[0] != "k") {
		return nil, false
	}
	var kind, name, ns, jsonpath string
	var args []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-n" || w == "--namespace":
			if i+1 == len(words) {
				return nil, false
			}
			i++
			ns = words[i]
		case strings.HasPrefix(w, "--namespace="):
			ns = strings.TrimPrefix(w, "--namespace=")
		case strings.HasPrefix(w, "-n") && len(w) > 2:
			ns = w[2:]
		case w == "-o" || w == "--output":
			if i+1 == len(words) {
				return nil, false
			}
			i++
			if jsonpath, ok = outputJSONPath(words[i]); !ok {
				return nil, false
			}
		case strings.HasPrefix(w, "-o") || strings.HasPrefix(w, "--output="):
			if jsonpath, ok = outputJSONPath(strings.TrimPrefix(strings.TrimPrefix(w, "--output="), "-o")); !ok {
				return nil, false
			}
		case strings.HasPrefix(w, "-"):
			return nil, false
		default:
			args = append(args, w)
		}
	}
	if len(args) == 0 || args[0] != "get" {
		return nil, false
	}
	args = args[1:]
	switch len(args) {
	case 1:
		var found bool
		if kind, name, found = strings.Cut(args[0], "/"); !found {
			return nil, false
		}
	case 2:
		kind, name = args[0], args[1]
	default:
		return nil, false
	}
	r, ok := resources[strings.ToLower(kind)]
	if !ok || name == "" || strings.ContainsAny(name, "*/,") {
		return nil, false
	}
	k := &kubeCheck{APIVersion: r.apiVersion, Kind: r.kind, Name: name}
	if r.namespaced {
		if ns == "" || ns == "default" {
			ns = labNS
		}
		k.Namespace = ns
	}
	if jsonpath != "" {
		m := jsonpathRE.FindStringSubmatch(jsonpath)
		if m == nil {
			return nil, false
		}
		k.Field = &fieldCheck{Path: strings.TrimPrefix(m[1], ".")}
	}
	return k, true
}

// outputJSONPath returns the template of -o jsonpath=T, "" for -o name,
// and false for other outputs.
func outputJSONPath(o string) (string, bool) {
	switch {
	case o == "name":
		return "", true
	case strings.HasPrefix(o, "jsonpath="):
		return strings.TrimPrefix(o, "jsonpath="), true
	}
	return "", false
}

// shellWords splits a command line with single and double quotes and no
// expansions; false when it has any ($, `, \, a pipe or a list).
func shellWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				return nil, false
			}
			q := s[i+1 : i+1+end]
			if c == '"' && strings.ContainsAny(q, "$`\\") {
				return nil, false
			}
			cur.WriteString(q)
			inWord = true
			i += end + 1
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.IndexByte("$`\\|;&<>()", c) >= 0:
			return nil, false
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// Fields whose JSON type is known, by kind ("" for every kind) and path;
// a path ending in "." stands for every field under it.
var (
	stringFields = map[string][]string{
		"":                      {"metadata.name", "metadata.namespace", "metadata.labels.", "metadata.annotations.", "status.phase"},
		"ConfigMap":             {"data."},
		"Secret":                {"data.", "stringData.", "type"},
		"Service":               {"spec.type", "spec.clusterIP"},
		"Pod":                   {"spec.nodeName", "spec.serviceAccountName", "spec.restartPolicy", "spec.priorityClassName"},
		"CronJob":               {"spec.schedule", "spec.concurrencyPolicy"},
		"PersistentVolumeClaim": {"spec.storageClassName", "spec.volumeName"},
	}
	integerFields = map[string][]string{
		"": {"spec.replicas", "status.replicas", "status.readyReplicas", "status.availableReplicas", "status.updatedReplicas",
			"metadata.generation", "status.observedGeneration", "spec.revisionHistoryLimit"},
		"Job":                     {"spec.parallelism", "spec.completions", "spec.backoffLimit", "status.succeeded", "status.failed", "status.active"},
		"CronJob":                 {"spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit"},
		"HorizontalPodAutoscaler": {"spec.minReplicas", "spec.maxReplicas"},
	}
	booleanFields = map[string][]string{
		"ConfigMap":  {"immutable"},
		"Secret":     {"immutable"},
		"Deployment": {"spec.paused"},
		"CronJob":    {"spec.suspend"},
		"Job":        {"spec.suspend"},
	}
)

// fieldType is the JSON type of the field a kube check reads, when it is
// known: "string", "integer", "boolean", or "".
func fieldType(k *kubeCheck) string {
	in := func(fields map[string][]string) bool {
		for _, kind := range []string{"", k.Kind} {
			for _, f := range fields[kind] {
				if k.Field.Path == f || (strings.HasSuffix(f, ".") && strings.HasPrefix(k.Field.Path, f) && len(k.Field.Path) > len(f)) {
					return true
				}
			}
		}
		return false
	}
	switch {
	case in(stringFields):
		return "string"
	case in(integerFields):
		return "integer"
	case in(booleanFields):
		return "boolean"
	}
	return ""
}

// wordRE is a value that jsonpath prints only for a string field: not a
// number, a boolean, null, a list or an object.
var wordRE = regexp.MustCompile(`^[A-Za-z0-9._:/@+=-]+$`)

// printedEquals is the value a field must equal for jsonpath to print
// exactly v, and false when that depends on a type that is not known (a
// ConfigMap's "8080" is a string, a Deployment's 3 an integer).
func printedEquals(k *kubeCheck, v string) (any, bool) {
	switch fieldType(k) {
	case "string":
		return v, v != ""
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil && strconv.FormatInt(n, 10) == v
	case "boolean":
		return v == "true", v == "true" || v == "false"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil || v == "true" || v == "false" || v == "null" || !wordRE.MatchString(v) {
		return nil, false
	}
	return v, true
}

// grepPatternRE is a grep pattern that reads the same as an RE2
// expression: letters, digits and . _ : / = - and space, anchored or not.
var grepPatternRE = regexp.MustCompile(`^\^?[A-Za-z0-9 ._:/=-]+\$?$`)

// grepRegexp is the expression a string field must match for grep with
// flags (q, w, F) to find pattern in what jsonpath printed, line by line;
// false when there is none as exact.
func grepRegexp(flags, pattern string) (string, bool) {
	var re string
	switch {
	case strings.Contains(flags, "F"):
		if pattern == "" || strings.Contains(pattern, "\n") {
			return "", false
		}
		re = regexp.QuoteMeta(pattern)
	case grepPatternRE.MatchString(pattern) && strings.Trim(pattern, "^$") != "":
		re = pattern
	default:
		return "", false
	}
	if strings.Contains(flags, "w") {
		// grep -w: the match is neither preceded nor followed by a
		// letter, a digit or an underscore.
		re = `(?:^|[^A-Za-z0-9_])(?:` + re + `)(?:[^A-Za-z0-9_]|$)`
	}
	if strings.ContainsAny(re, "^$") {
		// grep reads lines: its anchors are a line's.
		re = "(?m)" + re
	}
	return re, true
}

// failMessage gives a script that calls Instruqt's fail-message the
// function it expects: the message on stderr, and the check fails.
func failMessage(script string) string {
	if !strings.Contains(script, "fail-message") {
		return script
	}
	return "fail-message() { echo \"$*\" >&2; exit 1; }\n" + script
}
