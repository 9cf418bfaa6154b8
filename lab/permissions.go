package lab

import (
	"fmt"
	"slices"
	"strings"
	"time"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
)

// PermissionsCheck judges what identities may do in the lab's namespaces
// as a whole. Its subjects are those it names, every subject a RoleBinding
// in Namespaces binds (a user, a group, a service account; labctl's own
// accounts aside) and every service account of Namespaces, or group
// system:serviceaccounts:NAMESPACE of one, that a ClusterRoleBinding
// binds. For each, the grader asks the API server (SubjectAccessReviews,
// a service account with its groups) about every verb (get, list, watch,
// create, update, patch, delete, deletecollection and Verbs) on every
// resource (Resources, secrets, configmaps, pods, pods/exec, roles and
// rolebindings) in every namespace, naming no object and naming each
// object a bound role's rule limits itself to (resourceNames) or a must
// or may entry names. The answers must be what Subjects state: a yes that
// no must or may entry covers fails the check (least privilege), as does a
// no to a must entry; the failure names the subject, the verb, the
// resource, the object, the namespace and the binding and role that grant
// it.
type PermissionsCheck struct {
	// Namespaces asked about; default the lab's namespaces.
	Namespaces []string `yaml:"namespaces" json:"namespaces,omitempty"`
	// Resources asked about beside the ones always asked about (secrets,
	// configmaps, pods, pods/exec, roles and rolebindings): resource,
	// resource.group or resource/subresource, e.g. deployments.apps or
	// pods/log.
	Resources []string `yaml:"resources" json:"resources,omitempty"`
	// Verbs asked about beside get, list, watch, create, update, patch,
	// delete and deletecollection, e.g. bind or escalate.
	Verbs []string `yaml:"verbs" json:"verbs,omitempty"`
	// Subjects are the identities the lab states the rights of. A subject
	// bound in Namespaces that is not among them may do nothing of the
	// universe.
	Subjects []PermissionSubject `yaml:"subjects" json:"subjects"`
}

// PermissionSubject is one identity and what it may do. Exactly one of
// ServiceAccount, User and Group is set.
type PermissionSubject struct {
	// ServiceAccount is namespace/name; it is asked about with the groups
	// the API server gives its tokens (system:serviceaccounts,
	// system:serviceaccounts:NAMESPACE, system:authenticated), so a binding
	// to one of those groups counts for it.
	ServiceAccount string `yaml:"serviceAccount" json:"serviceAccount,omitempty"`
	// User is a user name; Groups are its groups beside system:authenticated.
	User   string   `yaml:"user" json:"user,omitempty"`
	Groups []string `yaml:"groups" json:"groups,omitempty"`
	// Group is a group, asked about as a member of it with no other
	// group (beside system:authenticated).
	Group string `yaml:"group" json:"group,omitempty"`
	// Must are rights the subject must have.
	Must []Permission `yaml:"must" json:"must,omitempty"`
	// May are rights the subject may have or not. Anything of the universe
	// neither Must nor May covers, the subject must not have.
	May []Permission `yaml:"may" json:"may,omitempty"`
}

// Permission is a set of rights: every verb on every resource in every
// namespace, on the named objects.
type Permission struct {
	Verbs []string `yaml:"verbs" json:"verbs"`
	// Resources are written like PermissionsCheck.Resources, each one the
	// check asks about.
	Resources []string `yaml:"resources" json:"resources"`
	// Namespaces default to the check's.
	Namespaces []string `yaml:"namespaces" json:"namespaces,omitempty"`
	// Names limit the rights to these objects; empty means every object,
	// and the requests that name none (create, list, watch).
	Names []string `yaml:"names" json:"names,omitempty"`
}

// PermissionsVerbs are the verbs a permissions check always asks about.
var PermissionsVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// PermissionsSensitive are the resources a permissions check always asks
// about: what reads credentials, runs code or grants rights.
var PermissionsSensitive = []string{"secrets", "configmaps", "pods", "pods/exec",
	"roles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io"}

// DefaultPermissionsTimeout is a permissions check's default timeout: it
// asks the API server hundreds of questions.
const DefaultPermissionsTimeout = 30 * time.Second

// Resource is a resource as a permissions check writes it, parsed.
type Resource struct {
	Group, Resource, Subresource string
}

// ParseResource reads resource, resource.group, resource/subresource or
// resource.group/subresource.
func ParseResource(s string) (Resource, error) {
	main, sub, hasSub := strings.Cut(s, "/")
	res, group, _ := strings.Cut(main, ".")
	if res == "" || strings.ContainsAny(s, " *") || (hasSub && (sub == "" || strings.Contains(sub, "/"))) ||
		len(k8svalidation.IsDNS1123Label(res)) > 0 || (group != "" && len(k8svalidation.IsDNS1123Subdomain(group)) > 0) {
		return Resource{}, fmt.Errorf("%q is not a resource; write resource, resource.group or resource/subresource, e.g. deployments.apps or pods/exec", s)
	}
	return Resource{Group: group, Resource: res, Subresource: sub}, nil
}

