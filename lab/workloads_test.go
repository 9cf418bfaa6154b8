package lab

import (
	"slices"
	"strings"
	"testing"
)

// workloadsLab needs running Pods in the places TestLintDeclaredWorkloads
// expects, and reads only stored state everywhere else.
const workloadsLab = `apiVersion: labctl.dev/v1alpha1
kind: Lab
metadata:
  name: w
cluster:
  workloads: MODE
steps:
  - id: one
    title: One
    instructions: Deployment web and Pod web-0 in team-a.
    setup: |
      kubectl apply -f /opt/lab/fixtures/logs/
      kubectl -n team-a wait deploy web --for=jsonpath='{.status.replicas}'=2
    checks:
      - name: phase
        kube: {apiVersion: v1, kind: Pod, namespace: team-a, name: web-0, field: {path: status.phase, equals: Running}}
      - name: ready
        kube: {apiVersion: apps/v1, kind: Deployment, namespace: team-a, name: web, field: {path: 'status.readyReplicas', equals: 2}}
      - name: counted
        kube: {apiVersion: apps/v1, kind: Deployment, namespace: team-a, name: web, field: {path: status.replicas, equals: 2}}
      - name: spec-phase
        kube: {apiVersion: v1, kind: ConfigMap, namespace: team-a, name: web, field: {path: status.phase, exists: false}}
      - name: logged
        command: {run: [kubectl, -n, team-a, logs, deploy/web]}
      - name: condition
        kube: {apiVersion: v1, kind: Pod, namespace: team-a, name: web-0, wait: true, field: {path: 'status.conditions[?(@.type=="Ready")].status', equals: "True"}}
      - name: scheduled
        kube: {apiVersion: v1, kind: Pod, namespace: team-a, name: web-0, field: {path: 'status.conditions[?(@.type=="PodScheduled")].status', equals: "True"}}
    probe:
      run: kubectl -n team-a port-forward svc/web 8080:80 & sleep 1; curl -s localhost:8080
    solve: |
      kubectl -n team-a get deploy web -o name | grep -q web && kubectl -n team-a rollout status deploy/web
    mistakes:
      - name: waits
        script: kubectl wait -n team-a pod/web-0 "--for=condition=Ready" --timeout=30s
        fails: [phase]
      - name: stored
        script: kubectl -n team-a scale deploy web --replicas=1
        fails: [counted]
    alternatives:
      - name: exec
        script: echo ok; $(kubectl exec -n team-a web-0 -- true)
`

func TestLintDeclaredWorkloads(t *testing.T) {
	for _, mode := range []string{WorkloadsDeclare, WorkloadsRun} {
		l, err := Parse("lab.yaml", []byte(strings.Replace(workloadsLab, "MODE", mode, 1)))
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		var got []string
		for _, w := range l.Lint() {
			if strings.Contains(w.Msg, "needs a running Pod") {
				got = append(got, w.Path)
				if w.Line == 0 {
					t.Errorf("warning without a line: %s", w)
				}
			}
		}
		want := []string{
			"steps[0].checks[0].kube.field.path",
			"steps[0].checks[1].kube.field.path",
			"steps[0].checks[4].command.run",
			"steps[0].checks[5].kube.field.path",
			"steps[0].probe.run",
			"steps[0].solve",
			"steps[0].mistakes[0].script",
			"steps[0].alternatives[0].script",
		}
		if mode == WorkloadsRun {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Errorf("workloads %s: warned at %q, want %q", mode, got, want)
		}
	}
}

func TestLintDeclaredWorkloadsMessage(t *testing.T) {
	l, err := Parse("lab.yaml", []byte(strings.Replace(workloadsLab, "MODE", WorkloadsDeclare, 1)))
	if err != nil {
		t.Fatal(err)
	}
	msgs := map[string]string{}
	for _, w := range l.Lint() {
		msgs[w.Path] = w.String()
	}
	for p, want := range map[string]string{
		"steps[0].checks[0].kube.field.path": `check "phase" reads status.phase of a Pod, which needs a running Pod, but cluster.workloads is declare`,
		"steps[0].checks[1].kube.field.path": `check "ready" reads readyReplicas of a Deployment`,
		"steps[0].solve":                     `the solve script of step "one" runs "kubectl rollout status"`,
		"steps[0].mistakes[0].script":        `mistake "waits" of step "one" runs "kubectl wait --for=condition=Ready"`,
		"steps[0].probe.run":                 `the probe run of step "one" runs "kubectl port-forward"`,
	} {
		if !strings.Contains(msgs[p], want) || !strings.Contains(msgs[p], "set cluster.workloads: run") {
			t.Errorf("%s: warning %q, want it to hold %q and the fix", p, msgs[p], want)
		}
	}
}

// The verb is kubectl's subcommand, not any argument: a resource named logs
// or top reads stored state.
func TestRunningPodCommandVerb(t *testing.T) {
	for script, want := range map[string]string{
		"kubectl get configmap logs -o yaml":                   "",
		"kubectl -n team-a describe pod top":                   "",
		"kubectl --context kind-x -n a top pod":                "kubectl top",
		"kubectl --namespace=a logs deploy/web":                "kubectl logs",
		"kubectl -v 6 exec web-0 -- true":                      "kubectl exec",
		"kubectl apply -f logs/ && kubectl -n a get pods":      "",
		"kubectl -n a rollout history deploy/status":           "",
		"kubectl -n a rollout --request-timeout 5s status d/w": "kubectl rollout status",
		"kubectl get pods -l app=wait --for=condition=Ready":   "",
		"kubectl -n a wait pod/x --for condition=Ready":        "kubectl wait --for=condition=Ready",
		"kubectl -n a wait pod/x --for=condition=Ready":        "kubectl wait --for=condition=Ready",
		"kubectl -n": "",
	} {
		if got := runningPodCommand(script); got != want {
			t.Errorf("runningPodCommand(%q) = %q, want %q", script, got, want)
		}
	}
}
