package lab

import (
	"cmp"
	"fmt"
	"slices"
)

// KubeRead is one cluster object a lab's checks read: the object of a kube
// check, or of a kube: reference anywhere in a check. The grader's
// credentials may read exactly these objects. Namespace is empty for a
// cluster-scoped object.
type KubeRead struct {
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
}

// String writes the read as "apps/v1 Deployment gitops-lab/web", or
// "v1 Namespace gitops-lab" when no namespace is given.
func (r KubeRead) String() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s %s", r.APIVersion, r.Kind, r.Name)
	}
	return fmt.Sprintf("%s %s %s/%s", r.APIVersion, r.Kind, r.Namespace, r.Name)
}

// KubeReads returns every object the lab's checks read from the cluster,
// each once, sorted by API version, kind, namespace and name. References
// that do not parse are skipped (Validate reports them).
func (l *Lab) KubeReads() []KubeRead {
	seen := map[KubeRead]bool{}
	var out []KubeRead
	add := func(r KubeRead) {
		if r.Name == "" || seen[r] {
			return
		}
		seen[r] = true
		out = append(out, r)
	}
	for i := range l.Steps {
		for j := range l.Steps[i].Checks {
			c := &l.Steps[i].Checks[j]
			if k := c.Kube; k != nil {
				add(KubeRead{APIVersion: k.APIVersion, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name})
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
		}
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
		out = append(out, a.Equals, a.NotEquals, a.GTE, a.LTE, a.SubsetOf)
	}
	return out
}
