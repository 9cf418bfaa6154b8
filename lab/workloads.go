package lab

import (
	"fmt"
	"slices"
	"strings"
)

// A lab with cluster.workloads: declare promises that its checks only read
// what the API server stores. runningPodUses finds the obvious breaches of
// that promise, for Lint: kube checks reading what only a running Pod sets,
// and kubectl commands that talk to a running container or wait for one.

// runningPodUse is one place of a lab that needs its Pods to run.
type runningPodUse struct {
	// path is the field, e.g. steps[0].solve; what names it for the
	// learner's author (a check or a script) and why says what it needs.
	path, what, why string
}

// runningPodFields are field names in an object's status that stay unset
// (or zero) while no Pod runs.
var runningPodFields = []string{
	"readyReplicas", "availableReplicas", "numberReady", "numberAvailable",
	"containerStatuses", "initContainerStatuses", "podIP", "podIPs", "hostIP",
}

// runningPodConditions are the conditions a Pod, or a workload of Pods,
// has True only while its Pods run.
var runningPodConditions = []string{"Ready", "ContainersReady", "Available"}

// runningPodVerbs are kubectl subcommands that reach into a running
// container.
var runningPodVerbs = []string{"logs", "exec", "attach", "port-forward", "cp", "debug", "top"}

// runningPodUses returns the places of the lab that obviously need running
// Pods, in the order of the file.
func (l *Lab) runningPodUses() []runningPodUse {
	var uses []runningPodUse
	script := func(p, what, body string) {
		if cmd := runningPodCommand(body); cmd != "" {
			uses = append(uses, runningPodUse{p, what, fmt.Sprintf("runs %q", cmd)})
		}
	}
	for i := range l.Steps {
		s := &l.Steps[i]
		sp := joinIndex("steps", i)
		script(sp+".setup", fmt.Sprintf("the setup script of step %q", s.ID), s.Setup)
		for j := range s.Checks {
			c := &s.Checks[j]
			cp := joinIndex(sp+".checks", j)
			what := fmt.Sprintf("check %q", c.Name)
			if k := c.Kube; k != nil && k.Field != nil {
				if f := runningPodField(k.Kind, k.Field.Path); f != "" {
					uses = append(uses, runningPodUse{cp + ".kube.field.path", what, fmt.Sprintf("reads %s of a %s", f, k.Kind)})
				}
			}
			if c.Command != nil {
				script(cp+".command.run", what, strings.Join(c.Command.Run, " "))
			}
		}
		if p := s.Probe; p != nil {
			script(sp+".probe.setup", fmt.Sprintf("the probe setup of step %q", s.ID), p.Setup)
			script(sp+".probe.run", fmt.Sprintf("the probe run of step %q", s.ID), p.Run)
			script(sp+".probe.restore", fmt.Sprintf("the probe restore of step %q", s.ID), p.Restore)
			for k, b := range p.Broken {
				bp := joinIndex(sp+".probe.broken", k)
				script(bp+".setup", fmt.Sprintf("the probe's broken setup of step %q", s.ID), b.Setup)
				script(bp+".restore", fmt.Sprintf("the probe's broken restore of step %q", s.ID), b.Restore)
			}
		}
		script(sp+".solve", fmt.Sprintf("the solve script of step %q", s.ID), s.Solve)
		for j, m := range s.Mistakes {
			script(joinIndex(sp+".mistakes", j)+".script", fmt.Sprintf("mistake %q of step %q", m.Name, s.ID), m.Script)
		}
		for j, a := range s.Alternatives {
			script(joinIndex(sp+".alternatives", j)+".script", fmt.Sprintf("alternative %q of step %q", a.Name, s.ID), a.Script)
		}
	}
	return uses
}

// runningPodField returns the part of a kube check's field path that only a
// running Pod sets, or "": a status field of runningPodFields, a condition
// of runningPodConditions, or a Pod's status.phase (Pending until it runs).
func runningPodField(kind, fieldPath string) string {
	if p, err := ParsePath(fieldPath); err == nil {
		for _, seg := range p {
			if seg.Kind == FilterSegment && seg.Key == "type" && slices.Contains(runningPodConditions, seg.Value) {
				return "the " + seg.Value + " condition"
			}
		}
	}
	segs := strings.FieldsFunc(fieldPath, func(r rune) bool { return r == '.' || r == '[' || r == ']' })
	if kind == "Pod" && len(segs) >= 2 && segs[0] == "status" && segs[1] == "phase" {
		return "status.phase"
	}
	for _, s := range segs {
		if slices.Contains(runningPodFields, s) {
			return s
		}
	}
	return ""
}

// runningPodCommand returns the first kubectl command of a bash script that
// needs a running Pod (see runningPodVerbs; also rollout status, and wait
// for a Ready or Available condition), shortened to its verb, or "".
func runningPodCommand(body string) string {
	segments := strings.FieldsFunc(body, func(r rune) bool {
		return r == '\n' || r == '|' || r == ';' || r == '&' || r == '(' || r == ')' || r == '`'
	})
	for _, seg := range segments {
		words := strings.Fields(seg)
		at := slices.IndexFunc(words, func(w string) bool { return w == "kubectl" || strings.HasSuffix(w, "/kubectl") })
		if at < 0 {
			continue
		}
		args := words[at+1:]
		v := kubectlSubcommand(args)
		if v < 0 {
			continue
		}
		verb, rest := args[v], args[v+1:]
		switch {
		case slices.Contains(runningPodVerbs, verb):
			return "kubectl " + verb
		case verb == "rollout":
			if r := kubectlSubcommand(rest); r >= 0 && rest[r] == "status" {
				return "kubectl rollout status"
			}
		case verb == "wait":
			for j, a := range rest {
				if a == "--for" && j+1 < len(rest) {
					a = "--for=" + strings.Trim(rest[j+1], `'"`)
				}
				if waitsForRunning(a) {
					return "kubectl wait " + strings.Trim(a, `'"`)
				}
			}
		}
	}
	return ""
}

// kubectlValueFlags are kubectl's global flags whose value may follow as
// the next argument.
var kubectlValueFlags = []string{
	"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s", "--server", "--token",
	"--as", "--as-group", "--as-uid", "--request-timeout", "--cache-dir", "--certificate-authority",
	"--client-certificate", "--client-key", "--tls-server-name", "-v", "--v",
}

// kubectlSubcommand returns the index of the (sub)command among args: the
// first that is neither a flag nor the value of a flag given apart, or -1.
// `kubectl get configmap logs` then names no running-Pod verb.
func kubectlSubcommand(args []string) int {
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case slices.Contains(kubectlValueFlags, w):
			i++
		case strings.HasPrefix(w, "-"):
		default:
			return i
		}
	}
	return -1
}

// waitsForRunning reports whether a kubectl wait argument waits for a
// condition that needs a running Pod.
func waitsForRunning(arg string) bool {
	a := strings.ToLower(strings.Trim(arg, `'"`))
	return a == "--for=condition=ready" || a == "--for=condition=available" ||
		strings.HasPrefix(a, "--for=condition=ready=") || strings.HasPrefix(a, "--for=condition=available=")
}
