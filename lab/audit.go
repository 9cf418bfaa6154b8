package lab

import "strings"

// AuditCheck asserts what the learner's identity did in the cluster during
// the step, as the API server's audit log recorded it: the write requests
// (create, update, patch, delete) the learner made in the lab's namespaces
// since the step became current, that succeeded and were not dry runs.
// It passes when some such request matches every set field, or, with
// Absent, when none does.
type AuditCheck struct {
	AuditSelector `yaml:",inline" json:",inline"`
	// Request asserts on a field of the request's body: the object sent,
	// or the patch (for a scale subresource, a Scale object or a patch of
	// one: spec.replicas in both).
	Request *RequestAssert `yaml:"request" json:"request,omitempty"`
	// Absent requires that no request in the step matches.
	Absent bool `yaml:"absent" json:"absent,omitempty"`
	// After requires the matched request to come after the last request
	// of the whole log matching this selector; with Absent, only requests
	// after it count. When nothing matches After, a required request
	// fails and an absent one counts every request of the step.
	After *AuditSelector `yaml:"after" json:"after,omitempty"`
	// DuringProbe narrows the window to the step's probe: only requests
	// made since the probe started count, that is those of the learner's
	// artifact the probe ran. Without a probe in the round the check
	// fails. Only in a step with a probe.
	DuringProbe bool `yaml:"duringProbe" json:"duringProbe,omitempty"`
	// AfterCommit counts only requests the API server finished after the
	// file, as the newest commit of HEAD's history that changed it holds
	// it, was first committed in the step (a commit whose message was
	// amended or that was rebased afterwards counts from the first): the
	// order "commit, then apply", judged from evidence the learner cannot
	// set (the kernel's change time of the commit's object file and the
	// API server's record), never from git's dates.
	AfterCommit *CommitOf `yaml:"afterCommit" json:"afterCommit,omitempty"`
}

// CommitOf names the newest commit of a repository's HEAD that changed a
// file, found the way `git log -- FILE` finds it.
type CommitOf struct {
	// Repo is the repository's work tree (or bare directory), an absolute
	// path in the sandbox.
	Repo string `yaml:"repo" json:"repo"`
	// Touching is the file, relative to the repository's root.
	Touching string `yaml:"touching" json:"touching"`
}

// AuditSelector picks requests of the audit log; every set field must
// match.
type AuditSelector struct {
	// Verbs are any of create, update, patch, delete and apply (a kubectl
	// apply, client-side or server-side: a create or patch whose field
	// manager is kubectl's apply). Empty means any write.
	Verbs []string `yaml:"verbs" json:"verbs,omitempty"`
	// Resource is the plural resource name, e.g. deployments.
	Resource string `yaml:"resource" json:"resource,omitempty"`
	// Subresource is e.g. scale or status; empty means the object itself.
	Subresource string `yaml:"subresource" json:"subresource,omitempty"`
	// Namespace and Name of the object written.
	Namespace string `yaml:"namespace" json:"namespace,omitempty"`
	Name      string `yaml:"name" json:"name,omitempty"`
	// As (namespace/name) picks only the requests the learner made as
	// that ServiceAccount, impersonating it (kubectl --as=system:serviceaccount:NS:NAME),
	// which the learner's own admin role allows in the lab's namespaces.
	// Empty picks every request of the learner's, impersonated or not.
	As string `yaml:"as" json:"as,omitempty"`
	// DryRun: true picks only dry runs, which change nothing: the patches
	// kubectl diff sends (and apply --dry-run=server), the evidence that the
	// learner compared the cluster with their files. False (the default)
	// picks only requests that took effect.
	DryRun bool `yaml:"dryRun" json:"dryRun,omitempty"`
}

// RequestAssert asserts on a field of a request's body.
type RequestAssert struct {
	Path   string `yaml:"path" json:"path"`
	Assert `yaml:",inline" json:",inline"`
}

// AuditVerbs are the verbs an audit check may name.
var AuditVerbs = []string{"create", "update", "patch", "delete", "apply"}

func (v *validator) auditCheck(p string, a *AuditCheck) {
	v.auditSelector(p, &a.AuditSelector)
	if a.Resource == "" {
		v.add(p+".resource", "missing; name the plural resource written, e.g. deployments")
	}
	if a.After != nil {
		v.auditSelector(p+".after", a.After)
		if a.After.Resource == "" {
			v.add(p+".after.resource", "missing; name the plural resource of the earlier request, e.g. deployments")
		}
	}
	if c := a.AfterCommit; c != nil {
		v.absolute(p+".afterCommit.repo", c.Repo)
		if strings.HasPrefix(c.Repo, "/") && !v.lab.GraderSees(c.Repo) {
			v.add(p+".afterCommit.repo", "%s is neither in the learner's home (%s) nor in the lab's fixtures (%s): afterCommit tells when a commit was written from its object file's change time, "+
				"which only a repository the grader reads itself has (a git check may read a repository anywhere in the sandbox, from a copy); keep the repository under %s",
				c.Repo, HomeDir, v.lab.Sandbox.Fixtures, HomeDir)
		}
		if c.Touching == "" {
			v.add(p+".afterCommit.touching", "missing; name the file whose commit the request must follow, e.g. apps/web/deployment.yaml")
		} else if err := checkRepoFile(c.Touching); err != nil {
			v.add(p+".afterCommit.touching", "%v", err)
		}
	}
	if r := a.Request; r != nil {
		// The body's format is JSON; the rest is a field assertion's.
		v.fieldAssert(p+".request", &FieldAssert{Path: r.Path, Assert: r.Assert})
	}
}

func (v *validator) auditSelector(p string, s *AuditSelector) {
	for i, verb := range s.Verbs {
		v.enum(joinIndex(p+".verbs", i), verb, AuditVerbs...)
	}
	for _, f := range []struct{ name, value string }{{"resource", s.Resource}, {"subresource", s.Subresource}} {
		if f.value != "" && !isDNSLabel(f.value, maxDNSLabelLen) {
			v.add(p+"."+f.name, "%q is not a resource name; write it in lower case and plural, e.g. deployments", f.value)
		}
	}
	if s.Namespace != "" && !isDNSLabel(s.Namespace, maxDNSLabelLen) {
		v.add(p+".namespace", "%q is not a DNS label", s.Namespace)
	}
	if s.As != "" {
		if ns, name, ok := strings.Cut(s.As, "/"); !ok || !isDNSLabel(ns, maxDNSLabelLen) || name == "" || strings.Contains(name, "/") {
			v.add(p+".as", "%q is not a ServiceAccount's namespace/name, e.g. ci/deployer", s.As)
		}
	}
}
