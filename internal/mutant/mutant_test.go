package mutant

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func obj(t *testing.T, s string) Object {
	t.Helper()
	var o Object
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func ids(ms []Mutant) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// byID finds the mutant of that id, failing the test when there is none.
func byID(t *testing.T, ms []Mutant, id string) Mutant {
	t.Helper()
	for _, m := range ms {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("no mutant %q among:\n%s", id, strings.Join(ids(ms), "\n"))
	return Mutant{}
}

const apiPolicy = `{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy",
 "metadata":{"name":"api-ingress","namespace":"shop","resourceVersion":"7","uid":"u","managedFields":[{}]},
 "spec":{"podSelector":{"matchLabels":{"app":"shop","tier":"api"}},"policyTypes":["Ingress"],
  "ingress":[{"from":[{"podSelector":{"matchLabels":{"app":"shop","tier":"web"}}}],"ports":[{"protocol":"TCP","port":8080}]}]}}`

func TestNetworkPolicyMutants(t *testing.T) {
	o := obj(t, apiPolicy)
	orig, _ := json.Marshal(o)
	ms := Of(o, Lab{Namespaces: []string{"shop", "tools"}})
	m := byID(t, ms, "NetworkPolicy shop/api-ingress: spec.ingress[0].from[0].podSelector → {}")
	if len(m.Edits) != 1 || m.Edits[0].Recreate {
		t.Fatalf("edits %+v", m.Edits)
	}
	to := m.Edits[0].To
	if got := sub(to, "spec", "ingress"); got != nil {
		t.Fatal("ingress is not a map")
	}
	peer := list(to, "spec", "ingress")[0].(map[string]any)["from"].([]any)[0].(map[string]any)
	if sel := peer["podSelector"].(map[string]any); len(sel) != 0 {
		t.Errorf("the peer's podSelector is %v, want {}", sel)
	}
	// The mutant's From is the object as it can be written back.
	if md := sub(m.Edits[0].From, "metadata"); md["resourceVersion"] != nil || md["uid"] != nil || md["managedFields"] != nil {
		t.Errorf("From keeps the server's metadata: %v", md)
	}
	for _, id := range []string{
		"NetworkPolicy shop/api-ingress: spec.podSelector → {}",
		"NetworkPolicy shop/api-ingress: spec.podSelector.matchLabels.tier → (dropped)",
		"NetworkPolicy shop/api-ingress: spec.ingress[0].from[0].podSelector.matchLabels.app → (dropped)",
		"NetworkPolicy shop/api-ingress: spec.ingress[0].from[0] → (dropped)",
		"NetworkPolicy shop/api-ingress: spec.ingress[0] → (removed)",
		"NetworkPolicy shop/api-ingress: spec.ingress[0].ports[0] → (removed)",
		"NetworkPolicy shop/api-ingress: spec.ingress[0].ports[0].port → 8081",
		"NetworkPolicy shop/api-ingress: spec.ingress[0].ports[0].protocol → UDP",
		"NetworkPolicy shop/api-ingress: spec.policyTypes[0] → (Ingress dropped)",
		"NetworkPolicy shop/api-ingress: deleted",
		"NetworkPolicy shop/api-ingress: metadata.namespace → tools",
	} {
		byID(t, ms, id)
	}
	// Dropping the only peer leaves a rule with no from: every source.
	dropped := byID(t, ms, "NetworkPolicy shop/api-ingress: spec.ingress[0].from[0] → (dropped)").Edits[0].To
	if _, ok := list(dropped, "spec", "ingress")[0].(map[string]any)["from"]; ok {
		t.Error("dropping the only peer kept an empty from, which lets nothing in")
	}
	if del := byID(t, ms, "NetworkPolicy shop/api-ingress: deleted").Edits[0]; del.To != nil || del.From == nil {
		t.Errorf("the delete is %+v", del)
	}
	if after, _ := json.Marshal(o); string(after) != string(orig) {
		t.Errorf("making mutants changed the object:\n%s\n%s", orig, after)
	}
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.ID] {
			t.Errorf("two mutants %q", m.ID)
		}
		seen[m.ID] = true
	}
}

