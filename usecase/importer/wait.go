package importer

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"
)

// conditionTypes are the condition types of the kinds kubectl wait is
// mapped for, as the API server writes them: kubectl matches a
// condition's type without regard to case, a field check exactly.
var conditionTypes = map[string][]string{
	"Pod":                     {"PodScheduled", "PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready", "DisruptionTarget"},
	"Deployment":              {"Available", "Progressing", "ReplicaFailure"},
	"ReplicaSet":              {"ReplicaFailure"},
	"StatefulSet":             {},
	"DaemonSet":               {},
	"Job":                     {"Complete", "Failed", "Suspended", "FailureTarget", "SuccessCriteriaMet"},
	"Node":                    {"Ready", "MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable"},
	"PersistentVolumeClaim":   {"Resizing", "FileSystemResizePending"},
	"HorizontalPodAutoscaler": {"AbleToScale", "ScalingActive", "ScalingLimited"},
	"PodDisruptionBudget":     {"DisruptionAllowed"},
}

// kubectlWaitTimeout is how long kubectl wait waits without --timeout.
const kubectlWaitTimeout = 30 * time.Second

// waitSlack is what a waiting check's timeout adds to the script's own:
// the check stops reading a little before its deadline (checks.waitKube).
const waitSlack = 3 * time.Second

// kubectlWait reads `kubectl wait --for=… KIND/NAME [-n NS] [--timeout=T]`
// as a kube check that reads the same object until the same condition
// holds, for as long: --for=condition=C[=V] (C's status is V, default
// True), --for=jsonpath='{.f}'=V (f prints V), --for=delete (the object
// is gone). false, with why in a note, when it says something else: a
// selector (-l, --all) waits for each object, where a selector check
// judges the values of all of them together.
func kubectlWait(cmd, labNS string) (check, string, string, bool) {
	words, ok := shellWords(kAlias(cmd))
	if !ok || len(words) < 3 || words[0] != "kubectl" {
		return check{}, "", "", false
	}
	var forWhat, ns string
	var args []string
	timeout := kubectlWaitTimeout
	for i := 1; i < len(words); i++ {
		w := words[i]
		value := func(flag string) (string, bool) {
			if v, ok := strings.CutPrefix(w, flag+"="); ok {
				return v, true
			}
			if w == flag && i+1 < len(words) {
				i++
				return words[i], true
			}
			return "", false
		}
		if w == "-l" || strings.HasPrefix(w, "--selector") || (strings.HasPrefix(w, "-l") && len(w) > 2) || w == "--all" || w == "-A" || w == "--all-namespaces" {
			return check{}, "", "kubectl wait with a selector (-l, --all) stays in the command check: it waits for each object, where a kube check with a selector judges the values of all of them together (an object without the condition yet is not judged)", false
		}
		if v, ok := value("--for"); ok {
			forWhat = v
			continue
		}
		if v, ok := value("--timeout"); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				return check{}, "", "", false
			}
			timeout = d
			continue
		}
		if v, ok := value("--namespace"); ok {
			ns = v
			continue
		}
		switch {
		case w == "-n" && i+1 < len(words):
			i++
			ns = words[i]
		case strings.HasPrefix(w, "-n") && len(w) > 2:
			ns = strings.TrimPrefix(w[2:], "=")
		case strings.HasPrefix(w, "-"):
			return check{}, "", "", false
		default:
			args = append(args, w)
		}
	}
	if len(args) < 2 || args[0] != "wait" || forWhat == "" {
		return check{}, "", "", false
	}
	get := []string{"kubectl", "get"}
	get = append(get, args[1:]...)
	if ns != "" {
		get = append(get, "-n", ns)
	}
	k, ok := kubectlGet(strings.Join(quoteWords(get), " "), labNS)
	if !ok || k.Field != nil {
		return check{}, "", "", false
	}
	var c check
	switch {
	case forWhat == "delete":
		no := false
		k.Exists = &no
		c = check{Name: slug(strings.ToLower(k.Kind)+"-"+k.Name+"-gone", 50), Description: fmt.Sprintf("%s %s is deleted", k.Kind, k.Name)}
	case strings.HasPrefix(forWhat, "condition="):
		name, status, valued := strings.Cut(strings.TrimPrefix(forWhat, "condition="), "=")
		if !valued {
			status = "True"
		}
		typ, ok := canonical(name, conditionTypes[k.Kind])
		if !ok {
			return check{}, "", fmt.Sprintf("kubectl wait --for=condition=%s stays in the command check: kubectl matches the condition's type in any case, and %s is no condition a %s is known to have, whose spelling a typed check could match exactly", name, name, k.Kind), false
		}
		if status, ok = canonical(status, []string{"True", "False", "Unknown"}); !ok {
			return check{}, "", "", false
		}
		k.Field = &fieldCheck{Path: `status.conditions[?(@.type==` + strconv.Quote(typ) + `)].status`, Equals: status}
		desc := fmt.Sprintf("%s %s is %s", k.Kind, k.Name, typ)
		if status != "True" {
			desc = fmt.Sprintf("%s %s has condition %s %s", k.Kind, k.Name, typ, status)
		}
		c = check{Name: slug(strings.ToLower(k.Kind)+"-"+k.Name+"-"+typ, 50), Description: desc}
	case strings.HasPrefix(forWhat, "jsonpath="):
		template, want, ok := strings.Cut(strings.TrimPrefix(forWhat, "jsonpath="), "}=")
		m := jsonpathRE.FindStringSubmatch(template + "}")
		if !ok || m == nil {
			return check{}, "", "", false
		}
		k.Field = &fieldCheck{Path: strings.TrimPrefix(m[1], ".")}
		v, ok := printedEquals(k, unquote(want))
		if !ok {
			return check{}, "", "", false
		}
		k.Field.Equals = v
		c = fieldNamed(k)
	default:
		return check{}, "", "", false
	}
	c.Kube = k
	if timeout > 0 {
		k.Wait = true
		c.Timeout = min(timeout+waitSlack, maxCheckWait).String()
		c.Description += fmt.Sprintf(" (waiting up to %s, as the script's kubectl wait did)", min(timeout, maxCheckWait-waitSlack))
	}
	return c, k.Namespace, "", true
}

