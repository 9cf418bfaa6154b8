package importer

import (
	"fmt"
	"path"
	"regexp"
	"slices"
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
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Namespace  string            `yaml:"namespace,omitempty"`
	Name       string            `yaml:"name,omitempty"`
	Selector   *string           `yaml:"selector,omitempty"`
	Count      *countRange       `yaml:"count,omitempty"`
	Exists     *bool             `yaml:"exists,omitempty"`
	Labels     map[string]string `yaml:"labels,omitempty"`
	Field      *fieldCheck       `yaml:"field,omitempty"`
	Wait       bool              `yaml:"wait,omitempty"`
}

type countRange struct {
	Min *int `yaml:"min,omitempty"`
	Max *int `yaml:"max,omitempty"`
}

type fieldCheck struct {
	Path    string `yaml:"path"`
	Equals  any    `yaml:"equals,omitempty"`
	Matches string `yaml:"matches,omitempty"`
	Type    string `yaml:"type,omitempty"`
	GTE     *int64 `yaml:"gte,omitempty"`
	LTE     *int64 `yaml:"lte,omitempty"`
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
	// typed is true when every check is typed: no line of the script is
	// left to a command check.
	typed bool
	// namespaces are the namespaces the typed checks read.
	namespaces []string
	// notes say which lines became which check, which assert nothing, and
	// which are left to the command check, for TODO.md.
	notes []string
}

var (
	// grep [-q] [-i] P FILE, or cat FILE | grep [-q] [-i] P
	grepFileRE = regexp.MustCompile(`^(?:grep (-[qi]+ )?(` + plainRE + `) (` + filePathRE + `)|cat (` + filePathRE + `) \| grep (-[qi]+ )?(` + plainRE + `))( >\s*/dev/null( 2>&1)?| &>\s*/dev/null)?$`)
	// [ "$(kubectl get K N -o jsonpath='{...}')" = "V" ]
	compareRE = regexp.MustCompile(`^\[\[? "\$\(((?:kubectl|k) (?:(?:-n|--namespace)[= ][a-z0-9-]+ )?get [^)|;&$` + "`" + `]+)\)" ==? ("[^"$` + "`" + `]*"|'[^']*'|[A-Za-z0-9._:/-]+) \]\]?$`)
	// kubectl get K N -o jsonpath='{...}' | grep -q V
	grepRE = regexp.MustCompile(`^((?:kubectl|k) (?:(?:-n|--namespace)[= ][a-z0-9-]+ )?get [^|;&$` + "`" + `]+) \| grep -(q|qw|wq|Fq|qF) ("[^"$` + "`" + `]*"|'[^']*'|[A-Za-z0-9._:/-]+)$`)
	// stat P, ls P, test -f P, [ -d P ]
	fileRE = regexp.MustCompile(`^(stat|ls|cat|test -[efd]|\[\[? -[efd]) ("[^"$` + "`" + `]+"|'[^']+'|` + filePathRE + `)( \]\]?)?( >\s*/dev/null( 2>&1)?| &>\s*/dev/null)?$`)
	// a path written bare: absolute, or relative to the script's directory
	filePathRE = `[/A-Za-z0-9._][^\s;|&$` + "`" + `'"]*`
	// a grep pattern that means the same as an RE2 expression, quoted or not
	plainRE = `"[A-Za-z0-9 ._:/=-]+"|'[A-Za-z0-9 ._:/=-]+'|[A-Za-z0-9._:/=-]+`
	// a jsonpath of one field: {.spec.replicas}, {.spec.containers[0].image}
	jsonpathRE = regexp.MustCompile(`^\{((?:\.[A-Za-z0-9_-]+(?:\[[0-9]+\])*)+)\}$`)

	// if C; then FAIL; fi — and its else branch
	ifRE     = regexp.MustCompile(`^if (.+?); then (.+?); fi$`)
	ifElseRE = regexp.MustCompile(`^if (.+?); then (.+?); else (.+?); fi$`)
	// C || FAIL, C && FAIL
	orFailRE  = regexp.MustCompile(`^(.+?) \|\| (exit [1-9][0-9]*|[A-Za-z_][A-Za-z0-9_-]*(?: (?:` + argRE + `))*|\{ .+ \})$`)
	andFailRE = regexp.MustCompile(`^(.+?) && (exit [1-9][0-9]*|[A-Za-z_][A-Za-z0-9_-]*(?: (?:` + argRE + `))*|\{ .+ \})$`)
	// exitZeroRE is what may end a script with success before its end.
	exitZeroRE = regexp.MustCompile(`(?:^|[;&|{(]\s*|\bthen\s+|\belse\s+|\bdo\s+)(?:exit(?:\s+0)?|return(?:\s+0)?)\s*(?:;|$|\})`)
	// mayFailRE is what makes a statement fail a script without set -e.
	mayFailRE = regexp.MustCompile(`\bexit\s+[1-9]|\bfail-message\b|\breturn\s+[1-9]|\bfalse\b|\bset\s+(-[a-z]*e|-o\s+errexit)`)
	// kUseRE is the k alias run: k get …, $(k -n web get …).
	kUseRE = regexp.MustCompile(`(?m)(?:^|[\s;&|(` + "`" + `])k\s+-?[a-z]`)
	// cdRE changes the script's directory.
	cdRE = regexp.MustCompile(`(?:^|[\s;&|(])(?:cd|pushd|popd)\b`)
	// redefinedRE changes what kubectl (or k, grep, test …) does or reads.
	redefinedRE = regexp.MustCompile(`(?m)(?:^|[\s;&|(])(?:KUBECONFIG=|alias\s|(?:function\s+)?(?:kubectl|k|grep|test|stat|ls|cat|jq)\s*\(\)|function\s+(?:kubectl|k|grep|test|stat|ls|cat|jq)\b)`)
	// waitForRE is kubectl wait.
	waitForRE = regexp.MustCompile(`^(?:kubectl|k) wait\b`)
)