func TestDiffShowsTheChangedLines(t *testing.T) {
	ms := Of(obj(t, apiPolicy), Lab{})
	d := Diff(byID(t, ms, "NetworkPolicy shop/api-ingress: spec.ingress[0].from[0].podSelector → {}"))
	want := "-     - podSelector:\n-         matchLabels:\n-           app: shop\n-           tier: web\n+     - podSelector: {}"
	if d != want {
		t.Errorf("diff:\n%s\nwant:\n%s", d, want)
	}
	if d := Diff(byID(t, ms, "NetworkPolicy shop/api-ingress: deleted")); d != "- NetworkPolicy shop/api-ingress (deleted)" {
		t.Errorf("diff of a delete: %q", d)
	}
}

const role = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"deployer","namespace":"shop"},
 "rules":[{"apiGroups":["apps"],"resources":["deployments"],"verbs":["get","patch"]},
          {"apiGroups":[""],"resources":["configmaps"],"resourceNames":["web-config"],"verbs":["get"]}]}`

const binding = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"deployer","namespace":"shop"},
 "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"deployer"},
 "subjects":[{"kind":"ServiceAccount","name":"deployer","namespace":"ci"}]}`

func TestRoleMutants(t *testing.T) {
	ms := Of(obj(t, role), Lab{})
	for _, id := range []string{
		"Role shop/deployer: rules[0].verbs → [*]",
		"Role shop/deployer: rules[0].resources → [*]",
		"Role shop/deployer: rules[0].apiGroups → [*]",
		"Role shop/deployer: rules[1].resourceNames → (dropped)",
		"Role shop/deployer: rules[0].verbs → +delete",
		"Role shop/deployer: rules[1] → (removed)",
		"Role shop/deployer: rules[0].verbs → -patch",
	} {
		byID(t, ms, id)
	}
	if slices.Contains(ids(ms), "Role shop/deployer: rules[1].verbs → -get") {
		t.Error("removing a rule's only verb is not a verb removed but a rule broken")
	}
	added := byID(t, ms, "Role shop/deployer: rules[0].verbs → +delete").Edits[0].To
	if got := strs(list(added, "rules")[0].(map[string]any)["verbs"]); !slices.Equal(got, []string{"get", "patch", "delete"}) {
		t.Errorf("verbs %v", got)
	}
	// The original's verbs are untouched.
	if got := strs(list(obj(t, role), "rules")[0].(map[string]any)["verbs"]); !slices.Equal(got, []string{"get", "patch"}) {
		t.Errorf("original verbs %v", got)
	}
}

func TestBindingMutants(t *testing.T) {
	start := []Object{}
	end := []Object{obj(t, role), obj(t, binding),
		obj(t, `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"deployer","namespace":"ci"}}`),
		obj(t, `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"test-runner","namespace":"ci"}}`)}
	ms := Generate(start, end, []string{"shop", "ci"})
	byID(t, ms, "RoleBinding shop/deployer: subjects[0] → Group system:serviceaccounts:ci")
	byID(t, ms, "RoleBinding shop/deployer: subjects[0] → Group system:serviceaccounts")
	byID(t, ms, "RoleBinding shop/deployer: subjects[0] → ServiceAccount ci/test-runner")
	byID(t, ms, "RoleBinding shop/deployer: subjects[0] → (removed)")
	edit := byID(t, ms, "RoleBinding shop/deployer: roleRef → ClusterRole edit")
	if !edit.Edits[0].Recreate {
		t.Error("a roleRef change must recreate the binding: the API does not let it change")
	}
	cw := byID(t, ms, "RoleBinding shop/deployer: kind → ClusterRoleBinding of ClusterRole deployer")
	if len(cw.Edits) != 2 || cw.Edits[0].From != nil || Kind(cw.Edits[0].To) != "ClusterRole" || Kind(cw.Edits[1].To) != "ClusterRoleBinding" {
		t.Fatalf("cluster-wide edits %+v", cw.Edits)
	}
	if Namespace(cw.Edits[1].To) != "" || str(cw.Edits[1].To, "roleRef", "kind") != "ClusterRole" {
		t.Errorf("the ClusterRoleBinding is %v", cw.Edits[1].To)
	}
	undo := cw.Undo()
	if undo[0].From == nil || Kind(undo[0].From) != "ClusterRoleBinding" || Kind(undo[0].To) != "RoleBinding" || undo[1].To != nil {
		t.Errorf("undo %+v", undo)
	}
	// The ServiceAccounts the solve created are deleted, not mutated otherwise.
	byID(t, ms, "ServiceAccount ci/test-runner: deleted")
}