// canonical is the one of names s is, in any case.
func canonical(s string, names []string) (string, bool) {
	for _, n := range names {
		if strings.EqualFold(s, n) {
			return n, true
		}
	}
	return "", false
}

// jqTestRE is `kubectl get … -o json | jq -e 'EXPR'`, its output thrown
// away or not.
var jqTestRE = lazyRegexp(`^(.+ -o ?json) \| jq -e (?:'([^']+)'|"([^"$` + "`" + `\\]+)")(?: >\s*/dev/null(?: 2>&1)?| &>\s*/dev/null)?$`)

// jqExprRE is a jq test of one field or of .items' length: PATH OP VALUE.
var jqExprRE = lazyRegexp(`^\s*(\.items\s*\|\s*length|\.[A-Za-z0-9_.\[\]]+)\s*(==|>=|<=|>|<|!=)\s*("[A-Za-z0-9._:/@+=-]*"|-?[0-9]+|true|false)\s*$`)

// jqTest reads `kubectl get … -o json | jq -e 'EXPR'` as the kube check
// that holds exactly when jq's test is true: a field equals a string, a
// number or a boolean; an integer field (of a known type: jq orders
// values of any type, a check compares numbers) is at least or at most a
// number; the objects a list reads number so many. false, with why in a
// note worth the author's reading, for what no check says exactly.
func jqTest(a, labNS string) (check, string, string, bool) {
	m := jqTestRE.FindStringSubmatch(kAlias(a))
	if m == nil {
		return check{}, "", "", false
	}
	e := jqExprRE.FindStringSubmatch(m[2] + m[3])
	if e == nil {
		return check{}, "", "", false
	}
	path, op, lit := e[1], e[2], e[3]
	if isNumber(lit) {
		if _, ok := exactInJQ(lit); !ok {
			return check{}, "", fmt.Sprintf("jq holds %s only as an approximate number: it stays in the command check", lit), false
		}
	}
	if op == "!=" {
		return check{}, "", "jq's != holds for a field that is missing (null), where a field check requires the field: it stays in the command check", false
	}
	if strings.Contains(path, "|") {
		return jqCount(m[1], op, lit, labNS)
	}
	k, ok := kubectlGetJSON(m[1], labNS)
	if !ok || !jqPathRE.MatchString(path) {
		return check{}, "", "", false
	}
	k.Field = &fieldCheck{Path: strings.TrimPrefix(path, ".")}
	if op == "==" {
		switch {
		case strings.HasPrefix(lit, `"`):
			k.Field.Equals = strings.Trim(lit, `"`)
		case lit == "true" || lit == "false":
			k.Field.Equals = lit == "true"
		default:
			k.Field.Equals = int64(atoi(lit))
		}
		return fieldNamed(k), k.Namespace, "", true
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil || fieldType(k) != "integer" {
		return check{}, "", fmt.Sprintf("jq's %s compares values of any type (a string is more than any number, a missing field less): it stays in the command check unless %s is a field known to be an integer", op, path), false
	}
	switch op {
	case ">=":
		k.Field.GTE = &n
	case ">":
		n++
		k.Field.GTE = &n
	case "<=":
		k.Field.LTE = &n
	case "<":
		n--
		k.Field.LTE = &n
	}
	k.Field.Type = "integer"
	return fieldNamed(k), k.Namespace, "", true
}

// maxExactInJQ is the largest integer jq, whose numbers are doubles,
// holds exactly (2^53): beyond it a literal is not the number written.
const maxExactInJQ = 1 << 53

// isNumber says whether lit, a literal of jqExprRE, is a number.
func isNumber(lit string) bool { return lit != "" && lit[0] != '"' && lit != "true" && lit != "false" }

// exactInJQ reads the integer literal lit, false when jq does not hold it
// exactly (then no check compares with what jq compared).
func exactInJQ(lit string) (int64, bool) {
	n, err := strconv.ParseInt(lit, 10, 64)
	if err != nil || n > maxExactInJQ || n < -maxExactInJQ {
		return 0, false
	}
	return n, true
}

// jqCount reads `kubectl get KIND [-l SEL] [-n NS] -o json | jq -e
// '.items | length OP N'` as a kube check counting the objects the
// selector selects.
func jqCount(cmd, op, lit, labNS string) (check, string, string, bool) {
	n, err := strconv.Atoi(lit)
	if err != nil || n < 0 {
		return check{}, "", "", false
	}
	k, ok := kubectlList(cmd, labNS)
	if !ok {
		return check{}, "", "", false
	}
	r := &countRange{}
	zero := 0
	switch op {
	case "==":
		r.Min, r.Max = &n, &n
	case ">=":
		r.Min = &n
	case ">":
		n++
		r.Min = &n
	case "<=":
		r.Min, r.Max = &zero, &n
	case "<":
		if n == 0 {
			return check{}, "", "", false
		}
		n--
		r.Min, r.Max = &zero, &n
	}
	k.Count = r
	var how string
	switch {
	case r.Max == nil:
		how = fmt.Sprintf("at least %d", *r.Min)
	case *r.Min == *r.Max:
		how = fmt.Sprintf("exactly %d", *r.Max)
	default:
		how = fmt.Sprintf("at most %d", *r.Max)
	}
	what := k.Kind + " objects"
	if *k.Selector != "" {
		what += " matching " + *k.Selector
	}
	return check{
		Name:        slug(strings.ToLower(k.Kind)+"-count", 50),
		Description: fmt.Sprintf("there are %s %s", how, what),
		Kube:        k,
	}, k.Namespace, "", true
}

// kubectlList reads `kubectl get KIND [-l SEL] [-n NS] -o json`, a list
// of one kind in one namespace.
func kubectlList(cmd, labNS string) (*kubeCheck, bool) {
	words, ok := shellWords(kAlias(cmd))
	if !ok || len(words) < 3 || words[0] != "kubectl" {
		return nil, false
	}
	var args []string
	var ns, sel string
	json := false
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case (w == "-o" || w == "--output") && i+1 < len(words) && words[i+1] == "json":
			json = true
			i++
		case w == "-ojson" || w == "--output=json" || w == "-o=json":
			json = true
		case (w == "-n" || w == "--namespace" || w == "-l" || w == "--selector") && i+1 < len(words):
			i++
			if w == "-n" || w == "--namespace" {
				ns = words[i]
			} else {
				sel = words[i]
			}
		case strings.HasPrefix(w, "--namespace="):
			ns = strings.TrimPrefix(w, "--namespace=")
		case strings.HasPrefix(w, "--selector="):
			sel = strings.TrimPrefix(w, "--selector=")
		case strings.HasPrefix(w, "-l") && len(w) > 2:
			sel = strings.TrimPrefix(w[2:], "=")
		case strings.HasPrefix(w, "-n") && len(w) > 2:
			ns = strings.TrimPrefix(w[2:], "=")
		case strings.HasPrefix(w, "-"):
			return nil, false
		default:
			args = append(args, w)
		}
	}
	if !json || len(args) != 2 || args[0] != "get" {
		return nil, false
	}
	r, ok := resources[strings.ToLower(args[1])]
	if _, err := labels.Parse(sel); !ok || err != nil {
		return nil, false
	}
	k := &kubeCheck{APIVersion: r.apiVersion, Kind: r.kind, Selector: &sel}
	if r.namespaced {
		if ns == "" || ns == "default" {
			ns = labNS
		}
		k.Namespace = ns
	}
	return k, true
}
