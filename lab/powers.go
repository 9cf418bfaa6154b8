package lab

import (
	"fmt"
	"slices"
	"strings"
)

// Powers is what a lab may do on the machine it runs on, and what it lets
// the learner do, read from its lab file: what `labctl install` and
// `labctl lint -v` show to the person about to run a stranger's lab.
type Powers struct {
	// NoCluster is set for a lab with no cluster (cluster.provider: none):
	// it has no namespaces, rules nor node image.
	NoCluster bool
	// PodSecurity is the Pod Security level of the lab's namespaces.
	PodSecurity string
	// Namespaces are the lab's namespaces: the learner is admin there
	// (AdminInNamespaces), or has the lab's NamespaceRules.
	Namespaces        []string
	AdminInNamespaces bool
	NamespaceRules    []PolicyRule
	// ClusterRules are granted to the learner cluster-wide; ClusterWrite
	// says that one of them writes (a verb other than get, list and watch,
	// or *) or reads what leads to more (see Risks).
	ClusterRules []PolicyRule
	ClusterWrite bool
	// ClusterView names the kinds the learner reads cluster-wide
	// (access.clusterView), none of which holds a secret.
	ClusterView []string
	// AdminScripts name the probe scripts, the lab's, that run in a
	// container of their own with the probe's identity (admin of the lab's
	// namespaces, nothing cluster-wide), e.g. "step sync: probe setup,
	// probe restore".
	AdminScripts []string
	// SandboxSetups are the ids of the steps whose setup script runs as
	// root in the sandbox.
	SandboxSetups []string
	// CommandChecks name the command checks, e.g. "step build: compiles":
	// programs of the sandbox image the grader runs with its reading of
	// the learner's home and the grader's network.
	CommandChecks []string
	// Builds are the workload images labctl builds from the lab's
	// directories; Loads the ones it takes from the host's Docker engine.
	Builds []Image
	Loads  []Image
	// NodeAccess is set when the learner is root on the cluster's nodes
	// (cluster.nodeAccess).
	NodeAccess bool
	// NodeImage and SandboxImage are the lab's own images, "" for
	// labctl's.
	NodeImage, SandboxImage string
}

// Risk is one thing a lab asks for that reaches beyond its own containers
// and cluster, to the host: the learner (or the lab's scripts) could
// become root on the cluster's node, which is a privileged container, and
// from there on the machine.
type Risk struct {
	// Path names the field, e.g. cluster.podSecurity.
	Path string
	// Value is what the field asks for, e.g. privileged.
	Value string
	// Why says what it lets someone do.
	Why string
}

// String is "PATH: VALUE (WHY)".
func (r Risk) String() string { return fmt.Sprintf("%s: %s (%s)", r.Path, r.Value, r.Why) }

// Key identifies the risk for a record of consent: path and value.
func (r Risk) Key() string { return r.Path + ": " + r.Value }

// Powers summarises what l may do (see Powers).
func (l *Lab) Powers() Powers {
	p := Powers{
		NoCluster:         !l.HasCluster(),
		PodSecurity:       l.Cluster.PodSecurity,
		Namespaces:        l.Cluster.Namespaces,
		AdminInNamespaces: len(l.Access.Rules) == 0,
		NamespaceRules:    l.Access.Rules,
		ClusterRules:      l.Access.ClusterRules,
		NodeImage:         l.Cluster.NodeImage,
		NodeAccess:        l.Cluster.NodeAccess,
		SandboxImage:      l.Sandbox.Image,
	}
	for _, k := range l.LearnerClusterView() {
		p.ClusterView = append(p.ClusterView, k.Name)
	}
	for _, r := range l.Access.ClusterRules {
		if clusterRuleReaches(r) != "" {
			p.ClusterWrite = true
		}
	}
	for _, s := range l.Steps {
		if strings.TrimSpace(s.Setup) != "" {
			p.SandboxSetups = append(p.SandboxSetups, s.ID)
		}
		for _, c := range s.Checks {
			if c.Command != nil {
				p.CommandChecks = append(p.CommandChecks, "step "+s.ID+": "+c.Name)
			}
		}
		if s.Probe == nil {
			continue
		}
		var scripts []string
		if strings.TrimSpace(s.Probe.Setup) != "" {
			scripts = append(scripts, "probe setup")
		}
		if strings.TrimSpace(s.Probe.Restore) != "" {
			scripts = append(scripts, "probe restore")
		}
		if len(s.Probe.Broken) > 0 {
			scripts = append(scripts, "probe worlds' setup and restore")
		}
		if len(scripts) > 0 {
			p.AdminScripts = append(p.AdminScripts, "step "+s.ID+": "+strings.Join(scripts, ", "))
		}
	}
	for _, im := range l.Cluster.Images {
		if im.Build != "" {
			p.Builds = append(p.Builds, im)
		} else {
			p.Loads = append(p.Loads, im)
		}
	}
	return p
}