// String writes r as ParseResource reads it.
func (r Resource) String() string {
	s := r.Resource
	if r.Group != "" {
		s += "." + r.Group
	}
	if r.Subresource != "" {
		s += "/" + r.Subresource
	}
	return s
}

// Universe returns the resources p asks about, parsed, each once, in order:
// the check's own, then PermissionsSensitive.
func (p *PermissionsCheck) Universe() []Resource {
	var out []Resource
	for _, s := range append(slices.Clone(p.Resources), PermissionsSensitive...) {
		if r, err := ParseResource(s); err == nil && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// AllVerbs returns the verbs p asks about, each once.
func (p *PermissionsCheck) AllVerbs() []string {
	out := slices.Clone(PermissionsVerbs)
	for _, v := range p.Verbs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func (v *validator) permissionsCheck(p string, c *PermissionsCheck) {
	if v.labCluster != nil {
		for i, ns := range c.Namespaces {
			if !slices.Contains(v.labCluster.Namespaces, ns) {
				v.add(joinIndex(p+".namespaces", i), "%q is not one of the lab's namespaces (cluster.namespaces: %s); a permissions check asks about those", ns, strings.Join(v.labCluster.Namespaces, ", "))
			}
		}
	}
	if len(c.Namespaces) == 0 {
		v.add(p+".namespaces", "missing; name the namespaces asked about (the default is the lab's namespaces, and the lab has none)")
	}
	for i, s := range c.Resources {
		if _, err := ParseResource(s); err != nil {
			v.add(joinIndex(p+".resources", i), "%v", err)
		}
	}
	for i, verb := range c.Verbs {
		if verb == "" || verb == "*" || strings.ContainsAny(verb, " /") {
			v.add(joinIndex(p+".verbs", i), "%q is not a verb; name one such as bind, escalate or impersonate", verb)
		}
	}
	if len(c.Subjects) == 0 {
		v.add(p+".subjects", "missing; name at least one subject and what it must and may do (a subject with neither may do nothing)")
	}
	universe, verbs := c.Universe(), c.AllVerbs()
	seen := map[string]bool{}
	for i := range c.Subjects {
		s := &c.Subjects[i]
		sp := joinIndex(p+".subjects", i)
		n := 0
		for _, set := range []bool{s.ServiceAccount != "", s.User != "", s.Group != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			v.add(sp, "name exactly one of serviceAccount (namespace/name), user and group")
		}
		if s.ServiceAccount != "" {
			ns, name, ok := strings.Cut(s.ServiceAccount, "/")
			if !ok || !isDNSLabel(ns, maxDNSLabelLen) || len(k8svalidation.IsDNS1123Subdomain(name)) > 0 {
				v.add(sp+".serviceAccount", "%q is not namespace/name, e.g. ci/deployer", s.ServiceAccount)
			}
		}
		if len(s.Groups) > 0 && s.User == "" {
			v.add(sp+".groups", "groups go with user only; a service account's groups are the API server's own, and a group subject is asked about alone")
		}
		key := s.ServiceAccount + "\x00" + s.User + "\x00" + strings.Join(s.Groups, ",") + "\x00" + s.Group
		if n == 1 && seen[key] {
			v.add(sp, "this subject is already stated; state its rights once")
		}
		seen[key] = true
		for _, l := range []struct {
			field string
			perms []Permission
		}{{"must", s.Must}, {"may", s.May}} {
			for j := range l.perms {
				v.permission(joinIndex(sp+"."+l.field, j), &l.perms[j], c, universe, verbs)
			}
		}
	}
}

func (v *validator) permission(p string, perm *Permission, c *PermissionsCheck, universe []Resource, verbs []string) {
	if len(perm.Verbs) == 0 {
		v.add(p+".verbs", "missing; name the verbs, e.g. [get, list, watch]")
	}
	for i, verb := range perm.Verbs {
		if !slices.Contains(verbs, verb) {
			v.add(joinIndex(p+".verbs", i), "%q is not asked about (%s); add it to the check's verbs", verb, strings.Join(verbs, ", "))
		}
	}
	if len(perm.Resources) == 0 {
		v.add(p+".resources", "missing; name the resources, e.g. [deployments.apps]")
	}
	for i, s := range perm.Resources {
		r, err := ParseResource(s)
		switch {
		case err != nil:
			v.add(joinIndex(p+".resources", i), "%v", err)
		case !slices.Contains(universe, r):
			v.add(joinIndex(p+".resources", i), "%s is not asked about; add it to the check's resources", s)
		}
	}
	for i, ns := range perm.Namespaces {
		if !slices.Contains(c.Namespaces, ns) {
			v.add(joinIndex(p+".namespaces", i), "%q is not one of the check's namespaces (%s)", ns, strings.Join(c.Namespaces, ", "))
		}
	}
	for i, name := range perm.Names {
		if name == "" || strings.Contains(name, "/") {
			v.add(joinIndex(p+".names", i), "%q is not an object name", name)
		}
	}
}