func TestChangedKeepsWhatTheSolveMadeOrChanged(t *testing.T) {
	cm := func(v, rv string) Object {
		return obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web-config","namespace":"shop","resourceVersion":"`+rv+`"},"data":{"color":"`+v+`"}}`)
	}
	same := obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kube-root-ca.crt","namespace":"shop"},"data":{"ca.crt":"x"}}`)
	start := []Object{cm("blue", "1"), same}
	if got := Changed(start, []Object{cm("blue", "2"), same}); len(got) != 0 {
		t.Errorf("a new resource version alone is a change: %v", got)
	}
	got := Changed(start, []Object{cm("green", "3"), same})
	if len(got) != 1 || got[0].Start == nil || Name(got[0].End) != "web-config" {
		t.Fatalf("changed %v", got)
	}
	ms := Generate(start, []Object{cm("green", "3"), same}, []string{"shop"})
	rev := byID(t, ms, "ConfigMap shop/web-config: reverted to the step's start")
	if sub(rev.Edits[0].To, "data")["color"] != "blue" {
		t.Errorf("revert writes %v", rev.Edits[0].To)
	}
	byID(t, ms, "ConfigMap shop/web-config: data.color → (removed)")
	byID(t, ms, `ConfigMap shop/web-config: data.color → "changed"`)
	if slices.Contains(ids(ms), "ConfigMap shop/web-config: deleted") {
		t.Error("an object the solve changed, not created, is not deleted")
	}
}

func TestWorkloadAndServiceMutants(t *testing.T) {
	d := obj(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop"},
	 "spec":{"replicas":2,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web","tier":"front"}},
	  "spec":{"containers":[{"name":"web","image":"registry:5000/web:1.2","ports":[{"containerPort":8080}],
	   "env":[{"name":"MODE","value":"x"}],"readinessProbe":{},"resources":{"limits":{"memory":"64Mi"}}},
	   {"name":"sidecar","image":"registry:5000/proxy:2","resources":{}}]}}}}`)
	ms := Of(d, Lab{})
	for _, id := range []string{
		"Deployment shop/web: spec.template.spec.containers[0].image → registry:5000/web:latest",
		"Deployment shop/web: spec.replicas → 3",
		"Deployment shop/web: spec.replicas → 1",
		"Deployment shop/web: spec.template.metadata.labels.tier → (dropped)",
		"Deployment shop/web: spec.template.spec.containers[0].ports[0] → (removed)",
		"Deployment shop/web: spec.template.spec.containers[0].env[0] (MODE) → (removed)",
		"Deployment shop/web: spec.template.spec.containers[0].readinessProbe → (removed)",
		"Deployment shop/web: spec.template.spec.containers[0].resources → (removed)",
	} {
		byID(t, ms, id)
	}
	// The API server stores resources: {} on a container that sets none:
	// removing it would change nothing.
	if slices.Contains(ids(ms), "Deployment shop/web: spec.template.spec.containers[1].resources → (removed)") {
		t.Error("an empty resources is removed: a mutant that changes nothing")
	}
	s := obj(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},
	 "spec":{"type":"NodePort","clusterIP":"10.0.0.1","selector":{"app":"web"},"ports":[{"port":80,"targetPort":8080,"nodePort":30080}]}}`)
	ms = Of(s, Lab{Namespaces: []string{"shop", "tools"}})
	byID(t, ms, "Service shop/web: spec.selector.app → (dropped)")
	byID(t, ms, "Service shop/web: spec.ports[0].targetPort → 8081")
	typ := byID(t, ms, "Service shop/web: spec.type → ClusterIP").Edits[0].To
	if _, ok := list(typ, "spec", "ports")[0].(map[string]any)["nodePort"]; ok {
		t.Error("a ClusterIP Service keeps its nodePort")
	}
	moved := byID(t, ms, "Service shop/web: metadata.namespace → tools").Edits[0]
	if !moved.Recreate || sub(moved.To, "spec")["clusterIP"] != nil {
		t.Errorf("the moved Service %+v", moved)
	}
}