// Risks are what l asks for that reaches the host, each of which
// `labctl install` and `labctl up` refuse without the user's consent:
//
//   - cluster.podSecurity: privileged (privileged, hostPID and hostPath
//     Pods: root on the node);
//   - an access.clusterRules rule that writes (a verb other than get,
//     list and watch), names * as a verb or resource, or reads Secrets or
//     a proxy, exec, attach or token subresource, cluster-wide;
//   - an access.rules rule that writes namespaces (the learner relabels
//     the lab's namespace privileged);
//   - cluster.nodeAccess: true (root on the nodes);
//   - cluster.nodeImage or sandbox.image: an image of the lab's own (not
//     labctl/*), and
//     the node runs privileged.
func (l *Lab) Risks() []Risk {
	var rs []Risk
	if l.Cluster.PodSecurity == PodSecurityPrivileged {
		rs = append(rs, Risk{"cluster.podSecurity", PodSecurityPrivileged,
			"the learner may run privileged, hostPID and hostPath Pods: root on the cluster's node and on this machine"})
	}
	for i, r := range l.Access.ClusterRules {
		if why := clusterRuleReaches(r); why != "" {
			rs = append(rs, Risk{joinIndex("access.clusterRules", i), describeRule(r),
				"cluster-wide, " + why + ": the learner may reach kube-system and the node"})
		}
	}
	for i, r := range l.Access.Rules {
		if writesNamespaces(r) {
			rs = append(rs, Risk{joinIndex("access.rules", i), describeRule(r),
				"the learner may relabel the lab's namespaces privileged: root on the cluster's node"})
		}
	}
	if l.Cluster.NodeAccess {
		rs = append(rs, Risk{"cluster.nodeAccess", "true",
			"the learner is root on the cluster's nodes, which are privileged containers: root on this machine"})
	}
	// One of labctl's own images (labctl/*) is no risk: labctl built it,
	// and no bundle may bring one.
	if l.Cluster.NodeImage != "" && !LabctlImage(l.Cluster.NodeImage) {
		rs = append(rs, Risk{"cluster.nodeImage", l.Cluster.NodeImage,
			"the lab's own node image, which runs as a privileged container: root on this machine"})
	}
	if l.Sandbox.Image != "" && !LabctlImage(l.Sandbox.Image) {
		rs = append(rs, Risk{"sandbox.image", l.Sandbox.Image,
			"the lab's own sandbox image instead of labctl's, run with the learner's home and the checks' files"})
	}
	return rs
}

// readOnlyVerbs are the verbs that only read.
var readOnlyVerbs = []string{"get", "list", "watch"}

// sensitiveReads are resources whose read alone leads beyond them: Secrets
// hold credentials, and proxy, exec, attach and token subresources run
// commands in Pods or the node, or issue credentials.
var sensitiveReads = []string{"secrets", "nodes/proxy", "pods/exec", "pods/attach", "pods/proxy", "services/proxy", "serviceaccounts/token", "pods/portforward"}

