package checks

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// checkKubeMatchesFile requires the objects a kube check selected (objs)
// to be exactly the manifests of kc.MatchesFile of the check's kind, by
// name, each with the file's spec once the API server's defaults are
// added: the file holds what is live, so applying it changes nothing, and
// what is live came from the file or equals it.
//
// pass: same names, same specs. fail: the file is missing, unreadable as
// YAML, or holds an object the cluster does not, or the cluster one the
// file does not, or a spec differs (the failure names the first field).
func checkKubeMatchesFile(env Env, kc *lab.KubeCheck, objs []map[string]any) error {
	_, host, err := resolveLearnerPath(env, kc.MatchesFile)
	if err != nil {
		return err
	}
	data, err := readRegular(host, kc.MatchesFile)
	if err != nil {
		return err
	}
	docs, err := decodeDocuments(data, "yaml", kc.MatchesFile)
	if err != nil {
		return err
	}
	sel, err := labels.Parse(*kc.Selector)
	if err != nil {
		return err
	}
	// The file's objects of the check's kind, in the check's namespace (a
	// manifest without one is applied there with -n), that the selector
	// selects; a later manifest of the same name wins, as apply leaves it.
	want := map[string]map[string]any{}
	for _, d := range docs {
		obj, _ := d.(map[string]any)
		if obj == nil || str(obj["apiVersion"]) != kc.APIVersion || str(obj["kind"]) != kc.Kind {
			continue
		}
		ns := objectNamespace(obj)
		if (ns != "" && ns != kc.Namespace) || !sel.Matches(labels.Set(labelsOf(obj))) {
			continue
		}
		if name := objectName(obj); name != "" {
			want[name] = obj
		}
	}
	live := map[string]map[string]any{}
	for _, obj := range objs {
		live[objectName(obj)] = obj
	}
	for _, name := range sortedKeys(want) {
		if live[name] == nil {
			return failf(msg.KubeFileNotLive, kc.MatchesFile, describeObject(kc.APIVersion, kc.Kind, kc.Namespace, name))
		}
	}
	for _, name := range sortedKeys(live) {
		if want[name] == nil {
			return failf(msg.KubeFileNotInFile, describeObject(kc.APIVersion, kc.Kind, kc.Namespace, name), kc.MatchesFile)
		}
	}
	for _, name := range sortedKeys(want) {
		fileSpec := withDefaults(kc.Kind, canonical(want[name]["spec"]))
		liveSpec := canonical(live[name]["spec"])
		if path, inLive, inFile, differ := firstDifference("spec", liveSpec, fileSpec); differ {
			return failf(msg.KubeFileDiffers, describeObject(kc.APIVersion, kc.Kind, kc.Namespace, name), kc.MatchesFile, path, shownValue(inLive), shownValue(inFile))
		}
	}
	return nil
}

func labelsOf(obj map[string]any) map[string]string {
	md, _ := obj["metadata"].(map[string]any)
	raw, _ := md["labels"].(map[string]any)
	out := map[string]string{}
	for k, v := range raw {
		out[k] = fmt.Sprint(v)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// canonical is v with the values that mean the same as their absence
// removed from maps (null, and an empty list: the API server stores
// neither); an empty map stays, for a selector {} is not an absent one.
func canonical(v any) any {
	switch x := normalize(v).(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			e = canonical(e)
			if l, ok := e.([]any); e == nil || (ok && len(l) == 0) {
				continue
			}
			out[k] = e
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	default:
		return x
	}
}

// withDefaults adds to a canonical spec of kind the defaults the API
// server gives what the manifest leaves out. Only a NetworkPolicy's are
// known: a port's protocol is TCP, and policyTypes are Ingress, and Egress
// when the policy has egress rules.
func withDefaults(kind string, spec any) any {
	m, ok := spec.(map[string]any)
	if !ok || kind != "NetworkPolicy" {
		return spec
	}
	for _, dir := range []string{"ingress", "egress"} {
		rules, _ := m[dir].([]any)
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			ports, _ := rule["ports"].([]any)
			for _, p := range ports {
				if port, ok := p.(map[string]any); ok && port["protocol"] == nil {
					port["protocol"] = "TCP"
				}
			}
		}
	}
	if m["policyTypes"] == nil {
		types := []any{"Ingress"}
		if m["egress"] != nil {
			types = append(types, "Egress")
		}
		m["policyTypes"] = types
	}
	return m
}

// firstDifference returns the first path, in sorted key order, where a and
// b (canonical values) differ, and the two values there (nil where absent).
func firstDifference(path string, a, b any) (string, any, any, bool) {
	am, aIsMap := a.(map[string]any)
	bm, bIsMap := b.(map[string]any)
	if aIsMap && bIsMap {
		keys := sortedKeys(am)
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range slices.Compact(keys) {
			if p, x, y, d := firstDifference(path+"."+k, am[k], bm[k]); d {
				return p, x, y, true
			}
		}
		return "", nil, nil, false
	}
	al, aIsList := a.([]any)
	bl, bIsList := b.([]any)
	if aIsList && bIsList && len(al) == len(bl) {
		for i := range al {
			if p, x, y, d := firstDifference(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i]); d {
				return p, x, y, true
			}
		}
		return "", nil, nil, false
	}
	if fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b) {
		return "", nil, nil, false
	}
	return path, a, b, true
}

// shownValue writes a value of a difference short, as JSON; an absent one
// as the word.
func shownValue(v any) any {
	if v == nil {
		return msg.T(msg.KubeFileAbsent)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if r := []rune(string(b)); len(r) > maxShown {
		return string(r[:maxShown]) + "…"
	}
	return string(b)
}