// verifyState is what reading a script knows at a statement.
type verifyState struct {
	labNS    string
	consts   map[string]string
	captures map[string]capture
	// failing are the script's functions that fail it (fail() { …; exit 1; }).
	failing map[string]bool
	errexit bool
	// errexitEver says set -e was on at some point.
	errexitEver bool
	// moved says the script changed its directory (cd, pushd): a
	// relative path is no longer under /root.
	moved bool
}

// mapped is what one statement became: its checks, the captures they
// read, their namespaces.
type mapped struct {
	checks     []check
	captures   []string
	namespaces []string
}

// mapVerify reads a verify script statement by statement. Constants
// (NS=web) are written where they are read; X=$(kubectl get …) captures
// a field. Each statement that asserts what typed checks read exactly
// (an object exists or not, a field equals a value, a file exists or
// holds a pattern) becomes those checks; a statement whose status the
// script does not check asserts nothing and becomes none; the rest stay,
// with the constants and captures they read, in one command check, which
// the grader runs with the learner's files and kubeconfig, both the
// learner's to change.
func mapVerify(script, labNS string) verifyMapping {
	whole := verifyMapping{checks: []check{commandVerify(script)}}
	switch interpreter(script) {
	case "", "bash", "sh", "dash":
	default:
		return whole
	}
	stmts, ok := splitStatements(script)
	if !ok {
		return whole
	}
	if redefinedRE.MatchString(script) {
		// kubectl is not kubectl, or reads another cluster.
		return whole
	}
	st := &verifyState{labNS: labNS, consts: map[string]string{}, captures: map[string]capture{}, failing: map[string]bool{}}
	counts := assignments(script)
	const (
		core   = iota // left to the command check
		def           // a constant, a capture, a function, set, echo
		done          // became checks
		silent        // asserts nothing
	)
	kind := make([]int, len(stmts))
	var vm verifyMapping
	var notes []string
	used := map[string]bool{}
	errexitCaptures := map[int]string{}
	stopped := false
	last := len(stmts) - 1
	for i, s := range stmts {
		t := s.text
		if m := setRE.FindString(t); m != "" {
			kind[i] = def
			st.set(t)
			continue
		}
		if m := constRE.FindStringSubmatch(t); m != nil {
			kind[i] = def
			if counts[m[1]] == 1 {
				st.consts[m[1]] = m[2] + m[3] + m[4]
			}
			continue
		}
		if m := captureRE.FindStringSubmatch(t); m != nil {
			kind[i] = def
			if st.errexit {
				// Under set -e the command's failure fails the script:
				// it stays unless a check reads what it captures.
				errexitCaptures[i] = m[1]
			}
			if counts[m[1]] == 1 {
				if k, json, ok := readField(substitute(m[2]+m[3], st.consts), labNS); ok {
					st.captures[m[1]] = capture{kube: k, json: json, stmt: i}
				}
			}
			continue
		}
		if m := funcRE.FindStringSubmatch(t); m != nil {
			kind[i] = def
			if st.fails(m[2]) {
				st.failing[m[1]] = true
			}
			continue
		}
		if echoRE.MatchString(t) || (t == "exit 0" && i == last) {
			kind[i] = def
			continue
		}
		if stopped {
			continue
		}
		if cdRE.MatchString(t) {
			st.moved = true
		}
		mp, bare, note := st.statement(substitute(t, st.consts), i == last)
		if note != "" {
			notes = append(notes, fmt.Sprintf("%s (`%s`): %s", s.lines(), oneLine(s.src), note))
		}
		switch {
		case mp == nil:
			// What may end the script with success leaves what follows
			// unchecked: nothing after it is read.
			if exitZeroRE.MatchString(t) && i != last {
				stopped = true
			}
		case bare && i != last && !st.errexit && waitForRE.MatchString(kAlias(t)):
			// Its status is not checked, but what follows runs once it
			// is done waiting: it stays with the rest.
			notes = append(notes, fmt.Sprintf("%s (`%s`) asserts nothing in the source (its status is not checked), but the lines after it run once it is done waiting: it stays in the command check", s.lines(), oneLine(s.src)))
		case bare && i != last && !st.errexit:
			kind[i] = silent
			notes = append(notes, fmt.Sprintf("%s (`%s`) asserts nothing in the source (its status is not checked: it is not the last line and the script has no set -e): no check was written for it", s.lines(), oneLine(s.src)))
		default:
			kind[i] = done
			var names []string
			for _, c := range mp.checks {
				vm.checks = append(vm.checks, c)
				names = append(names, c.Name)
			}
			for _, c := range mp.captures {
				used[c] = true
			}
			vm.namespaces = append(vm.namespaces, mp.namespaces...)
			from := s.lines()
			var with []string
			for _, c := range mp.captures {
				if w := strconv.Itoa(stmts[st.captures[c].stmt].first); !slices.Contains(with, w) {
					with = append(with, w)
				}
			}
			switch len(with) {
			case 0:
			case 1:
				from += " (with line " + with[0] + ")"
			default:
				from += " (with lines " + strings.Join(with, ", ") + ")"
			}
			notes = append(notes, fmt.Sprintf("%s became check %s", from, strings.Join(names, ", ")))
		}
	}
	if len(vm.checks) == 0 && !slices.Contains(kind, silent) {
		// Nothing read: the script is one command check, or nothing when
		// it cannot fail.
		if !residualAsserts(stmts, kind, core, last, st) {
			return verifyMapping{}
		}
		return whole
	}
	for i, name := range errexitCaptures {
		if !used[name] {
			kind[i] = core
		}
	}
	// The rest: the statements left, with the definitions they read.
	include := make([]bool, len(stmts))
	refs := map[string]bool{}
	anyCore := false
	for i, s := range stmts {
		if kind[i] == core {
			include[i] = true
			anyCore = true
			for _, m := range varRefRE.FindAllStringSubmatch(s.text, -1) {
				refs[m[1]] = true
			}
			for name := range st.failing {
				if strings.Contains(s.text, name) {
					refs[name] = true
				}
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for i, s := range stmts {
			if kind[i] != def || include[i] {
				continue
			}
			name := ""
			if m := constRE.FindStringSubmatch(s.text); m != nil {
				name = m[1]
			} else if m := captureRE.FindStringSubmatch(s.text); m != nil {
				name = m[1]
			} else if m := funcRE.FindStringSubmatch(s.text); m != nil {
				name = m[1]
			}
			if name == "" || refs[name] {
				include[i] = name != "" || anyCore
				if include[i] {
					changed = true
					for _, m := range varRefRE.FindAllStringSubmatch(s.text, -1) {
						refs[m[1]] = true
					}
				}
			}
		}
	}
	if anyCore && residualAsserts(stmts, kind, core, last, st) {
		var b strings.Builder
		if first, _, _ := strings.Cut(strings.TrimSpace(script), "\n"); strings.HasPrefix(first, "#!") {
			b.WriteString(first + "\n")
		}
		var lines []string
		for i, s := range stmts {
			if include[i] {
				b.WriteString(s.src + "\n")
				if kind[i] == core {
					lines = append(lines, s.lines())
				}
			}
		}
		if kind[last] != core && kind[last] != def {
			// The script's status was its last line's, now a typed check.
			b.WriteString("exit 0\n")
		}
		rest := commandVerify(b.String())
		rest.Description = "the rest of the scenario's verify script passes (" + strings.Join(lines, ", ") + "; it runs in the sandbox with the learner's kubectl: rewrite it as typed checks)"
		vm.checks = append(vm.checks, rest)
		verb := "stay"
		if len(lines) == 1 && strings.HasPrefix(lines[0], "line ") {
			verb = "stays"
		}
		notes = append(notes, fmt.Sprintf("%s %s in command check %s", strings.Join(lines, ", "), verb, rest.Name))
	} else if anyCore {
		var lines []string
		for i, s := range stmts {
			if kind[i] == core {
				lines = append(lines, s.lines())
			}
		}
		notes = append(notes, strings.Join(lines, ", ")+" cannot fail the script (no exit with a failure, no set -e, not its last line): no check was written for them")
	}
	names := map[string]int{}
	for i := range vm.checks {
		c := &vm.checks[i]
		names[c.Name]++
		if n := names[c.Name]; n > 1 {
			c.Name = fmt.Sprintf("%s-%d", c.Name, n)
		}
	}
	vm.typed = len(vm.checks) > 0 && !slices.ContainsFunc(vm.checks, func(c check) bool { return c.Command != nil })
	vm.notes = notes
	return vm
}

// residualAsserts says whether the statements left can fail the script:
// one exits with a failure (or calls what does), set -e is on, or the
// last statement's status is the script's.
func residualAsserts(stmts []stmt, kind []int, core, last int, st *verifyState) bool {
	if st.errexitEver {
		return true
	}
	for i, s := range stmts {
		if kind[i] != core {
			continue
		}
		if i == last || mayFailRE.MatchString(s.text) {
			return true
		}
		for name := range st.failing {
			if strings.Contains(s.text, name) {
				return true
			}
		}
	}
	return false
}

// set reads a set command: -e (or -o errexit) turns errexit on, +e off.
func (st *verifyState) set(t string) {
	words := strings.Fields(t)[1:]
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case (w == "-o" || w == "+o") && i+1 < len(words):
			if words[i+1] == "errexit" {
				st.errexit = w == "-o"
			}
			i++
		case strings.HasPrefix(w, "-") && strings.Contains(w, "e"):
			st.errexit = true
		case strings.HasPrefix(w, "+") && strings.Contains(w, "e"):
			st.errexit = false
		}
	}
	if st.errexit {
		st.errexitEver = true
	}
}

