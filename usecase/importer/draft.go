package importer

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/labctl/labctl/internal/mutant"
	"github.com/labctl/labctl/lab"
)

// DraftCheck is a check drafted from what a step's solve made: typed,
// as lab.yaml writes it.
type DraftCheck = check

// DraftChecks drafts the typed kube checks of a step from the lab's objects
// before its solve (start) and after it (end), as their admin reads them:
// each object the solve created exists, with the fields a learner sets for
// its kind (a container's image, a Deployment's replicas, a ConfigMap's
// data, a role's rules, …) and its labels; of each object it changed, the
// fields and labels that changed; each object it deleted is gone. What the
// cluster makes by itself (objects a controller owns, a Service's address,
// the token volume of a Pod) is left out. The checks are drafts: they say
// what this solve did, not what every right answer does.
func DraftChecks(start, end []map[string]any) []DraftCheck {
	var out []DraftCheck
	names := map[string]int{}
	add := func(c check) {
		c.Name = strings.Trim(slug(c.Name, 60), "-")
		if n := names[c.Name]; n > 0 {
			c.Name = fmt.Sprintf("%s-%d", slug(c.Name, 57), n+1)
		}
		names[c.Name]++
		out = append(out, c)
	}
	var s, e []mutant.Object
	for _, o := range start {
		if drafted(o) {
			s = append(s, o)
		}
	}
	for _, o := range end {
		if drafted(o) {
			e = append(e, o)
		}
	}
	for _, ch := range mutant.Changed(s, e) {
		o := ch.End
		kind, ns, name := mutant.Kind(o), mutant.Namespace(o), mutant.Name(o)
		apiVersion, _ := o["apiVersion"].(string)
		ref := kind + " " + name
		base := strings.ToLower(kind) + "-" + name
		kc := func() *kubeCheck { return &kubeCheck{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name} }
		var before map[string]string
		if ch.Start == nil {
			add(check{Name: base, Description: ref + " exists", Kube: kc()})
		} else {
			before = ownLabels(ch.Start)
		}
		if labels := changedLabels(before, ownLabels(o)); len(labels) > 0 {
			k := kc()
			k.Labels = labels
			add(check{Name: base + "-labels", Description: ref + " is labelled " + labelList(labels), Kube: k})
		}
		for _, f := range fieldsOf(o) {
			if ch.Start != nil && reflect.DeepEqual(valueAt(ch.Start, f.path), f.value) {
				continue
			}
			k := kc()
			k.Field = &fieldCheck{Path: f.path.String(), Equals: f.value}
			add(check{Name: base + "-" + f.name, Description: fmt.Sprintf("%s's %s is %s", ref, f.path, brief(f.value)), Kube: k})
		}
	}
	for _, o := range mutant.Removed(s, e) {
		apiVersion, _ := o["apiVersion"].(string)
		kind, name := mutant.Kind(o), mutant.Name(o)
		no := false
		add(check{Name: strings.ToLower(kind) + "-" + name + "-gone", Description: kind + " " + name + " does not exist",
			Kube: &kubeCheck{APIVersion: apiVersion, Kind: kind, Namespace: mutant.Namespace(o), Name: name, Exists: &no}})
	}
	return out
}

// drafted says whether o is the learner's to make: not an object a
// controller owns, nor one Kubernetes makes in every namespace.
func drafted(o map[string]any) bool {
	md, _ := o["metadata"].(map[string]any)
	if refs, _ := md["ownerReferences"].([]any); len(refs) > 0 {
		return false
	}
	switch name, _ := md["name"].(string); mutant.Kind(o) {
	case "Event", "Endpoints", "EndpointSlice", "Lease", "ControllerRevision":
		return false
	case "ConfigMap":
		return name != "kube-root-ca.crt"
	case "ServiceAccount":
		return name != "default"
	}
	return true
}

// ownLabels are o's labels but those Kubernetes writes.
func ownLabels(o map[string]any) map[string]string {
	md, _ := o["metadata"].(map[string]any)
	raw, _ := md["labels"].(map[string]any)
	out := map[string]string{}
	for k, v := range raw {
		s, ok := v.(string)
		if !ok || k == "pod-template-hash" || k == "controller-uid" || k == "job-name" ||
			strings.Contains(k, "kubernetes.io/") && !strings.HasPrefix(k, "app.kubernetes.io/") {
			continue
		}
		out[k] = s
	}
	return out
}

