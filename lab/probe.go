package lab

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
)

// alternatives validates a step's alternative solutions.
func (v *validator) alternatives(p string, s *Step) {
	names, mutants := map[string]string{}, map[string]string{}
	for i, a := range s.Alternatives {
		ap := joinIndex(p+".alternatives", i)
		v.uniqueName(ap+".name", "alternative", a.Name, names)
		switch {
		case a.Mutant != "":
			v.mutantAlternative(ap, a, mutants)
		case strings.TrimSpace(a.Script) == "":
			v.add(ap+".script", "missing; write the bash script of this other correct solution, or name the mutant `labctl test --mutate` reported (mutant, with why)")
		case strings.TrimSpace(a.Why) != "":
			v.add(ap+".why", "only an alternative with a mutant takes why; drop it, or say it in description")
		}
	}
}

// mutantAlternative validates an alternative that declares a mutant of the
// solve right; mutants maps the mutant ids seen to their paths.
func (v *validator) mutantAlternative(ap string, a Alternative, mutants map[string]string) {
	if strings.TrimSpace(a.Script) != "" {
		v.add(ap+".script", "an alternative with a mutant has no script: labctl test --mutate makes the mutant itself; drop the script, or the mutant")
	}
	if strings.TrimSpace(a.Why) == "" {
		v.add(ap+".why", "missing; say why mutant %q is a right answer, not a check the step lacks", a.Mutant)
	}
	ref, change, ok := strings.Cut(a.Mutant, ": ")
	if kind, name, _ := strings.Cut(ref, " "); !ok || kind == "" || name == "" || strings.TrimSpace(change) == "" {
		v.add(ap+".mutant", "%q is not a mutant id; copy it as labctl test --mutate reports it, e.g. \"NetworkPolicy shop/api-ingress: spec.podSelector → {}\"", a.Mutant)
	}
	if prev, dup := mutants[a.Mutant]; dup {
		v.add(ap+".mutant", "mutant %q is declared already at %s; declare it once", a.Mutant, prev)
	}
	mutants[a.Mutant] = ap + ".mutant"
}

// probe validates a step's probe and the checks that need one; checks maps
// the step's check names to their paths.
func (v *validator) probe(p string, s *Step, checks map[string]string) {
	if s.Probe == nil {
		for i, c := range s.Checks {
			if c.File != nil && c.File.WrittenDuringProbe {
				v.add(joinIndex(p+".checks", i)+".file.writtenDuringProbe",
					"step %q has no probe, so no run can write the file; add a probe to the step or remove writtenDuringProbe", s.ID)
			}
			if c.Audit != nil && c.Audit.DuringProbe {
				v.add(joinIndex(p+".checks", i)+".audit.duringProbe",
					"step %q has no probe, so no run can make the request; add a probe to the step or remove duringProbe", s.ID)
			}
		}
		return
	}
	pp := p + ".probe"
	if strings.TrimSpace(s.Probe.Run) == "" {
		v.add(pp+".run", "missing; give the command the probe runs in the sandbox as the learner, e.g. /root/sync.sh")
	}
	if s.Probe.Timeout.Duration <= 0 {
		v.add(pp+".timeout", "%s must be positive", s.Probe.Timeout.Duration)
	}
	if first, ok := checks[ProbeResult]; ok {
		v.add(first, "a step with a probe reports the probe's run as %q; give this check another name", ProbeResult)
	}
	for i, b := range s.Probe.Broken {
		bp := joinIndex(pp+".broken", i)
		if strings.TrimSpace(b.Description) == "" {
			v.add(bp+".description", "missing; say what the setup breaks, e.g. \"web has no Pod to answer\" (the learner reads it when their run passes there)")
		}
		if strings.TrimSpace(b.Setup) == "" {
			v.add(bp+".setup", "missing; write the bash script that breaks what the run tests")
		}
		if strings.TrimSpace(b.Restore) == "" {
			v.add(bp+".restore", "missing; write the bash script that puts back what the setup broke")
		}
	}
	named := map[string]bool{}
	for i, name := range s.Probe.Needs {
		np := joinIndex(pp+".needs", i)
		switch {
		case named[name]:
			v.add(np, "check %q is named twice", name)
		case checks[name] == "":
			v.add(np, "step %q has no check %q; it has %s", s.ID, name, listNames(checks))
		}
		named[name] = true
	}
}

// ProbeSummary describes, one line each, the probes of l and what they run
// with which identity, for labctl lint -v.
func (l *Lab) ProbeSummary() []string {
	var out []string
	for _, s := range l.Steps {
		pr := s.Probe
		if pr == nil {
			continue
		}
		line := fmt.Sprintf("step %s: runs %q in the sandbox as the learner (deadline %s)", s.ID, strings.TrimSpace(pr.Run), pr.Timeout.Duration)
		var admin []string
		if strings.TrimSpace(pr.Setup) != "" {
			admin = append(admin, "setup before it")
		}
		if strings.TrimSpace(pr.Restore) != "" {
			admin = append(admin, "restore after the checks")
		}
		if len(admin) > 0 {
			line += "; " + strings.Join(admin, " and ") + " in a probe container, admin of the lab's namespaces"
		}
		if len(pr.Needs) > 0 {
			line += "; only when these checks pass: " + strings.Join(pr.Needs, ", ")
		}
		cmd, negated := pr.Negated()
		for _, b := range pr.Broken {
			if negated {
				line += fmt.Sprintf("; first, in a probe container, sets the cluster up (%s) and requires %q to exit 0 there", strings.TrimSpace(b.Description), cmd)
				continue
			}
			line += fmt.Sprintf("; first, in a probe container, breaks the cluster (%s) and requires the run to exit non-zero there", strings.TrimSpace(b.Description))
		}
		out = append(out, line)
	}
	return out
}

// SplitReachTarget splits a reach check's to, host:port, and checks it: a
// DNS name or an IP address, and a port from 1 to 65535.
func SplitReachTarget(to string) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(to)
	if err != nil || h == "" {
		return "", 0, fmt.Errorf("%q is not host:port, e.g. api.shop:8080", to)
	}
	if net.ParseIP(h) == nil && len(k8svalidation.IsDNS1123Subdomain(h)) > 0 {
		return "", 0, fmt.Errorf("%q is not a DNS name or an IP address", h)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("%q is not a port from 1 to 65535", p)
	}
	return h, n, nil
}

// Negated says whether Run is a negated command ("! CMD", a command that
// must fail), and gives CMD; its broken worlds are then worlds where CMD
// must succeed.
func (p *Probe) Negated() (cmd string, ok bool) {
	run := strings.TrimSpace(p.Run)
	rest, ok := strings.CutPrefix(run, "!")
	if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t') {
		return run, false
	}
	return strings.TrimSpace(rest), true
}