// splitList splits a list at sep (" && ", "; "), outside quotes, $( )
// and [[ ]].
func splitList(s, sep string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || strings.HasPrefix(s[i:], "[["):
			depth++
		case c == ')' || strings.HasPrefix(s[i:], "]]"):
			depth--
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			out = append(out, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(out, s[start:])
}

// fails says a body of commands fails the script: what it runs before
// only prints, and its last command exits with a failure (exit N, a
// function that does, Instruqt's fail-message).
func (st *verifyState) fails(body string) bool {
	body = strings.TrimSpace(body)
	if b, ok := strings.CutPrefix(body, "{ "); ok {
		body = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(b, "}")), ";"), " ")
	}
	parts := splitList(body, "; ")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		lastPart := i == len(parts)-1
		switch {
		case strings.HasPrefix(p, "fail-message ") && echoRE.MatchString("echo"+strings.TrimPrefix(p, "fail-message")):
			if lastPart {
				return true
			}
		case echoRE.MatchString(p):
			if lastPart {
				return false
			}
		case lastPart:
			if m := exitRE.FindStringSubmatch(p); m != nil {
				return m[1] != "" && m[1] != "0"
			}
			name, args, _ := strings.Cut(p, " ")
			return st.failing[name] && (args == "" || echoRE.MatchString("echo "+args))
		default:
			return false
		}
	}
	return false
}