// clusterRuleReaches says why a cluster-wide rule reaches beyond reading
// ("" when it does not): a write verb, *, or a sensitive read.
func clusterRuleReaches(r PolicyRule) string {
	for _, v := range r.Verbs {
		switch {
		case v == "*":
			return "every verb"
		case !slices.Contains(readOnlyVerbs, v):
			return "it writes (" + v + ")"
		}
	}
	for _, res := range r.Resources {
		switch {
		case res == "*" || strings.HasSuffix(res, "/*"):
			return "every resource (Secrets included)"
		case slices.Contains(sensitiveReads, res):
			return "it reads " + res
		}
	}
	return ""
}

// describeRule writes a rule as "VERBS RESOURCES (GROUPS)", e.g. "create,
// delete pods (core)".
func describeRule(r PolicyRule) string {
	groups := make([]string, len(r.APIGroups))
	for i, g := range r.APIGroups {
		if g == "" {
			g = "core"
		}
		groups[i] = g
	}
	s := strings.Join(r.Verbs, ", ") + " " + strings.Join(r.Resources, ", ")
	if len(groups) > 0 {
		s += " (" + strings.Join(groups, ", ") + ")"
	}
	return s
}

// Lines writes the powers one line each, for a terminal (the values as
// the lab wrote them: escape them before they reach one).
func (p Powers) Lines() []string {
	none := func(s []string, empty string) string {
		if len(s) == 0 {
			return empty
		}
		return strings.Join(s, "; ")
	}
	ns := "none"
	if len(p.Namespaces) > 0 {
		ns = strings.Join(p.Namespaces, ", ")
		if p.AdminInNamespaces {
			ns += " (the learner is admin there)"
		} else {
			ns += " (the learner has the lab's rules there: " + rules(p.NamespaceRules) + ")"
		}
	}
	cluster := "none"
	if len(p.ClusterRules) > 0 {
		cluster = rules(p.ClusterRules)
		if p.ClusterWrite {
			cluster += " (beyond reading)"
		} else {
			cluster += " (reading only)"
		}
	}
	var builds, loads []string
	for _, im := range p.Builds {
		builds = append(builds, im.Name+" from "+im.Build)
	}
	for _, im := range p.Loads {
		s := im.Name
		if im.Optional {
			s += " (optional)"
		}
		loads = append(loads, s)
	}
	own := func(ref string) string {
		switch {
		case ref == "":
			return "labctl's"
		case LabctlImage(ref):
			return "labctl's, " + ref
		}
		return "the lab's own, " + ref
	}
	lines := []string{
		"Pod Security in its namespaces: " + p.PodSecurity,
		"namespaces: " + ns,
		"cluster-wide rules for the learner: " + cluster,
		"cluster-wide reading for the learner (nothing that holds a secret): " + none(p.ClusterView, "none"),
		"probe scripts in a container of the sandbox image, admin of the lab's namespaces, nothing cluster-wide: " + none(p.AdminScripts, "none"),
		"setup scripts as root in the sandbox: " + none(prefixAll("step ", p.SandboxSetups), "none"),
		"command checks in the grader (programs of the sandbox image, as a user of their own, that read every file of the learner's home, run what the learner wrote when they run it, and reach the cluster's network): " + none(p.CommandChecks, "none"),
		"workload images built from the lab's directory: " + none(builds, "none"),
		"workload images taken from this machine's Docker engine: " + none(loads, "none"),
		"node image: " + own(p.NodeImage) + "; sandbox image: " + own(p.SandboxImage),
	}
	if p.NodeAccess {
		lines = append(lines, "the learner's access to the nodes: root on each, from the sandbox (node NAME), and so root on this machine")
	}
	if p.NoCluster {
		lines[0] = "cluster: none (the sandbox and the grader only, on no network)"
		lines = append(lines[:1], lines[4:]...)
		lines[len(lines)-1] = "sandbox image: " + own(p.SandboxImage)
	}
	return lines
}

func rules(rs []PolicyRule) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = describeRule(r)
	}
	return strings.Join(out, "; ")
}

func prefixAll(prefix string, s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = prefix + v
	}
	return out
}
