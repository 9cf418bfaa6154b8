package importer

import (
	"fmt"
	"strconv"
	"strings"
)

func fieldNamed(k *kubeCheck) check {
	return check{
		Name:        slug(strings.ToLower(k.Kind)+"-"+k.Name+"-"+k.Field.Path, 50),
		Description: fmt.Sprintf("%s %s: %s", k.Kind, k.Name, k.Field.Path),
		Kube:        k,
	}
}

// kubectlGet reads `kubectl get KIND NAME [-n NS] [-o jsonpath=...]` (or
// KIND/NAME) as the kube check reading the same object; anything else
// (another output, a selector, all namespaces) is not mapped.
func kubectlGet(cmd, labNS string) (*kubeCheck, bool) {
	words, ok := shellWords(cmd)
	if !ok || len(words) < 3 || (words[0] != "kubectl" && words[0] != "k") {
		return nil, false
	}
	var kind, name, ns, jsonpath string
	var args []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-n" || w == "--namespace":
			if i+1 == len(words) {
				return nil, false
			}
			i++
			ns = words[i]
		case strings.HasPrefix(w, "--namespace="):
			ns = strings.TrimPrefix(w, "--namespace=")
		case strings.HasPrefix(w, "-n") && len(w) > 2:
			ns = w[2:]
		case w == "-o" || w == "--output":
			if i+1 == len(words) {
				return nil, false
			}
			i++
			if jsonpath, ok = outputJSONPath(words[i]); !ok {
				return nil, false
			}
		case strings.HasPrefix(w, "-o") || strings.HasPrefix(w, "--output="):
			if jsonpath, ok = outputJSONPath(strings.TrimPrefix(strings.TrimPrefix(w, "--output="), "-o")); !ok {
				return nil, false
			}
		case strings.HasPrefix(w, "-"):
			return nil, false
		default:
			args = append(args, w)
		}
	}
	if len(args) == 0 || args[0] != "get" {
		return nil, false
	}
	args = args[1:]
	switch len(args) {
	case 1:
		var found bool
		if kind, name, found = strings.Cut(args[0], "/"); !found {
			return nil, false
		}
	case 2:
		kind, name = args[0], args[1]
	default:
		return nil, false
	}
	r, ok := resources[strings.ToLower(kind)]
	if !ok || name == "" || strings.ContainsAny(name, "*/,") {
		return nil, false
	}
	k := &kubeCheck{APIVersion: r.apiVersion, Kind: r.kind, Name: name}
	if r.namespaced {
		if ns == "" || ns == "default" {
			ns = labNS
		}
		k.Namespace = ns
	}
	if jsonpath != "" {
		m := jsonpathRE.FindStringSubmatch(jsonpath)
		if m == nil {
			return nil, false
		}
		k.Field = &fieldCheck{Path: strings.TrimPrefix(m[1], ".")}
	}
	return k, true
}

// outputJSONPath returns the template of -o jsonpath=T, "" for -o name,
// and false for other outputs.
func outputJSONPath(o string) (string, bool) {
	switch {
	case o == "name":
		return "", true
	case strings.HasPrefix(o, "jsonpath="):
		return strings.TrimPrefix(o, "jsonpath="), true
	}
	return "", false
}

// Fields whose JSON type is known, by kind ("" for every kind) and path;
// a path ending in "." stands for every field under it.
var (
	stringFields = map[string][]string{
		"":                      {"metadata.name", "metadata.namespace", "metadata.labels.", "metadata.annotations.", "status.phase"},
		"ConfigMap":             {"data."},
		"Secret":                {"data.", "stringData.", "type"},
		"Service":               {"spec.type", "spec.clusterIP"},
		"Pod":                   {"spec.nodeName", "spec.serviceAccountName", "spec.restartPolicy", "spec.priorityClassName"},
		"CronJob":               {"spec.schedule", "spec.concurrencyPolicy"},
		"PersistentVolumeClaim": {"spec.storageClassName", "spec.volumeName"},
	}
	integerFields = map[string][]string{
		"": {"spec.replicas", "status.replicas", "status.readyReplicas", "status.availableReplicas", "status.updatedReplicas",
			"metadata.generation", "status.observedGeneration", "spec.revisionHistoryLimit"},
		"Job":                     {"spec.parallelism", "spec.completions", "spec.backoffLimit", "status.succeeded", "status.failed", "status.active"},
		"CronJob":                 {"spec.successfulJobsHistoryLimit", "spec.failedJobsHistoryLimit"},
		"HorizontalPodAutoscaler": {"spec.minReplicas", "spec.maxReplicas"},
	}
	booleanFields = map[string][]string{
		"ConfigMap":  {"immutable"},
		"Secret":     {"immutable"},
		"Deployment": {"spec.paused"},
		"CronJob":    {"spec.suspend"},
		"Job":        {"spec.suspend"},
	}
)

// fieldType is the JSON type of the field a kube check reads, when it is
// known: "string", "integer", "boolean", or "".
func fieldType(k *kubeCheck) string {
	in := func(fields map[string][]string) bool {
		for _, kind := range []string{"", k.Kind} {
			for _, f := range fields[kind] {
				if k.Field.Path == f || (strings.HasSuffix(f, ".") && strings.HasPrefix(k.Field.Path, f) && len(k.Field.Path) > len(f)) {
					return true
				}
			}
		}
		return false
	}
	switch {
	case in(stringFields):
		return "string"
	case in(integerFields):
		return "integer"
	case in(booleanFields):
		return "boolean"
	}
	return ""
}

// wordRE is a value that jsonpath prints only for a string field: not a
// number, a boolean, null, a list or an object.
var wordRE = lazyRegexp(`^[A-Za-z0-9._:/@+=-]+$`)

// printedEquals is the value a field must equal for jsonpath to print
// exactly v, and false when that depends on a type that is not known (a
// ConfigMap's "8080" is a string, a Deployment's 3 an integer).
func printedEquals(k *kubeCheck, v string) (any, bool) {
	switch fieldType(k) {
	case "string":
		return v, v != ""
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil && strconv.FormatInt(n, 10) == v
	case "boolean":
		return v == "true", v == "true" || v == "false"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil || v == "true" || v == "false" || v == "null" || !wordRE.MatchString(v) {
		return nil, false
	}
	return v, true
}