// passes says a body of commands only prints (and may exit 0 when it is
// the script's last statement).
func passes(body string, final bool) bool {
	parts := splitList(strings.TrimSpace(body), "; ")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if echoRE.MatchString(p) {
			continue
		}
		if m := exitRE.FindStringSubmatch(p); m != nil && (m[1] == "" || m[1] == "0") && final && i == len(parts)-1 {
			continue
		}
		return false
	}
	return true
}

// statement maps one statement as the assertions it makes: C || FAIL,
// if ! C; then FAIL; fi, if C; then FAIL; fi (C must not hold), if C;
// then OK; else FAIL; fi, or C alone (bare: it asserts only as the
// script's last statement or under set -e). nil when it is none of
// those, or a condition cannot be read as typed checks; the note says
// why, when it is worth the author's reading.
func (st *verifyState) statement(t string, final bool) (*mapped, bool, string) {
	var cond string
	hold, bare := true, false
	if m := ifElseRE.FindStringSubmatch(t); m != nil {
		c, neg := strings.CutPrefix(m[1], "! ")
		switch {
		case passes(m[2], final) && st.fails(m[3]):
			cond, hold = c, !neg
		case st.fails(m[2]) && passes(m[3], final):
			cond, hold = c, neg
		default:
			return nil, false, ""
		}
	} else if m := ifRE.FindStringSubmatch(t); m != nil {
		if !st.fails(m[2]) {
			return nil, false, ""
		}
		c, neg := strings.CutPrefix(m[1], "! ")
		cond, hold = c, neg
	} else if m := orFailRE.FindStringSubmatch(t); m != nil && st.fails(m[2]) {
		cond = m[1]
	} else if m := andFailRE.FindStringSubmatch(t); m != nil && st.fails(m[2]) {
		cond, hold = m[1], false
	} else {
		cond, bare = t, true
		if c, neg := strings.CutPrefix(t, "! "); neg {
			if !final {
				return nil, false, "" // set -e does not stop at a negated command
			}
			cond, hold = c, false
		}
	}
	if strings.HasPrefix(t, "if ! ") || strings.HasPrefix(t, "! ") {
		// ! binds to the first command of a list: ! A && B is (! A) && B.
		if len(splitList(cond, " && ")) > 1 || len(splitList(cond, " || ")) > 1 {
			return nil, false, ""
		}
	}
	var atoms []string
	switch {
	case strings.HasPrefix(cond, "[[ ") && strings.HasSuffix(cond, " ]]") && strings.Count(cond, "[[") == 1:
		for _, a := range splitList(cond[3:len(cond)-3], " && ") {
			atoms = append(atoms, "[[ "+strings.TrimSpace(a)+" ]]")
		}
	default:
		atoms = splitList(cond, " && ")
	}
	if len(atoms) > 1 && (!hold || (bare && !final)) {
		// Under set -e a failure before && does not stop the script, and
		// "not (A and B)" is no list of checks.
		return nil, false, ""
	}
	mp := &mapped{}
	for _, a := range atoms {
		a = strings.TrimSpace(a)
		if strings.Contains(a, "||") {
			return nil, false, ""
		}
		c, ns, capVar, note, ok := st.atom(a, hold)
		if !ok {
			return nil, false, note
		}
		mp.checks = append(mp.checks, c)
		if ns != "" {
			mp.namespaces = append(mp.namespaces, ns)
		}
		if capVar != "" {
			mp.captures = append(mp.captures, capVar)
		}
	}
	return mp, bare, ""
}

