package lab

import (
	"cmp"
	"fmt"
	"slices"
)

// KubeRead is one cluster object a lab's checks read: the object of a kube
// check, or of a kube: reference anywhere in a check; or, with List, the
// objects of a kind a kube check's selector lists. The grader's credentials
// may read exactly these. Namespace is empty for a cluster-scoped object.
type KubeRead struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// List reads every object of Kind (Name is empty): a check's selector.
	List bool
}

// String writes the read as "apps/v1 Deployment gitops-lab/web", or
// "v1 Namespace gitops-lab" when no namespace is given, and a list as
// "list apps/v1 Deployment in gitops-lab".
func (r KubeRead) String() string {
	switch {
	case r.List && r.Namespace == "":
		return fmt.Sprintf("list %s %s", r.APIVersion, r.Kind)
	case r.List:
		return fmt.Sprintf("list %s %s in %s", r.APIVersion, r.Kind, r.Namespace)
	case r.Namespace == "":
		return fmt.Sprintf("%s %s %s", r.APIVersion, r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s %s/%s", r.APIVersion, r.Kind, r.Namespace, r.Name)
}

// RBACAPIVersion is the API version of Roles and bindings.
const RBACAPIVersion = "rbac.authorization.k8s.io/v1"

// AsksAccess reports whether a check of the lab asks the API server about
// an identity's access (an access check), which the grader may then do.
func (l *Lab) AsksAccess() bool {
	asks := false
	for i := range l.Steps {
		l.Steps[i].EveryCheck(func(c *Check) { asks = asks || c.Access != nil || c.Permissions != nil })
	}
	return asks
}

// ReachNamespaces returns the namespaces the lab's reach and matrix
// checks start their Pods in, each once, sorted; none when it has neither.
func (l *Lab) ReachNamespaces() []string {
	var out []string
	for i := range l.Steps {
		l.Steps[i].EveryCheck(func(c *Check) {
			if r := c.Reach; r != nil && !slices.Contains(out, r.From.Namespace) {
				out = append(out, r.From.Namespace)
			}
			if m := c.Matrix; m != nil {
				for _, s := range m.Sources {
					if !slices.Contains(out, s.Namespace) {
						out = append(out, s.Namespace)
					}
				}
			}
		})
	}
	slices.Sort(out)
	return out
}

// KubeReads returns every object the lab's checks read from the cluster,
// and every kind a selector lists, each once, sorted by API version, kind,
// namespace and name (a list before the named objects). References that do
// not parse are skipped (Validate reports them).
func (l *Lab) KubeReads() []KubeRead {
	seen := map[KubeRead]bool{}
	var out []KubeRead
	add := func(r KubeRead) {
		if (r.Name == "") == !r.List || seen[r] {
			return
		}
		seen[r] = true
		out = append(out, r)
	}
	for i := range l.Steps {
		l.Steps[i].EveryCheck(func(c *Check) {
			if p := c.Permissions; p != nil {
				// The bindings and roles that name the subjects and the
				// objects a permissions check asks about.
				for _, ns := range p.Namespaces {
					add(KubeRead{APIVersion: RBACAPIVersion, Kind: "RoleBinding", Namespace: ns, List: true})
					add(KubeRead{APIVersion: RBACAPIVersion, Kind: "Role", Namespace: ns, List: true})
				}
				add(KubeRead{APIVersion: RBACAPIVersion, Kind: "ClusterRoleBinding", List: true})
				add(KubeRead{APIVersion: RBACAPIVersion, Kind: "ClusterRole", List: true})
			}
			if k := c.Kube; k != nil {
				add(KubeRead{APIVersion: k.APIVersion, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, List: k.Selector != nil})
			}
			for _, v := range c.values() {
				if v == nil || !v.IsRef() {
					continue
				}
				ref, err := ParseRef(v.Ref)
				if err != nil || ref.Source != RefKube {
					continue
				}
				add(KubeRead{APIVersion: ref.APIVersion, Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name})
			}
		})
	}
	slices.SortFunc(out, func(a, b KubeRead) int {
		return cmp.Or(cmp.Compare(a.APIVersion, b.APIVersion), cmp.Compare(a.Kind, b.Kind),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// values returns every value of a check that may hold a reference.
func (c *Check) values() []*Value {
	var fields []*FieldAssert
	var out []*Value
	switch {
	case c.File != nil:
		out = append(out, c.File.Equals)
		fields = append(fields, c.File.Field)
	case c.Git != nil:
		if c.Git.Field != nil {
			fields = append(fields, &c.Git.Field.FieldAssert)
		}
	case c.Kube != nil:
		fields = append(fields, c.Kube.Field)
	case c.Audit != nil && c.Audit.Request != nil:
		fields = append(fields, &FieldAssert{Path: c.Audit.Request.Path, Assert: c.Audit.Request.Assert})
	}
	for _, f := range fields {
		if f == nil {
			continue
		}
		a := &f.Assert
		out = append(out, a.Operands()...)
	}
	return out
}

// MatrixNamespaces returns the namespaces the lab's matrix checks keep
// their prober Pods in, each once, sorted; none when it has no matrix
// check.
func (l *Lab) MatrixNamespaces() []string {
	var out []string
	for i := range l.Steps {
		l.Steps[i].EveryCheck(func(c *Check) {
			if m := c.Matrix; m != nil {
				for _, s := range m.Sources {
					if !slices.Contains(out, s.Namespace) {
						out = append(out, s.Namespace)
					}
				}
			}
		})
	}
	slices.Sort(out)
	return out
}
