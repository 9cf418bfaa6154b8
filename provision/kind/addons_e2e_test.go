//go:build e2e

package kind

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/cmd/labctl/e2etest"
	"github.com/labctl/labctl/internal/fsx"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/docker"
)

const netToolRef = "labctl.local/e2e-net-tool:1"

// addonsApp is a two-replica server spread over the workers, its Service,
// and two idle clients, all running net-tool; and a Pod with a claim of the
// default StorageClass.
const addonsApp = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: e2e-net}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      containers:
      - name: web
        image: ` + netToolRef + `
        args: [serve]
        env: [{name: NODE_NAME, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}]
        readinessProbe: {httpGet: {path: /, port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: e2e-net}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: e2e-net, labels: {app: client}}
spec:
  containers: [{name: c, image: ` + netToolRef + `, args: [idle]}]
---
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: e2e-net, labels: {app: other}}
spec:
  containers: [{name: c, image: ` + netToolRef + `, args: [idle]}]
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: e2e-net}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 100Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: store, namespace: e2e-net}
spec:
  containers:
  - name: c
    image: ` + netToolRef + `
    args: [idle]
    volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
`

// webIngress and webGateway send web.lab.test (an Ingress, port 80) and
// gw.lab.test (an HTTPRoute on a Gateway listening on 8080) to web.
const webIngress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: e2e-net}
spec:
  rules:
  - host: web.lab.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`

const webGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: e2e-net}
spec:
  gatewayClassName: labctl
  listeners: [{name: http, port: 8080, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: e2e-net}
spec:
  parentRefs: [{name: gw}]
  hostnames: [gw.lab.test]
  rules:
  - backendRefs: [{name: web, port: 80}]
`

const denyIngress = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all, namespace: e2e-net}
spec:
  podSelector: {}
  policyTypes: [Ingress]
`

const allowClient = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: web-from-client, namespace: e2e-net}
spec:
  podSelector: {matchLabels: {app: web}}
  policyTypes: [Ingress]
  ingress:
  - from: [{podSelector: {matchLabels: {app: client}}}]
    ports: [{port: 8080}]
`

const denyClientEgress = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: client-egress, namespace: e2e-net}
spec:
  podSelector: {matchLabels: {app: client}}
  policyTypes: [Egress]
`