// testRE is a test command: [ … ], [[ … ]], test ….
var testRE = regexp.MustCompile(`^(?:\[\[ (.+) \]\]|\[ (.+) \]|test (.+))$`)

// atom maps one condition that must hold (or, hold false, must not) as a
// typed check; it returns the capture the check reads instead of the
// command, if any.
func (st *verifyState) atom(a string, hold bool) (check, string, string, string, bool) {
	if m := testRE.FindStringSubmatch(a); m != nil && !compareRE.MatchString(a) {
		double := m[1] != ""
		words, ok := testWords(m[1] + m[2] + m[3])
		if !ok {
			return check{}, "", "", "", false
		}
		if len(words) > 0 && words[0].lit == "!" && !words[0].quoted {
			hold = !hold
			words = words[1:]
		}
		switch len(words) {
		case 2:
			op, p := words[0], words[1]
			if op.quoted || p.ref != "" || p.glob || p.lit == "" {
				return check{}, "", "", "", false
			}
			c, ok := fileExists(p.lit, op.lit, hold, !st.moved)
			return c, "", "", "", ok
		case 3:
			l, op, r := words[0], words[1].lit, words[2]
			if l.ref == "" {
				l, r = r, l
			}
			c, ok := st.captures[l.ref]
			if !ok || !hold || words[1].quoted || (!double && !l.quoted && op != "-eq") {
				return check{}, "", "", "", false
			}
			k, note, ok := compared(c, op, r, double)
			if !ok {
				return check{}, "", "", note, false
			}
			return fieldNamed(k), k.Namespace, l.ref, "", true
		}
		return check{}, "", "", "", false
	}
	if waitForRE.MatchString(kAlias(a)) {
		if !hold {
			return check{}, "", "", "a kubectl wait that must fail stays in the command check", false
		}
		c, ns, note, ok := kubectlWait(a, st.labNS)
		if !ok && note == "" {
			note = "this kubectl wait stays in the command check: only --for=condition=C[=V], --for=jsonpath='{.f}'=V and --for=delete on one KIND/NAME, with -n and --timeout, become typed checks"
		}
		return c, ns, "", note, ok
	}
	if jqTestRE.MatchString(kAlias(a)) && hold {
		c, ns, note, ok := jqTest(a, st.labNS)
		return c, ns, "", note, ok
	}
	c, ns, ok := mapLine(a, st.labNS, hold, !st.moved)
	return c, ns, "", "", ok
}