// TestRevertKeepsAServicesAddress: the API refuses a Service whose
// clusterIP changes, so its version at the step's start keeps today's.
func TestRevertKeepsAServicesAddress(t *testing.T) {
	start := obj(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"clusterIP":"10.0.0.1","clusterIPs":["10.0.0.1"],"ports":[{"port":80}]}}`)
	end := obj(t, `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"shop"},"spec":{"clusterIP":"10.0.0.2","clusterIPs":["10.0.0.2"],"ports":[{"port":81}]}}`)
	to := byID(t, Generate([]Object{start}, []Object{end}, nil), "Service shop/web: reverted to the step's start").Edits[0].To
	if got := str(to, "spec", "clusterIP"); got != "10.0.0.2" {
		t.Errorf("the reverted Service has clusterIP %s, want the one it has now", got)
	}
	if n, _ := number(list(to, "spec", "ports")[0].(map[string]any)["port"]); n != 80 {
		t.Errorf("the reverted Service has port %d", n)
	}
}

// TestDeletedObjectKept: the learner who forgets to delete what the solve
// deletes.
func TestDeletedObjectKept(t *testing.T) {
	b := obj(t, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"ci-deploy","namespace":"shop","uid":"u","resourceVersion":"3"},"roleRef":{"kind":"ClusterRole","name":"admin"}}`)
	ms := Generate([]Object{b}, nil, []string{"shop"})
	if len(ms) != 1 || ms[0].ID != "RoleBinding shop/ci-deploy: kept (the solve deletes it)" {
		t.Fatalf("mutants %q", ids(ms))
	}
	e := ms[0].Edits[0]
	if e.From != nil || Name(e.To) != "ci-deploy" || sub(e.To, "metadata")["uid"] != nil {
		t.Errorf("edit %+v", e)
	}
	if d := Diff(ms[0]); d != "+ RoleBinding shop/ci-deploy (created)" {
		t.Errorf("diff %q", d)
	}
}

