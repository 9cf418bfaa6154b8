package lab

import (
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"

	"fmt"
	"maps"
	"slices"
	"strings"
)

func (v *validator) cluster(c *Cluster) {
	switch c.Provider {
	case DefaultProvider:
	case ProviderNone:
		v.noCluster(v.lab)
	default:
		v.add("cluster.provider", "%q is not supported; use %q (a kind cluster, the default) or %q (no cluster: the sandbox and the grader only)", c.Provider, DefaultProvider, ProviderNone)
	}
	switch c.PodSecurity {
	case PodSecurityBaseline, PodSecurityRestricted, PodSecurityPrivileged:
	default:
		v.add("cluster.podSecurity", "%q is not a Pod Security Standard; use %s (the default), %s or %s",
			c.PodSecurity, PodSecurityBaseline, PodSecurityRestricted, PodSecurityPrivileged)
	}
	switch c.Workloads {
	case WorkloadsRun, WorkloadsDeclare:
	default:
		v.add("cluster.workloads", "%q is not a workloads mode; use %s (the default: the lab's Pods must run) or %s (its checks only read what the API server stores)",
			c.Workloads, WorkloadsRun, WorkloadsDeclare)
	}
	v.workers(c.Workers)
	v.addons(c.Addons)
	first := map[string]string{}
	for i, ns := range c.Namespaces {
		p := joinIndex("cluster.namespaces", i)
		if !isDNSLabel(ns, maxDNSLabelLen) {
			v.add(p, "%q is not a DNS label: use at most %d lower-case letters, digits and '-'", ns, maxDNSLabelLen)
			continue
		}
		if f, dup := first[ns]; dup {
			v.add(p, "namespace %q is listed twice (first at %s)", ns, v.line(f))
			continue
		}
		first[ns] = p
		if why := ReservedNamespace(ns); why != "" {
			v.add(p, "%q is %s, never a lab's: the learner would be admin of it and reset would empty it; "+
				"give the lab a namespace of its own, such as %s (the learner's kubeconfig starts in the lab's first namespace)", ns, why, suggestNamespace(c.Namespaces))
		}
	}
	v.images(c.Images)
}

// images requires workload images named by a version tag, each once, built
// (when they are) from a directory of the lab that holds a Dockerfile.
func (v *validator) images(images []Image) {
	first := map[string]string{}
	for i, im := range images {
		p := joinIndex("cluster.images", i)
		if err := checkImageName(im.Name); err != nil {
			v.add(p+".name", "%v", err)
		} else if f, dup := first[NormalizeImageName(im.Name)]; dup {
			v.add(p+".name", "image %q is listed twice (first at %s)", im.Name, v.line(f))
		} else {
			first[NormalizeImageName(im.Name)] = p + ".name"
		}
		if im.Build == "" {
			continue
		}
		if err := checkBuildPath(im.Build); err != nil {
			v.add(p+".build", "%v", err)
		} else if v.labDir != "" {
			if err := checkBuildDir(v.labDir, im.Build); err != nil {
				v.add(p+".build", "%v", err)
			}
		}
	}
}

func (v *validator) rules(p string, rules []PolicyRule) {
	for i, r := range rules {
		if len(r.Verbs) == 0 {
			v.add(joinIndex(p, i)+".verbs", "a rule needs at least one verb, e.g. [get, list, watch]")
		}
	}
}