// TestE2EAddons: a lab with two labelled workers and the networkPolicy and
// storage add-ons. Its Pods spread over the workers and reach each other
// across nodes by Pod IP and through a Service; a deny-all policy stops
// that traffic, on one node and across nodes, a policy allowing one client
// lets that client through and no other, and an egress policy stops what
// leaves one Pod only; a claim of the default class binds and its Pod
// writes to it; an Ingress and an HTTPRoute answer from the sandbox through
// the ingress add-on; kubectl top pods works for the learner.
//
//	flock /tmp/labctl-e2e.lock go test -tags e2e -count=1 -run TestE2EAddons ./provision/kind/ -timeout 40m -v
func TestE2EAddons(t *testing.T) {
	e2etest.Heavy(t)
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	ctx := context.Background()
	engine, err := docker.NewEngine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()

	labDir := t.TempDir()
	if err := fsx.CopyTree(os.DirFS("testdata/net-tool"), filepath.Join(labDir, "images", "net-tool"), fsx.ExecBit); err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	// Each check's Pod must be created and run within its timeout, on a
	// machine whose two cores other tests share: a new Pod's network comes
	// from two add-ons on a loaded node.
	reachCheck := func(name string, labels map[string]string, to string, allowed *bool) lab.Check {
		return lab.Check{Name: name, Timeout: lab.Duration{Duration: 90 * time.Second},
			Reach: &lab.ReachCheck{From: lab.ReachFrom{Namespace: "e2e-net", Labels: labels}, To: to, Allowed: allowed}}
	}
	l := e2etest.NewLab("e2e-addons", "e2e-net", lab.Step{ID: "one", Checks: []lab.Check{
		{Name: "ns", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "e2e-net"}},
	}}, lab.Step{ID: "reach", Checks: []lab.Check{
		reachCheck("client-to-web", map[string]string{"app": "client"}, "web:80", &yes),
		reachCheck("other-to-web", map[string]string{"app": "other"}, "web.e2e-net:80", &yes),
		reachCheck("web-to-web", map[string]string{"app": "web"}, "web:80", &yes),
		reachCheck("no-such-name", nil, "no-such-service:80", &no),
	}})
	// reachRound runs the reach checks through the grader and wants those
	// named to pass and the others to fail.
	reachRound := func(t *testing.T, env interface {
		RunChecks(context.Context, checks.Round) ([]checks.Result, error)
	}, passing ...string) {
		t.Helper()
		results, err := env.RunChecks(ctx, checks.Round{Checks: l.Steps[1].Checks})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			want := checks.Fail
			if slices.Contains(passing, r.Name) {
				want = checks.Pass
			}
			if r.Status != want {
				t.Errorf("reach check %s: %s (%s), want %s", r.Name, r.Status, r.Message, want)
			}
		}
	}
	l.Cluster.Images = []lab.Image{{Name: netToolRef, Build: "images/net-tool"}}
	l.Cluster.Workers = []lab.Node{{Labels: map[string]string{"zone": "a"}}, {Labels: map[string]string{"zone": "b"}}}
	l.Cluster.Addons = []string{lab.AddonNetworkPolicy, lab.AddonStorage, lab.AddonIngress, lab.AddonMetrics}
	node, sb := e2etest.Images()
	h := &e2eHarness{t: t, engine: engine, opts: Options{
		Lab: l, LabDir: labDir, NodeImage: node, SandboxImage: sb, CheckerBinary: e2eChecker(t),
	}}
	if err := Down(ctx, l); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Down(context.Background(), l) })

	w := &cancelAt{step: "\x00never", cancel: func() {}}
	env, err := h.up(ctx, w)
	if err != nil {
		t.Fatalf("up: %v\n%s", err, w.buf.String())
	}
	defer func() { env.Close() }()
	if want := "✓ Starting the cluster's add-ons: network, network-policy, storage, ingress, metrics"; !strings.Contains(w.buf.String(), want) {
		t.Errorf("status lines lack %q:\n%s", want, w.buf.String())
	}

	admin := func(args ...string) string {
		t.Helper()
		out, err := execIn(ctx, engine, controlPlaneNode(l.Metadata.Name),
			append([]string{"kubectl", "--kubeconfig=/etc/kubernetes/admin.conf"}, args...))
		if err != nil {
			t.Fatalf("kubectl %s: %v", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(out)
	}
	nodes := admin("get", "nodes", "-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.labels.zone} {.spec.taints[*].key}{"\n"}{end}`)
	t.Logf("nodes:\n%s", nodes)
	if lines := strings.Split(nodes, "\n"); len(lines) != 3 || !strings.Contains(nodes, " a") || !strings.Contains(nodes, " b") ||
		strings.Contains(nodes, networkUnreadyTaint) {
		t.Fatalf("want three nodes, workers labelled zone a and b, none tainted %s:\n%s", networkUnreadyTaint, nodes)
	}

	if code, out := script(t, env, "set -e\nkubectl apply -f - >/dev/null <<'EOF'\n"+addonsApp+"EOF\n"+
		"kubectl -n e2e-net rollout status deployment/web --timeout=120s\n"+
		"kubectl -n e2e-net wait --for=condition=Ready pod/client pod/other pod/store --timeout=120s\n"+
		"kubectl -n e2e-net wait --for=jsonpath='{.status.phase}'=Bound pvc/data --timeout=60s"); code != 0 {
		_, events := script(t, env, "kubectl -n e2e-net get pods,pvc -o wide; kubectl -n e2e-net get events --sort-by=.lastTimestamp | tail -20")
		t.Fatalf("the lab's Pods did not start (%d):\n%s\n%s", code, out, events)
	}

	t.Log("the server's Pods are spread over the two workers")
	placed := admin("-n", "e2e-net", "get", "pods", "-l", "app=web", "-o", `jsonpath={range .items[*]}{.spec.nodeName} {.status.podIP}{"\n"}{end}`)
	var webIPs, webNodes []string
	for _, line := range strings.Split(placed, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("web Pods: %q", placed)
		}
		webNodes, webIPs = append(webNodes, f[0]), append(webIPs, f[1])
	}
	slices.Sort(webNodes)
	if len(webNodes) != 2 || webNodes[0] == webNodes[1] || slices.Contains(webNodes, controlPlaneNode(l.Metadata.Name)) {
		t.Fatalf("web Pods are on %v, want one on each worker", webNodes)
	}
	clientNode := admin("-n", "e2e-net", "get", "pod", "client", "-o", "jsonpath={.spec.nodeName}")
	t.Logf("web Pods %v on %v; the client on %s", webIPs, webNodes, clientNode)

	get := func(from, url string) (int, string) {
		return script(t, env, "kubectl -n e2e-net exec "+from+" -- /app get "+url)
	}
	// reach waits, up to 30 s, until from reaches both web Pods (or
	// neither) twice in a row: a policy takes effect shortly after it is
	// stored, on each node in turn.
	reach := func(from string, want bool) {
		t.Helper()
		for _, ip := range webIPs {
			var code, streak int
			var out string
			for deadline := time.Now().Add(30 * time.Second); streak < 2 && time.Now().Before(deadline); {
				if code, out = get(from, "http://"+ip+":8080/"); (code == 0) == want {
					streak++
				} else {
					streak = 0
					time.Sleep(500 * time.Millisecond)
				}
			}
			if streak < 2 {
				t.Errorf("%s → web Pod %s: exit %d, want reachable=%v:\n%s", from, ip, code, want, out)
			}
		}
	}

	t.Log("Pods reach each other on one node and across nodes, and through the Service")
	reach("client", true)
	reach("other", true)
	if code, out := get("client", "http://web/"); code != 0 || !strings.Contains(out, "served by") {
		t.Errorf("client → Service web: exit %d:\n%s", code, out)
	}

	t.Log("reach checks see the same from Pods of their own, which join no Service and no ReplicaSet")
	webPods := admin("-n", "e2e-net", "get", "pods", "-l", "app=web", "-o", "name")
	reachRound(t, env, "client-to-web", "other-to-web", "web-to-web", "no-such-name")
	if after := admin("-n", "e2e-net", "get", "pods", "-l", "app=web", "-o", "name"); after != webPods {
		t.Errorf("web's Pods changed over a round of reach checks standing in for them:\n%s\nthen\n%s", webPods, after)
	}
	if left := admin("-n", "e2e-net", "get", "pods", "-o", "name"); strings.Contains(left, "labctl-reach-") {
		t.Errorf("reach checks left their Pods behind:\n%s", left)
	}

	t.Log("a deny-all ingress policy stops it")
	if code, out := script(t, env, "kubectl apply -f - <<'EOF'\n"+denyIngress+"EOF"); code != 0 {
		t.Fatalf("applying deny-all: %s", out)
	}
	reach("client", false)
	reach("other", false)

	t.Log("allowing the client lets the client through, and no other Pod")
	if code, out := script(t, env, "kubectl apply -f - <<'EOF'\n"+allowClient+"EOF"); code != 0 {
		t.Fatalf("applying the allow policy: %s", out)
	}
	reach("client", true)
	reach("other", false)
	reachRound(t, env, "client-to-web", "no-such-name")

	t.Log("a reach check waits for the policy agents to program its Pod: stopped until then, a wrong answer still fails")
	for try := 1; ; try++ {
		var results []checks.Result
		agentsPaused(t, engine, nodeNames(nodes), func() {
			// The policy lets the client through; a check that wants it kept
			// out must fail. Before the agents know the check's Pod, web's
			// rules drop its traffic, which a check judging then would pass.
			var err error
			results, err = env.RunChecks(ctx, checks.Round{Checks: []lab.Check{reachCheck("client-kept-out", map[string]string{"app": "client"}, "web:80", &no)}})
			if err != nil {
				t.Fatal(err)
			}
		}, func() string {
			out, _ := execIn(ctx, engine, controlPlaneNode(l.Metadata.Name),
				[]string{"kubectl", "--kubeconfig=/etc/kubernetes/admin.conf", "-n", "e2e-net", "get", "pods", "-o", "name"})
			return out
		})
		if len(results) == 1 && results[0].Status == checks.Fail {
			break
		}
		// An agent that the pause left syncing no more (kube-router after
		// SIGSTOP and SIGCONT, now and then) makes the check say it could
		// not run, as it must; the pause is the test's, so the agent is
		// made anew and the round runs once more. A pass is never excused.
		wedged := wedgedAgents(results)
		if try > 1 || len(wedged) == 0 || results[0].Status != checks.Error {
			t.Errorf("with the agents paused while its Pod started, the check says %+v, want a failure", results)
			break
		}
		for _, pod := range wedged {
			t.Logf("policy agent %s syncs no more after the pause; its log's end:\n%s", pod, admin("-n", checks.PolicyAgentNamespace, "logs", pod, "--tail=30"))
			admin("-n", checks.PolicyAgentNamespace, "delete", "pod", pod, "--wait")
		}
		admin("-n", checks.PolicyAgentNamespace, "rollout", "status", "daemonset/labctl-network-policy", "--timeout=3m")
	}
	t.Log("a policy agent that stops answering is made anew by its liveness probe, and the next round is judged")
	{
		node := webNodes[0]
		pod := admin("-n", checks.PolicyAgentNamespace, "get", "pods", "-l", checks.PolicyAgentSelector,
			"--field-selector", "spec.nodeName="+node, "-o", "jsonpath={.items[0].metadata.name}")
		state := func() string {
			return admin("-n", checks.PolicyAgentNamespace, "get", "pod", pod, "-o",
				"jsonpath={.status.containerStatuses[0].restartCount} {.status.containerStatuses[0].ready}")
		}
		before := state()
		signalAgents(t, engine, []string{node}, "STOP") // and never CONT
		began := time.Now()
		for now := state(); ; now = state() {
			if now != before && strings.HasSuffix(now, " true") {
				t.Logf("agent %s on %s: restarts and readiness %q, then %q after %s", pod, node, before, now, time.Since(began).Round(time.Second))
				break
			}
			if time.Since(began) > 4*time.Minute {
				t.Fatalf("agent %s on %s, stopped for good, was not restarted: restarts and readiness %q, then %q\n%s", pod, node, before, now,
					admin("-n", checks.PolicyAgentNamespace, "describe", "pod", pod))
			}
			time.Sleep(2 * time.Second)
		}
	}

	t.Log("deleting the Pod a reach check stands in for changes nothing")
	if code, out := script(t, env, "kubectl -n e2e-net delete pod other --wait"); code != 0 {
		t.Fatalf("deleting other: %s", out)
	}
	reachRound(t, env, "client-to-web", "no-such-name")

	t.Log("an egress policy stops what leaves the client, and nothing else")
	if code, out := script(t, env, "set -e\nkubectl -n e2e-net delete networkpolicy deny-all web-from-client >/dev/null\n"+
		"kubectl apply -f - <<'EOF'\n"+denyClientEgress+"EOF"); code != 0 {
		t.Fatalf("applying the egress policy: %s", out)
	}
	reach("client", false)
	reachRound(t, env, "other-to-web", "web-to-web", "no-such-name")

	t.Log("the learner can neither stop the add-ons nor write policies beside them")
	for _, attack := range []string{
		"kubectl -n labctl-system delete daemonset labctl-network-policy",
		"kubectl -n labctl-system scale deployment local-path-provisioner --replicas=0",
		"kubectl -n labctl-system patch daemonset labctl-network -p '{\"spec\":{\"template\":{\"spec\":{\"nodeSelector\":{\"none\":\"x\"}}}}}'",
		"kubectl delete clusterrolebinding labctl-network-policy",
		"kubectl -n labctl-system apply -f - <<'EOF'\n" + strings.Replace(denyIngress, "e2e-net", "labctl-system", 1) + "EOF",
		"kubectl -n labctl-system delete deployment labctl-ingress",
		"kubectl delete ingressclass labctl",
		"kubectl delete gatewayclass labctl",
		"kubectl delete apiservice v1beta1.metrics.k8s.io",
	} {
		if code, out := script(t, env, attack); code == 0 || !strings.Contains(out, "forbidden") {
			t.Errorf("the learner's %q: exit %d, want forbidden:\n%s", attack, code, out)
		}
	}

	t.Log("the claim's volume takes a write")
	if code, out := script(t, env, "set -e\nkubectl -n e2e-net exec store -- /app write /data/proof written-through-the-claim\n"+
		"kubectl -n e2e-net exec store -- /app cat /data/proof"); code != 0 || !strings.Contains(out, "written-through-the-claim") {
		t.Fatalf("writing to the claim: exit %d:\n%s", code, out)
	}
	if sc := admin("get", "storageclass", "standard", "-o", "jsonpath={.provisioner}"); sc != storageProvisioner {
		t.Errorf("the default class's provisioner is %q, want %q", sc, storageProvisioner)
	}

	t.Log("an Ingress answers from the sandbox at the address its status shows, through the ingress add-on")
	waitAddress := "for i in $(seq 60); do ip=$(kubectl -n e2e-net get %s -o jsonpath='%s'); [ -n \"$ip\" ] && break; sleep 1; done\n"
	if code, out := script(t, env, "set -e\nkubectl apply -f - >/dev/null <<'EOF'\n"+webIngress+"EOF\n"+
		fmt.Sprintf(waitAddress, "ingress web", "{.status.loadBalancer.ingress[0].ip}")+
		"echo address=$ip\ncurl -fsS --max-time 10 -H 'Host: web.lab.test' http://$ip/\n"+
		"curl -sS --max-time 10 -o /dev/null -w 'unrouted=%{http_code}\\n' -H 'Host: nothing.lab.test' http://$ip/"); code != 0 ||
		!strings.Contains(out, "served by") || !strings.Contains(out, "unrouted=404") {
		_, logs := script(t, env, "kubectl -n e2e-net get ingress -o wide")
		t.Errorf("the Ingress: exit %d:\n%s\n%s\n%s", code, out, logs, admin("-n", "labctl-system", "logs", "deployment/labctl-ingress", "--tail=30"))
	}
	if ip := admin("get", "node", controlPlaneNode(l.Metadata.Name), "-o", "jsonpath={.status.addresses[?(@.type=='InternalIP')].address}"); !strings.Contains(
		admin("-n", "e2e-net", "get", "ingress", "web", "-o", "jsonpath={.status.loadBalancer.ingress[0].ip}"), ip) {
		t.Errorf("the Ingress's address is not the control-plane node's %s", ip)
	}

	t.Log("an HTTPRoute on a Gateway of the labctl class answers on the listener's port")
	if code, out := script(t, env, "set -e\nkubectl apply -f - >/dev/null <<'EOF'\n"+webGateway+"EOF\n"+
		"kubectl -n e2e-net wait --for=condition=Programmed gateway/gw --timeout=60s\n"+
		"kubectl -n e2e-net wait --for=jsonpath='{.status.parents[0].conditions[?(@.type==\"Accepted\")].status}'=True httproute/web --timeout=60s\n"+
		fmt.Sprintf(waitAddress, "gateway gw", "{.status.addresses[0].value}")+
		"curl -fsS --max-time 10 -H 'Host: gw.lab.test' http://$ip:8080/"); code != 0 || !strings.Contains(out, "served by") {
		_, st := script(t, env, "kubectl -n e2e-net get gateway,httproute -o yaml")
		t.Errorf("the HTTPRoute: exit %d:\n%s\n%s\n%s", code, out, st, admin("-n", "labctl-system", "logs", "deployment/labctl-ingress", "--tail=30"))
	}

	t.Log("kubectl top pods works for the learner once metrics-server has scraped the kubelets")
	if code, out := script(t, env, "for i in $(seq 90); do kubectl -n e2e-net top pods 2>&1 | grep -q '^web-' && break; sleep 1; done\n"+
		"kubectl -n e2e-net top pods"); code != 0 || !strings.Contains(out, "web-") {
		t.Errorf("kubectl top pods: exit %d:\n%s\n%s", code, out, admin("-n", "labctl-system", "logs", "deployment/metrics-server", "--tail=30"))
	}
	if out := admin("top", "nodes"); !strings.Contains(out, controlPlaneNode(l.Metadata.Name)) {
		t.Errorf("kubectl top nodes:\n%s", out)
	}
}

// nodeNames are the first fields of lines "NAME ...".
func nodeNames(lines string) []string {
	var out []string
	for _, l := range strings.Split(lines, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// wedgedAgents names the policy agents a reach check's error says made no
// sync at all while it waited ("labctl-network-policy-x7k2p: 0 of 3 syncs").
func wedgedAgents(results []checks.Result) []string {
	if len(results) != 1 {
		return nil
	}
	var out []string
	for _, m := range regexp.MustCompile(`(labctl-network-policy-[a-z0-9]+): 0 of \d+ syncs`).FindAllStringSubmatch(results[0].Message, -1) {
		out = append(out, m[1])
	}
	return out
}

// signalAgents sends sig (STOP, CONT) to the policy agent's process on
// each of nodes.
func signalAgents(t *testing.T, engine *docker.Engine, nodes []string, sig string) {
	t.Helper()
	for _, n := range nodes {
		cmd := `for p in /proc/[0-9]*; do [ "$(cat $p/comm 2>/dev/null)" = kube-router ] && kill -` + sig + ` ${p#/proc/}; done; true`
		if out, err := execIn(context.Background(), engine, n, []string{"sh", "-c", cmd}); err != nil {
			t.Errorf("kill -%s kube-router on %s: %v\n%s", sig, n, err, out)
		}
	}
}

// agentsPaused runs round while, from the moment a reach check's Pod
// appears (pods lists them) and for eight seconds, every node's policy
// agent process is stopped (SIGSTOP): its rules stay as they were, and its
// metrics do not answer.
func agentsPaused(t *testing.T, engine *docker.Engine, nodes []string, round func(), pods func() string) {
	t.Helper()
	signal := func(sig string) { signalAgents(t, engine, nodes, sig) }
	paused := make(chan struct{})
	go func() {
		defer close(paused)
		for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if strings.Contains(pods(), "labctl-reach-") {
				signal("STOP")
				time.Sleep(8 * time.Second)
				signal("CONT")
				return
			}
		}
		t.Error("no reach check's Pod appeared within 60 s")
	}()
	defer func() { <-paused }()
	round()
}