const rolloutWeb = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"rollout"},
 "spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web","version":"3"}},
  "spec":{"containers":[{"name":"web","image":"web:1"}]}}}}`

func webService(selector string) string {
	return `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"rollout","resourceVersion":"4"},
	 "spec":{"clusterIP":"10.0.0.9","clusterIPs":["10.0.0.9"],"selector":` + selector + `,"ports":[{"port":80}]}}`
}

// TestSelectorLabelsOnPods: the learner who labels the running Pods so
// that Sam's selector reaches them, instead of fixing the selector as the
// solve does. The Service stays as it was, the Pods get its labels, and
// the undo takes the labels off again before the Service is put back.
func TestSelectorLabelsOnPods(t *testing.T) {
	d := obj(t, rolloutWeb)
	start := obj(t, webService(`{"app.kubernetes.io/name":"web"}`))
	end := obj(t, webService(`{"app":"web"}`))
	const id = "Service rollout/web: spec.selector → the step's start, the Pods of Deployment rollout/web labelled app.kubernetes.io/name=web instead"
	m := byID(t, Generate([]Object{d, start}, []Object{d, end}, []string{"rollout"}), id)
	if len(m.Edits) != 2 || m.Edits[0].Label != nil {
		t.Fatalf("edits %+v, want the Service written back, then the Pods labelled", m.Edits)
	}
	svc := m.Edits[0]
	if got := labelMap(get(svc.To, "spec", "selector")); len(got) != 1 || got["app.kubernetes.io/name"] != "web" {
		t.Errorf("the Service is written with selector %v, want the step's start", got)
	}
	if str(svc.To, "spec", "clusterIP") != "10.0.0.9" || sub(svc.To, "metadata")["resourceVersion"] != nil {
		t.Errorf("the Service written %v, want its address kept and no server metadata", svc.To)
	}
	rl := m.Edits[1].Label
	if rl == nil || rl.Namespace != "rollout" || rl.SelectorString() != "app=web" || strings.Join(rl.Args(), " ") != "app.kubernetes.io/name=web" {
		t.Fatalf("relabel %+v", rl)
	}
	undo := m.Undo()
	if undo[0].Label == nil || strings.Join(undo[0].Label.Args(), " ") != "app.kubernetes.io/name-" || undo[0].Label.SelectorString() != "app=web" {
		t.Errorf("the undo begins with %+v, want the label taken off the same Pods", undo[0])
	}
	if undo[1].Label != nil || labelMap(get(undo[1].To, "spec", "selector"))["app"] != "web" {
		t.Errorf("the undo ends with %+v, want the solve's Service", undo[1])
	}
	if d := Diff(m); !strings.Contains(d, "~ Pods rollout/app=web: kubectl label app.kubernetes.io/name=web") || !strings.Contains(d, "+     app.kubernetes.io/name: web") {
		t.Errorf("diff:\n%s", d)
	}
}

// TestSelectorLabelsOnPodsNotMade: no Pods to label when the selector did
// not change, the solve made the Service, no workload's Pods are selected,
// or a label would take the Pods from their workload.
func TestSelectorLabelsOnPodsNotMade(t *testing.T) {
	d := obj(t, rolloutWeb)
	for name, c := range map[string]struct {
		start []Object
		end   Object
	}{
		"unchanged":                {[]Object{d, obj(t, webService(`{"app":"web"}`))}, obj(t, webService(`{"app":"web"}`))},
		"made by the solve":        {[]Object{d}, obj(t, webService(`{"app":"web"}`))},
		"no workload's Pods":       {[]Object{d, obj(t, webService(`{"app":"web"}`))}, obj(t, webService(`{"app":"api"}`))},
		"the workload's own label": {[]Object{d, obj(t, webService(`{"app":"webapp"}`))}, obj(t, webService(`{"app":"web"}`))},
	} {
		for _, m := range Generate(c.start, []Object{d, c.end}, []string{"rollout"}) {
			for _, e := range m.Edits {
				if e.Label != nil {
					t.Errorf("%s: mutant %s labels Pods", name, m.ID)
				}
			}
		}
	}
}

// TestTemplateLabelsOnPods: the learner who labels the running Pods
// instead of changing the Pod template's labels as the solve does. The
// Deployment stays at the step's start, its Pods get the solve's labels
// but never one of its selector's, and the undo puts the start's back.
func TestTemplateLabelsOnPods(t *testing.T) {
	start := obj(t, strings.Replace(rolloutWeb, `"version":"3"`, `"version":"2","team":"a"`, 1))
	end := obj(t, strings.Replace(rolloutWeb, `"version":"3"`, `"version":"3","tier":"front"`, 1))
	const id = "Deployment rollout/web: spec.template.metadata.labels → the step's start, the running Pods labelled team- tier=front version=3 instead"
	m := byID(t, Generate([]Object{start}, []Object{end}, []string{"rollout"}), id)
	if len(m.Edits) != 2 || labelMap(get(m.Edits[0].To, "spec", "template", "metadata", "labels"))["version"] != "2" {
		t.Fatalf("edits %+v, want the Deployment at the step's start first", m.Edits)
	}
	rl := m.Edits[1].Label
	if rl == nil || rl.SelectorString() != "app=web" {
		t.Fatalf("relabel %+v, want the Pods of the Deployment's selector", rl)
	}
	if got := strings.Join(m.Undo()[0].Label.Args(), " "); got != "team=a tier- version=2" {
		t.Errorf("the undo labels %q, want the start template's labels back", got)
	}
	// A solve that changes the template but not its labels: nothing to
	// label.
	image := obj(t, strings.Replace(rolloutWeb, `"web:1"`, `"web:2"`, 1))
	for _, m := range Generate([]Object{obj(t, rolloutWeb)}, []Object{image}, []string{"rollout"}) {
		if len(m.Edits) > 1 && m.Edits[1].Label != nil {
			t.Errorf("mutant %s labels Pods, though the solve changed no label", m.ID)
		}
	}
}
