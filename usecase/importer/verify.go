package importer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	grepFileRE = lazyRegexp(`^(?:grep (-[qi]+ )?(` + plainRE + `) (` + filePathRE + `)|cat (` + filePathRE + `) \| grep (-[qi]+ )?(` + plainRE + `))( >\s*/dev/null( 2>&1)?| &>\s*/dev/null)?$`)
	// [ "$(kubectl get K N -o jsonpath='{...}')" = "V" ]
	compareRE = lazyRegexp(`^\[\[? "\$\(((?:kubectl|k) (?:(?:-n|--namespace)[= ][a-z0-9-]+ )?get [^)|;&$` + "`" + `]+)\)" ==? ("[^"$` + "`" + `]*"|'[^']*'|[A-Za-z0-9._:/-]+) \]\]?$`)
	// kubectl get K N -o jsonpath='{...}' | grep -q V
	grepRE = lazyRegexp(`^((?:kubectl|k) (?:(?:-n|--namespace)[= ][a-z0-9-]+ )?get [^|;&$` + "`" + `]+) \| grep -(q|qw|wq|Fq|qF) ("[^"$` + "`" + `]*"|'[^']*'|[A-Za-z0-9._:/-]+)$`)
	// stat P, ls P, test -f P, [ -d P ]
	fileRE = lazyRegexp(`^(stat|ls|cat|test -[efd]|\[\[? -[efd]) ("[^"$` + "`" + `]+"|'[^']+'|` + filePathRE + `)( \]\]?)?( >\s*/dev/null( 2>&1)?| &>\s*/dev/null)?$`)
	// a path written bare: absolute, or relative to the script's directory
	filePathRE = `[/A-Za-z0-9._][^\s;|&$` + "`" + `'"]*`
	// a grep pattern that means the same as an RE2 expression, quoted or not
	plainRE = `"[A-Za-z0-9 ._:/=-]+"|'[A-Za-z0-9 ._:/=-]+'|[A-Za-z0-9._:/=-]+`
	// a jsonpath of one field: {.spec.replicas}, {.spec.containers[0].image}
	jsonpathRE = lazyRegexp(`^\{((?:\.[A-Za-z0-9_-]+(?:\[[0-9]+\])*)+)\}$`)

	// if C; then FAIL; fi — and its else branch
	ifRE     = lazyRegexp(`^if (.+?); then (.+?); fi$`)
	ifElseRE = lazyRegexp(`^if (.+?); then (.+?); else (.+?); fi$`)
	// C || FAIL, C && FAIL
	orFailRE  = lazyRegexp(`^(.+?) \|\| (exit [1-9][0-9]*|[A-Za-z_][A-Za-z0-9_-]*(?: (?:` + argRE + `))*|\{ .+ \})$`)
	andFailRE = lazyRegexp(`^(.+?) && (exit [1-9][0-9]*|[A-Za-z_][A-Za-z0-9_-]*(?: (?:` + argRE + `))*|\{ .+ \})$`)
	// exitZeroRE is what may end a script with success before its end.
	exitZeroRE = lazyRegexp(`(?:^|[;&|{(]\s*|\bthen\s+|\belse\s+|\bdo\s+)(?:exit(?:\s+0)?|return(?:\s+0)?)\s*(?:;|$|\})`)
	// mayFailRE is what makes a statement fail a script without set -e.
	mayFailRE = lazyRegexp(`\bexit\s+[1-9]|\bfail-message\b|\breturn\s+[1-9]|\bfalse\b|\bset\s+(-[a-z]*e|-o\s+errexit)`)
	// kUseRE is the k alias run: k get …, $(k -n web get …).
	kUseRE = lazyRegexp(`(?m)(?:^|[\s;&|(` + "`" + `])k\s+-?[a-z]`)
	// cdRE changes the script's directory.
	cdRE = lazyRegexp(`(?:^|[\s;&|(])(?:cd|pushd|popd)\b`)
	// redefinedRE changes what kubectl (or k, grep, test …) does or reads.
	redefinedRE = lazyRegexp(`(?m)(?:^|[\s;&|(])(?:KUBECONFIG=|alias\s|(?:function\s+)?(?:kubectl|k|grep|test|stat|ls|cat|jq)\s*\(\)|function\s+(?:kubectl|k|grep|test|stat|ls|cat|jq)\b)`)
	// waitForRE is kubectl wait.
	waitForRE = lazyRegexp(`^(?:kubectl|k) wait\b`)
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
var testRE = lazyRegexp(`^(?:\[\[ (.+) \]\]|\[ (.+) \]|test (.+))$`)

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

// absPathRE finds absolute paths in a script.
var absPathRE = lazyRegexp(`(?:^|[\s'"=<>])(/[A-Za-z0-9._/-]+)`)