// fileExists maps test -e/-f/-d P: P exists (as a file, a directory), or,
// hold false, P does not exist (-e only: "not a regular file" is not
// "gone").
func fileExists(p, op string, hold, relative bool) (check, bool) {
	p, ok := homePath(p, relative)
	if !ok {
		return check{}, false
	}
	fc := &fileCheck{Path: p}
	switch {
	case !hold && op == "-e":
		no := false
		fc.Exists = &no
		return check{Name: slug("file-"+p, 50) + "-gone", Description: p + " does not exist", File: fc}, true
	case !hold:
		return check{}, false
	case op == "-f":
		fc.Type = "file"
	case op == "-d":
		fc.Type = "dir"
	case op != "-e":
		return check{}, false
	}
	return check{Name: slug("file-"+p, 50), Description: p + " exists", File: fc}, true
}

// homePath is the path a check reads for p as a script in the learner's
// home names it (a relative path only while the script has not changed
// its directory): any path of the sandbox, which a file check reads from
// the host's side outside /root; false in /proc, /sys and /dev, which no
// check reads.
func homePath(p string, relative bool) (string, bool) {
	if p == "" || strings.ContainsAny(p, "*?[~$`") {
		return "", false
	}
	if !strings.HasPrefix(p, "/") {
		if !relative {
			return "", false
		}
		p = path.Join(lab.HomeDir, p)
	}
	p = path.Clean(p)
	if neverRead(p) {
		return "", false
	}
	return p, true
}