// changedLabels are the labels of after that before lacks or holds
// otherwise.
func changedLabels(before, after map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range after {
		if b, ok := before[k]; !ok || b != v {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func labelList(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// field is one field a check is drafted of: its path, value, and the
// check name's end.
type field struct {
	name  string
	path  lab.Path
	value any
}

func keys(ks ...string) lab.Path {
	p := make(lab.Path, len(ks))
	for i, k := range ks {
		p[i] = lab.Key(k)
	}
	return p
}

// valueAt reads the value at p in o (nil when absent).
func valueAt(o any, p lab.Path) any {
	v := o
	for _, seg := range p {
		switch seg.Kind {
		case lab.KeySegment:
			m, _ := v.(map[string]any)
			v = m[seg.Key]
		case lab.IndexSegment:
			l, _ := v.([]any)
			if seg.Index < 0 || seg.Index >= len(l) {
				return nil
			}
			v = l[seg.Index]
		case lab.FilterSegment:
			l, _ := v.([]any)
			var hit any
			for _, e := range l {
				if m, ok := e.(map[string]any); ok && m[seg.Key] == seg.Value {
					hit = m
					break
				}
			}
			v = hit
		default:
			return nil
		}
		if v == nil {
			return nil
		}
	}
	return v
}

// fieldsOf are the fields of o a learner sets, for its kind.
func fieldsOf(o map[string]any) []field {
	var out []field
	at := func(name string, p lab.Path) {
		if v := valueAt(o, p); v != nil {
			out = append(out, field{name, p, v})
		}
	}
	each := func(name string, p lab.Path) {
		m, _ := valueAt(o, p).(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			at(name+"-"+k, append(slices.Clone(p), lab.Key(k)))
		}
	}
	switch mutant.Kind(o) {
	case "ConfigMap":
		each("data", keys("data"))
	case "Secret":
		at("type", keys("type"))
		each("data", keys("data"))
	case "Deployment", "StatefulSet", "ReplicaSet":
		at("replicas", keys("spec", "replicas"))
		out = append(out, podFields(o, keys("spec", "template", "spec"))...)
	case "DaemonSet", "Job":
		out = append(out, podFields(o, keys("spec", "template", "spec"))...)
	case "CronJob":
		at("schedule", keys("spec", "schedule"))
		out = append(out, podFields(o, keys("spec", "jobTemplate", "spec", "template", "spec"))...)
	case "Pod":
		out = append(out, podFields(o, keys("spec"))...)
	case "Service":
		at("type", keys("spec", "type"))
		at("selector", keys("spec", "selector"))
		ports, _ := valueAt(o, keys("spec", "ports")).([]any)
		for i, p := range ports {
			pm, _ := p.(map[string]any)
			seg, id := lab.Index(i), fmt.Sprint(i)
			if n, _ := pm["name"].(string); n != "" {
				seg, id = lab.Filter("name", n), n
			}
			for _, k := range []string{"port", "targetPort", "protocol"} {
				at("port-"+id+"-"+strings.ToLower(k), append(keys("spec", "ports"), seg, lab.Key(k)))
			}
		}
	case "Role", "ClusterRole":
		at("rules", keys("rules"))
	case "RoleBinding", "ClusterRoleBinding":
		at("roleref", keys("roleRef"))
		at("subjects", keys("subjects"))
	case "PersistentVolumeClaim":
		at("access-modes", keys("spec", "accessModes"))
		at("storage", keys("spec", "resources", "requests", "storage"))
	case "NetworkPolicy", "Ingress", "HorizontalPodAutoscaler":
		at("spec", keys("spec"))
	}
	return out
}

// podFields are the fields of each container of the Pod spec at p a
// learner sets; the volumes and mounts Kubernetes adds (the service
// account's token) are left out.
func podFields(o map[string]any, p lab.Path) []field {
	var out []field
	for _, list := range []string{"initContainers", "containers"} {
		cs, _ := valueAt(o, append(slices.Clone(p), lab.Key(list))).([]any)
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			n, _ := cm["name"].(string)
			if n == "" {
				continue
			}
			for _, k := range []string{"image", "command", "args", "env", "ports", "resources"} {
				v := cm[k]
				if v == nil || reflect.DeepEqual(v, map[string]any{}) {
					continue
				}
				out = append(out, field{"container-" + n + "-" + strings.ToLower(k), append(slices.Clone(p), lab.Key(list), lab.Filter("name", n), lab.Key(k)), v})
			}
		}
	}
	return out
}

// brief writes a value for a check's description, cut short.
func brief(v any) string {
	s := fmt.Sprint(v)
	if str, ok := v.(string); ok {
		s = fmt.Sprintf("%q", str)
	}
	if len(s) > 60 {
		s = s[:57] + "…"
	}
	return s
}