// workers checks the worker nodes' count, labels and taints.
func (v *validator) workers(ws []Node) {
	if len(ws) > MaxWorkers {
		v.add("cluster.workers", "%d workers is more than %d: each is a node container with its own kubelet; teach with fewer", len(ws), MaxWorkers)
	}
	for i, w := range ws {
		p := joinIndex("cluster.workers", i)
		for _, k := range slices.Sorted(maps.Keys(w.Labels)) {
			if errs := k8svalidation.IsQualifiedName(k); len(errs) > 0 {
				v.add(p+".labels", "%q is not a label key: %s", k, errs[0])
			} else if strings.HasPrefix(k, "kubernetes.io/") || strings.HasPrefix(k, "node-role.kubernetes.io/") || strings.Contains(k, ".kubernetes.io/") || strings.HasPrefix(k, "k8s.io/") {
				v.add(p+".labels", "%q is a label the cluster sets itself: use a key of your own, such as zone or disk", k)
			}
			if errs := k8svalidation.IsValidLabelValue(w.Labels[k]); len(errs) > 0 {
				v.add(p+".labels."+k, "%q is not a label value: %s", w.Labels[k], errs[0])
			}
		}
		for j, t := range w.Taints {
			if _, err := ParseTaint(t); err != nil {
				v.add(joinIndex(p+".taints", j), "%v", err)
			}
		}
	}
}

// addons checks the add-on names.
func (v *validator) addons(as []string) {
	seen := map[string]bool{}
	for i, a := range as {
		p := joinIndex("cluster.addons", i)
		switch {
		case !slices.Contains(Addons, a):
			v.add(p, "%q is not an add-on; use one of %s", a, strings.Join(Addons, ", "))
		case seen[a]:
			v.add(p, "add-on %q is listed twice", a)
		}
		seen[a] = true
	}
}

// TaintError says what is wrong with a taint as written.
type TaintError struct {
	// Taint is the taint as written, Key its key.
	Taint, Key string
	// Part is what is wrong: "effect" (none written, or not one), "key" or
	// "value".
	Part string
	// Problem says what is wrong with the part, e.g. `"x y" is not a taint
	// key: ...`; "" when no effect is written.
	Problem string
}

func (e *TaintError) Error() string {
	if e.Problem == "" {
		return fmt.Sprintf("taint %q has no effect: write key=value:NoSchedule (or PreferNoSchedule, NoExecute)", e.Taint)
	}
	return fmt.Sprintf("taint %q: %s", e.Taint, e.Problem)
}

// ParseTaint reads key=value:Effect, key=:Effect or key:Effect, and checks
// the effect, the key (a qualified name) and the value (a label value); its
// errors are *TaintError.
func ParseTaint(s string) (Taint, error) {
	kv, effect, ok := strings.Cut(s, ":")
	key, value, valued := strings.Cut(kv, "=")
	if !ok {
		return Taint{}, &TaintError{Taint: s, Key: key, Part: "effect"}
	}
	switch effect {
	case "NoSchedule", "PreferNoSchedule", "NoExecute":
	default:
		return Taint{}, &TaintError{Taint: s, Key: key, Part: "effect",
			Problem: fmt.Sprintf("%q is not an effect; use NoSchedule, PreferNoSchedule or NoExecute", effect)}
	}
	if errs := k8svalidation.IsQualifiedName(key); len(errs) > 0 {
		return Taint{}, &TaintError{Taint: s, Key: key, Part: "key", Problem: fmt.Sprintf("%q is not a taint key: %s", key, errs[0])}
	}
	if errs := k8svalidation.IsValidLabelValue(value); len(errs) > 0 {
		return Taint{}, &TaintError{Taint: s, Key: key, Part: "value", Problem: fmt.Sprintf("%q is not a taint value: %s", value, errs[0])}
	}
	return Taint{Key: key, Value: value, Effect: effect, Valued: valued}, nil
}

// HasAddon reports whether the lab asks for add-on name.
func (c *Cluster) HasAddon(name string) bool { return slices.Contains(c.Addons, name) }

// NodeRoles names the nodes of a lab's cluster as file checks name them:
// control-plane, then worker, worker2, ... (kind's names after the
// cluster's).
func NodeRoles(c *Cluster) []string {
	roles := []string{"control-plane"}
	for i := range c.Workers {
		if i == 0 {
			roles = append(roles, "worker")
		} else {
			roles = append(roles, fmt.Sprintf("worker%d", i+1))
		}
	}
	return roles
}