// commandVerify is the check that runs a whole verify script: with the
// interpreter its first line names, in the learner's home as the
// platform ran it, for as long as the script's own waits take.
func commandVerify(script string) check {
	script = strings.TrimSpace(script)
	if ip := interpreter(script); ip != "python" && ip != "python3" {
		script, _ = logsOutsideHome(script)
	}
	run := []string{"bash", "-c", failMessage(script)}
	switch interpreter(script) {
	case "sh", "dash":
		if !strings.Contains(script, "fail-message") { // sh names no function with a '-'
			run = []string{"sh", "-c", script}
		}
	case "python", "python3":
		run = []string{"python3", "-c", script}
	}
	if (run[0] == "bash" || run[0] == "sh") && kUseRE.MatchString(script) {
		// Scenarios alias kubectl as k; a script sees no aliases.
		run[2] = "k() { kubectl \"$@\"; }\n" + run[2]
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
	shebangRE = regexp.MustCompile(`^#![ \t]*(\S+)(?:[ \t]+(\S+))?`)
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
func mapLine(l, labNS string, hold, relative bool) (check, string, bool) {
	l = kAlias(l) // the alias every Kubernetes scenario sets
	if !hold {
		c, ns, ok := mapLine(l, labNS, true, relative)
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
		file, ok := homePath(file, relative)
		if !ok {
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
		p, ok := homePath(unquote(m[2]), relative)
		if !ok || strings.HasPrefix(p, "-") {
			return check{}, "", false
		}
		fc := &fileCheck{Path: p}
		switch {
		case strings.HasSuffix(m[1], "-f") || m[1] == "cat":
			// cat fails on a directory as test -f does.
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

// pathsOutsideHome lists the absolute paths a script names outside the
// learner's home (not the system's own directories of programs and
// devices, which the grader's image has as well): a command check runs
// in the grader, which has its own.
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
		if inHome(p) || seen[p] || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/bin/") || strings.HasPrefix(p, "/usr/") || strings.HasPrefix(p, "/proc/") {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

// inHome reports whether p is in the learner's home, which the grader
// mounts.
func inHome(p string) bool {
	p = path.Clean(p)
	return p == lab.HomeDir || strings.HasPrefix(p, lab.HomeDir+"/")
}

// neverRead reports whether p is in /proc, /sys or /dev, which no check
// reads.
func neverRead(p string) bool {
	for _, d := range lab.NeverRead {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
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

var (
	// logRedirectRE is a redirection of output to a file: to a path, or to
	// a variable's value.
	logRedirectRE = regexp.MustCompile(`(^|[^&>0-9])([12]?>>?)[ \t]*"?(\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?|/[^\s"';|&)<>]+)"?`)
	// pathVarRE sets a variable to an absolute path.
	pathVarRE = regexp.MustCompile(`(?m)^[ \t]*([A-Za-z_][A-Za-z0-9_]*)=["']?(/[^\s"';]+)["']?[ \t]*$`)
)

// logsOutsideHome rewrites the redirections of a script's output to a log
// file outside the learner's home (Killercoda's `{ …; } >> /ks/step1-verify.log
// 2>&1`, through a variable or not) into its standard error. The grader
// sees only the learner's home: such a redirection fails there, the block
// it applies to never runs, and a script that then ends with `echo done`
// would pass whatever the learner did. A file the script also reads is
// left as it is. It returns the script and the files so redirected.
func logsOutsideHome(script string) (string, []string) {
	vars := map[string]string{}
	for _, m := range pathVarRE.FindAllStringSubmatch(script, -1) {
		vars[m[1]] = m[2]
	}
	target := func(m []string) string {
		if m[4] != "" {
			return vars[m[4]]
		}
		return m[3]
	}
	// Where each file is named: a file named anywhere but its
	// redirections and its variable's line is read, and kept.
	rest := pathVarRE.ReplaceAllString(logRedirectRE.ReplaceAllString(script, "$1"), "")
	var files []string
	out := logRedirectRE.ReplaceAllStringFunc(script, func(s string) string {
		m := logRedirectRE.FindStringSubmatch(s)
		p := target(m)
		if p == "" || inHome(p) || strings.HasPrefix(p, "/dev/") {
			return s
		}
		if strings.Contains(rest, p) || m[4] != "" && regexp.MustCompile(`\$\{?`+m[4]+`\b`).MatchString(rest) {
			return s
		}
		if !slices.Contains(files, p) {
			files = append(files, p)
		}
		fd := strings.TrimRight(m[2], ">")
		return m[1] + fd + ">&2"
	})
	return out, files
}
