//go:build e2e

package kind

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

const secNS = "e2e-sec-ns"

// securityLab reads a ConfigMap of its namespace by a kube check, another
// by a kube: reference, and its namespace; nothing else.
func securityLab() *lab.Lab {
	l := e2eTestLab()
	l.Metadata.Name = "e2e-sec"
	l.Cluster.Namespaces = []string{secNS}
	// The learner is root on the node, so the way there is attacked too.
	l.Cluster.NodeAccess = true
	l.Steps[0].Checks = []lab.Check{
		{Name: "named", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "ConfigMap", Namespace: secNS, Name: "named"}},
		{Name: "by-ref", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: secNS,
			Field: &lab.FieldAssert{Path: "metadata.name", Assert: lab.Assert{Equals: &lab.Value{Ref: "kube:v1/ConfigMap/" + secNS + "/ref-only#data.ns"}}}}},
	}
	// The second step's checks list by label and ask about access.
	everything, no := "", false
	l.Steps = append(l.Steps, lab.Step{ID: "access", Title: "access", Checks: []lab.Check{
		{Name: "no-broad-binding", Kube: &lab.KubeCheck{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding", Namespace: secNS, Selector: &everything,
			Count: &lab.Range{}, Field: &lab.FieldAssert{Path: "roleRef.name", Assert: lab.Assert{NotEquals: &lab.Value{Literal: "edit"}}}}},
		{Name: "default-cannot-read-secrets", Access: &lab.AccessCheck{ServiceAccount: secNS + "/default", Verb: "get", Resource: "secrets", Namespace: secNS, Allowed: &no}},
	}})
	return l
}

// TestE2ESecurity attacks a real lab from the learner's side: with the
// learner's own kubeconfig in the sandbox, no Pod may reach the node, no
// request may reach what lies outside the lab's namespaces, the namespace
// cannot be relabelled, kind's bootstrap token is gone; and the grader's
// token reads exactly what the lab names, for an hour, renewed by Connect.
//
//	go test -tags e2e ./provision/kind/ -run TestE2ESecurity -timeout 20m -v
func TestE2ESecurity(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	l := securityLab()
	env := upFresh(t, ctx, l)
	admin, err := env.Runtime().Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	nodeName := controlPlaneNode(l.Metadata.Name)

	t.Run("the way onto the node takes the lab's client certificate only, and outlives the kubelet", func(t *testing.T) {
		// The learner's way: a root shell, the command's exit code and
		// stdin, also while the node's kubelet is stopped.
		code, out := script(t, env, `n=`+nodeName+`
node "$n" id -u; node "$n" sh -c 'echo out; echo err >&2; exit 7' 2>/dev/null; echo "exit=$?"
node "$n" sh -c 'echo out; echo err >&2' 2>&1 >/dev/null
printf 'piped\n' | node "$n" cat
node "$n" systemctl stop kubelet; node "$n" systemctl is-active kubelet; echo "stopped exit=$?"
node "$n" systemctl start kubelet; node "$n" systemctl is-active kubelet
node nosuch true; echo "unknown exit=$?"
kubectl -n `+provision.NodeAccessNamespace+` get secrets 2>&1 | grep -c Forbidden`)
		for _, want := range []string{"0\nout\nexit=7\nerr\npiped\n", "inactive\nstopped exit=3\nactive\n", "is not a node of this lab", "unknown exit=2\n1\n"} {
			if code != 0 || !strings.Contains(out, want) {
				t.Errorf("node as the learner: exit %d, output %q; want %q in it", code, out, want)
			}
		}
		// From the same network without the lab's client certificate: none,
		// and one of another CA (the cluster's own admin certificate).
		if len(admin.CertData) == 0 || len(admin.KeyData) == 0 {
			t.Fatal("the cluster's admin config holds no client certificate to attack with")
		}
		if err := env.Runtime().WriteFile(ctx, "/tmp/other.crt", admin.CertData); err != nil {
			t.Fatal(err)
		}
		if err := env.Runtime().WriteFile(ctx, "/tmp/other.key", admin.KeyData); err != nil {
			t.Fatal(err)
		}
		code, out = script(t, env, `python3 - `+nodeName+` <<'PY'
import socket, ssl, subprocess, sys
name = sys.argv[1]
addr = subprocess.run(["kubectl", "get", "-n", "`+provision.NodeAccessNamespace+`", "pod/" + name, "-o", "jsonpath={.status.hostIP}"], capture_output=True, text=True).stdout.strip()
def shell(cert):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations("`+provision.NodeAccessTLSDir+`/ca.crt")
    if cert:
        ctx.load_cert_chain(*cert)
    try:
        s = ctx.wrap_socket(socket.create_connection((addr, `+fmt.Sprint(provision.NodeAccessPort)+`), timeout=10), server_hostname=name)
        head = b"0\0xterm\0\0\0id"
        s.sendall(b"H" + len(head).to_bytes(4, "big") + head + b"E\0\0\0\0")
        got = b""
        while True:
            d = s.recv(4096)
            if not d:
                break
            got += d
        return "shell: %r" % got
    except (OSError, ssl.SSLError) as e:
        return "refused: %s" % e
print("lab:", shell(("`+provision.NodeAccessTLSDir+`/tls.crt", "`+provision.NodeAccessTLSDir+`/tls.key")))
print("none:", shell(None))
print("other CA:", shell(("/tmp/other.crt", "/tmp/other.key")))
PY`)
		lines := strings.Split(out, "\n")
		if code != 0 || len(lines) < 3 || !strings.Contains(lines[0], "uid=0(root)") ||
			!strings.HasPrefix(lines[1], "none: refused") || !strings.HasPrefix(lines[2], "other CA: refused") {
			t.Errorf("the node's listener: exit %d, output %q; want a shell with the lab's certificate only", code, out)
		}
	})

	// A service check lists the node's processes with the host's ps: a
	// stopped kubelet does not run, however the node's systemctl, which the
	// learner (root there) replaced, answers.
	t.Run("a service check sees the node's processes from the host, whatever the node's systemctl says", func(t *testing.T) {
		service := func(name, unit string, running bool) lab.Check {
			return lab.Check{Name: name, Timeout: lab.Duration{Duration: 10 * time.Second},
				Service: &lab.ServiceCheck{Node: "control-plane", Unit: unit, Running: &running}}
		}
		restore := `n=` + nodeName + `
node "$n" sh -c 'if [ -f /usr/bin/systemctl.real ]; then mv /usr/bin/systemctl.real /usr/bin/systemctl; fi; systemctl start kubelet'`
		t.Cleanup(func() { script(t, env, restore) })
		code, out := script(t, env, `n=`+nodeName+`
node "$n" systemctl stop kubelet
node "$n" sh -c 'cp /usr/bin/systemctl /usr/bin/systemctl.real && printf "#!/bin/sh\necho active\n" > /usr/bin/systemctl && chmod 755 /usr/bin/systemctl'
node "$n" systemctl is-active kubelet`)
		if code != 0 || !strings.Contains(out, "active") {
			t.Fatalf("replacing the node's systemctl: exit %d, output %q", code, out)
		}
		rs := checkRound(t, ctx, env, service("kubelet-runs", "kubelet.service", true), service("kubelet-stopped", "kubelet.service", false),
			service("containerd-runs", "containerd.service", true))
		wantResult(t, rs[0], checks.Fail, "expected kubelet.service to run on node control-plane, found no process of the node in its control group")
		wantResult(t, rs[1], checks.Pass, "")
		wantResult(t, rs[2], checks.Pass, "containerd.service runs on node control-plane: pid ")
		if code, out := script(t, env, restore); code != 0 {
			t.Fatalf("starting the kubelet again: exit %d, output %q", code, out)
		}
		var r checks.Result
		for range 20 {
			if r = checkRound(t, ctx, env, service("kubelet-runs", "kubelet.service", true))[0]; r.Status == checks.Pass {
				break
			}
			time.Sleep(time.Second)
		}
		wantResult(t, r, checks.Pass, "kubelet.service runs on node control-plane: pid ")
	})

	t.Run("pods that reach the node are refused", func(t *testing.T) {
		pod := func(name, spec, volumes string) string {
			return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  %s
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    command: [/pause]
%s
`, name, spec, volumes)
		}
		for _, tc := range []struct{ name, manifest, refusal string }{
			{"privileged", strings.Replace(pod("priv", "", ""), "command: [/pause]", "command: [/pause]\n    securityContext: {privileged: true}", 1), "privileged"},
			{"hostPID", pod("hostpid", "hostPID: true", ""), "hostPID=true"},
			{"hostNetwork", pod("hostnet", "hostNetwork: true", ""), "hostNetwork=true"},
			{"hostPath", pod("hostpath", "", "    volumeMounts: [{name: root, mountPath: /host}]\n  volumes: [{name: root, hostPath: {path: /}}]"), "hostPath volumes"},
		} {
			code, out := script(t, env, "kubectl create -f - 2>&1 <<'EOF'\n"+tc.manifest+"EOF")
			if code == 0 || !strings.Contains(out, `violates PodSecurity "baseline:latest"`) || !strings.Contains(out, tc.refusal) {
				t.Errorf("%s Pod: exit %d, output %q; want a PodSecurity refusal naming %s", tc.name, code, out, tc.refusal)
			}
		}
		// The same Pod without those is admitted: the refusals above are the
		// Pod Security level's, not some other failure.
		code, out := script(t, env, "kubectl create --dry-run=server -f - 2>&1 <<'EOF'\n"+pod("plain", "", "")+"EOF")
		if code != 0 || !strings.Contains(out, "pod/plain created") {
			t.Errorf("a plain Pod: exit %d, output %q; want it admitted", code, out)
		}
		// A Deployment is admitted with a warning, but its privileged Pods
		// are never made.
		code, out = script(t, env, `kubectl create deployment privd --image=registry.k8s.io/pause:3.10 --dry-run=client -o yaml |
  sed 's/^      - image: .*/&\n        securityContext: {privileged: true}/' | kubectl create -f - 2>&1
for i in $(seq 60); do
  r=$(kubectl get rs -l app=privd -o jsonpath='{.items[0].status.conditions[0].reason}')
  [ "$r" = FailedCreate ] && break
  sleep 0.5
done
echo "reason=$r pods=$(kubectl get pods -l app=privd -o name | wc -l)"`)
		if code != 0 || !strings.Contains(out, "would violate PodSecurity") || !strings.Contains(out, "reason=FailedCreate pods=0") {
			t.Errorf("a privileged Deployment: exit %d, output %q; want a warning and no Pod", code, out)
		}
	})

	t.Run("the learner is confined to the lab's namespaces", func(t *testing.T) {
		forbidden := []struct{ name, cmd string }{
			{"nodes/proxy", "kubectl get --raw /api/v1/nodes/" + nodeName + "/proxy/configz"},
			{"CSRs", "kubectl get certificatesigningrequests"},
			{"pods/exec outside", "kubectl exec -n kube-system etcd-" + nodeName + " -- true"},
			{"secrets outside", "kubectl get secrets -n kube-system"},
			{"secrets everywhere", "kubectl get secrets -A"},
			{"relabel the namespace", "kubectl label ns " + secNS + " pod-security.kubernetes.io/enforce=privileged --overwrite"},
			{"patch the namespace", `kubectl patch ns ` + secNS + ` -p '{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"privileged"}}}'`},
			{"a Role granting namespace writes", "kubectl -n " + secNS + " create role ns-writer --verb=patch,update --resource=namespaces"},
			{"cluster-admin in the namespace", "kubectl -n " + secNS + " create rolebinding me-admin --clusterrole=cluster-admin --serviceaccount=labctl-system:learner"},
		}
		for _, f := range forbidden {
			code, out := script(t, env, f.cmd+" 2>&1")
			if code == 0 || !strings.Contains(strings.ToLower(out), "forbidden") {
				t.Errorf("%s: `%s` exit %d, output %q; want Forbidden", f.name, f.cmd, code, out)
			}
		}
		// can-i agrees, and says yes where the learner is admin: the noes are
		// not a broken kubeconfig.
		code, out := script(t, env, `for a in "create pods/exec -n `+secNS+`" "get secrets -n `+secNS+`" "create pods/exec -n kube-system" "get secrets -n kube-system" \
  "get nodes --subresource=proxy" "create certificatesigningrequests" "patch namespaces/`+secNS+`" "update namespaces/`+secNS+`"; do
  echo "$a: $(kubectl auth can-i $a 2>/dev/null)"
done`)
		want := "create pods/exec -n " + secNS + ": yes\nget secrets -n " + secNS + ": yes\ncreate pods/exec -n kube-system: no\nget secrets -n kube-system: no\n" +
			"get nodes --subresource=proxy: no\ncreate certificatesigningrequests: no\npatch namespaces/" + secNS + ": no\nupdate namespaces/" + secNS + ": no\n"
		if code != 0 || out != want {
			t.Errorf("kubectl auth can-i (exit %d):\n%s\nwant:\n%s", code, out, want)
		}
		// The node's kubelet, on the kind network beside the sandbox, asks the
		// API server about the learner's token and refuses it; it serves
		// nobody anonymously and has no read-only port.
		code, out = script(t, env, `tok=$(kubectl config view --raw -o jsonpath='{.users[0].user.token}')
echo "anonymous $(curl -sk -m 10 -o /dev/null -w '%{http_code}' https://`+nodeName+`:10250/pods)"
echo "learner $(curl -sk -m 10 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" https://`+nodeName+`:10250/pods)"
curl -s -m 5 -o /dev/null http://`+nodeName+`:10255/pods; echo "read-only port exit $?"`)
		if code != 0 || !strings.Contains(out, "anonymous 401\n") || !strings.Contains(out, "learner 403\n") || strings.Contains(out, "read-only port exit 0") {
			t.Errorf("the kubelet API from the sandbox (exit %d):\n%s\nwant 401 anonymous, 403 for the learner, no read-only port", code, out)
		}
		ns, err := cs.CoreV1().Namespaces().Get(ctx, secNS, metav1.GetOptions{})
		if err != nil || ns.Labels[provision.PodSecurityEnforce] != "baseline" || ns.Labels[provision.PodSecurityEnforceVersion] != "latest" {
			t.Errorf("namespace %s labels %v (%v), want enforce=baseline at latest", secNS, ns.Labels, err)
		}
	})

	t.Run("the learner reads the cluster as courses assume, and no secret", func(t *testing.T) {
		code, out := script(t, env, `kubectl get nodes -o name && kubectl get ingressclasses,storageclasses,persistentvolumes,crds,priorityclasses 2>&1 >/dev/null && echo listed`)
		if code != 0 || !strings.Contains(out, "node/"+nodeName+"\n") || !strings.HasSuffix(out, "listed\n") {
			t.Errorf("the learner listing nodes, IngressClasses and StorageClasses: exit %d, output %q", code, out)
		}
		code, out = script(t, env, `for a in "list nodes" "get storageclasses" "list ingressclasses" "list customresourcedefinitions" \
  "get secrets -A" "list configmaps -A" "create serviceaccounts/token -n kube-system" "get nodes --subresource=proxy" "get nodes --subresource=log" "update nodes --subresource=status" "patch nodes" "delete nodes"; do
  echo "$a: $(kubectl auth can-i $a 2>/dev/null)"
done`)
		want := "list nodes: yes\nget storageclasses: yes\nlist ingressclasses: yes\nlist customresourcedefinitions: yes\n" +
			"get secrets -A: no\nlist configmaps -A: no\ncreate serviceaccounts/token -n kube-system: no\nget nodes --subresource=proxy: no\nget nodes --subresource=log: no\nupdate nodes --subresource=status: no\npatch nodes: no\ndelete nodes: no\n"
		if code != 0 || out != want {
			t.Errorf("kubectl auth can-i (exit %d):\n%s\nwant:\n%s", code, out, want)
		}
		for _, cmd := range []string{"kubectl get secrets -A", "kubectl get --raw /api/v1/nodes/" + nodeName + "/proxy/configz"} {
			if code, out := script(t, env, cmd+" 2>&1"); code == 0 || !strings.Contains(out, "forbidden") {
				t.Errorf("`%s`: exit %d, output %q; want Forbidden", cmd, code, out)
			}
		}
		// A lab that narrows the view to none: the same learner, whose
		// token is the one up issued, is refused nodes; then the lab as it
		// was gives them back.
		narrowed := *l
		narrowed.Access.ClusterView = lab.ClusterView{lab.ClusterViewNone}
		if _, _, err := provision.SetupCluster(ctx, cs, admin.CAData, &narrowed); err != nil {
			t.Fatal(err)
		}
		// The API server's authorizer learns of the change from a watch, a
		// moment later.
		if code, out := script(t, env, "for i in $(seq 40); do kubectl get nodes >/dev/null 2>&1 || break; sleep 0.25; done; kubectl get nodes 2>&1; kubectl get storageclasses 2>&1"); code == 0 || strings.Count(out, "forbidden") != 2 {
			t.Errorf("a lab whose clusterView is none: exit %d, output %q; want nodes and StorageClasses Forbidden", code, out)
		}
		if _, _, err := provision.SetupCluster(ctx, cs, admin.CAData, l); err != nil {
			t.Fatal(err)
		}
		if code, out := script(t, env, "for i in $(seq 40); do kubectl get nodes >/dev/null 2>&1 && break; sleep 0.25; done; kubectl get nodes -o name 2>&1"); code != 0 || out != "node/"+nodeName+"\n" {
			t.Errorf("the lab's default view again: exit %d, output %q", code, out)
		}
	})

	t.Run("kind's bootstrap token is gone", func(t *testing.T) {
		secrets, err := cs.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{FieldSelector: "type=bootstrap.kubernetes.io/token"})
		if err != nil || len(secrets.Items) != 0 {
			t.Errorf("bootstrap token Secrets after up: %v (%v)", secrets, err)
		}
		// kind's well-known token no longer authenticates.
		code, out := script(t, env, "kubectl --token=abcdef.0123456789abcdef get --raw /apis/certificates.k8s.io/v1 2>&1")
		if code == 0 || !strings.Contains(out, "Unauthorized") {
			t.Errorf("kind's bootstrap token: exit %d, output %q; want Unauthorized", code, out)
		}
	})

	t.Run("the grader reads what the lab names and nothing else", func(t *testing.T) {
		for _, name := range []string{"named", "ref-only", "unnamed"} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: secNS}, Data: map[string]string{"ns": secNS}}
			if _, err := cs.CoreV1().ConfigMaps(secNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "named", Namespace: secNS}, StringData: map[string]string{"k": "v"}}
		if _, err := cs.CoreV1().Secrets(secNS).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		g := graderClient(t, admin, mustGrader(t, env))
		if _, err := g.CoreV1().ConfigMaps(secNS).Get(ctx, "named", metav1.GetOptions{}); err != nil {
			t.Errorf("the grader cannot read the ConfigMap a check names: %v", err)
		}
		if _, err := g.CoreV1().ConfigMaps(secNS).Get(ctx, "ref-only", metav1.GetOptions{}); err != nil {
			t.Errorf("the grader cannot read the ConfigMap a reference names: %v", err)
		}
		if _, err := g.CoreV1().Namespaces().Get(ctx, secNS, metav1.GetOptions{}); err != nil {
			t.Errorf("the grader cannot read the Namespace a check names: %v", err)
		}
		refused := map[string]error{}
		_, refused["an unnamed ConfigMap"] = g.CoreV1().ConfigMaps(secNS).Get(ctx, "unnamed", metav1.GetOptions{})
		_, refused["a list of ConfigMaps"] = g.CoreV1().ConfigMaps(secNS).List(ctx, metav1.ListOptions{})
		_, refused["a Secret of the lab's namespace"] = g.CoreV1().Secrets(secNS).Get(ctx, "named", metav1.GetOptions{})
		_, refused["Secrets of kube-system"] = g.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
		_, refused["the default ServiceAccount"] = g.CoreV1().ServiceAccounts(secNS).Get(ctx, "default", metav1.GetOptions{})
		_, refused["another Namespace"] = g.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{})
		_, refused["nodes"] = g.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		_, refused["pods of kube-system"] = g.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{})
		for what, err := range refused {
			if !apierrors.IsForbidden(err) {
				t.Errorf("the grader reading %s: %v, want Forbidden", what, err)
			}
		}
		// Through a real checker round, discovery included.
		results, err := env.RunChecks(ctx, checks.Round{Checks: l.Steps[0].Checks})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range results {
			if r.Status != checks.Pass {
				t.Errorf("check %s: %s (%s), want pass", r.Name, r.Status, r.Message)
			}
		}
	})

	// A file check of a path outside /root reads the sandbox's own file
	// from the host's side; every link the learner (root in the sandbox)
	// makes out of its file system fails, never passes.
	t.Run("a file check reads the sandbox outside /root, and no link out", func(t *testing.T) {
		plant := `set -e
printf 'listen 8080\n' > /etc/labctl-e2e.conf
mkdir -p /opt/course/1 && echo 42 > /opt/course/1/answer
ln -sfn /proc/1/root/etc/hostname /tmp/evil
ln -sfn /proc/self /tmp/self
ln -sfn /dev/zero /tmp/zero
ln -sfn /var/log/labctl-audit/audit.log /tmp/audit
ln -sfn /.labctl /tmp/checker
truncate -s 10G /tmp/big
rm -f /tmp/fifo && mkfifo /tmp/fifo`
		if code, out := script(t, env, plant); code != 0 {
			t.Fatalf("planting the files exited %d: %s", code, out)
		}
		file := func(name, p string, contains ...string) lab.Check {
			return lab.Check{Name: name, Timeout: lab.Duration{Duration: 10 * time.Second}, File: &lab.FileCheck{Path: p, Contains: contains}}
		}
		round := func(cs ...lab.Check) []checks.Result { t.Helper(); return checkRound(t, ctx, env, cs...) }
		want := func(r checks.Result, status checks.Status, says string) { t.Helper(); wantResult(t, r, status, says) }
		start := time.Now()
		rs := round(
			file("etc-holds", "/etc/labctl-e2e.conf", "listen 8080"),
			file("etc-lacks", "/etc/labctl-e2e.conf", "listen 9090"),
			file("opt-answer", "/opt/course/1/answer", "42"),
			file("link-into-proc", "/tmp/evil", "e2e"),
			file("linked-parent", "/tmp/self/environ", "PATH"),
			file("through-proc", "/proc/1/environ", "PATH"),
			file("device", "/tmp/zero", "x"),
			file("graders-audit-log", "/tmp/audit", "auditID"),
			file("checker-mount", "/tmp/checker"),
			file("huge", "/tmp/big", "x"),
			file("fifo", "/tmp/fifo", "x"),
			lab.Check{Name: "by-reference", Timeout: lab.Duration{Duration: 10 * time.Second},
				File: &lab.FileCheck{Path: "/opt/course/1/answer", Equals: &lab.Value{Ref: "file:/etc/labctl-e2e.conf"}}},
			lab.Check{Name: "reference-into-proc", Timeout: lab.Duration{Duration: 10 * time.Second},
				File: &lab.FileCheck{Path: "/opt/course/1/answer", Equals: &lab.Value{Ref: "file:/tmp/evil"}}},
		)
		t.Logf("one round of %d checks of the sandbox's files took %s", len(rs), time.Since(start))
		want(rs[0], checks.Pass, "")
		want(rs[1], checks.Fail, "listen 9090")
		want(rs[2], checks.Pass, "")
		want(rs[3], checks.Fail, "leads outside the learner's files (to /proc/1/root/etc/hostname)")
		want(rs[4], checks.Fail, "leads outside the learner's files (to /proc/")
		want(rs[5], checks.Fail, "leads outside")
		want(rs[6], checks.Fail, "leads outside the learner's files (to /dev/zero)")
		want(rs[7], checks.Fail, "to exist") // the sandbox has no audit log; the grader's is never read
		want(rs[8], checks.Fail, "to exist") // nor the checker's mount
		want(rs[9], checks.Fail, "larger than 4 MiB")
		want(rs[10], checks.Fail, "named pipe")
		want(rs[11], checks.Fail, "listen 8080") // the answer is 42, the reference's file says listen 8080
		want(rs[12], checks.Fail, "leads outside the learner's files (to /proc/1/root/etc/hostname)")

		// The check follows the file as the learner changes it.
		if code, out := script(t, env, "rm /etc/labctl-e2e.conf"); code != 0 {
			t.Fatalf("removing the file exited %d: %s", code, out)
		}
		want(round(file("etc-holds", "/etc/labctl-e2e.conf", "listen 8080"))[0], checks.Fail, "to exist")
	})

	// A git check of a repository outside /root reads the sandbox's own
	// repository, its directory's archive read from the host's side; every
	// way the learner (root in the sandbox) makes it lead elsewhere fails.
	t.Run("a git check reads a repository outside /root, and no link out", func(t *testing.T) {
		plant := `set -e
export HOME=/root GIT_AUTHOR_NAME=e2e GIT_AUTHOR_EMAIL=e2e@example.com GIT_COMMITTER_NAME=e2e GIT_COMMITTER_EMAIL=e2e@example.com
rm -rf /srv/e2e /etc/labctl-e2e-repo && mkdir -p /srv/e2e
mk() { mkdir -p "$1" && cd "$1" && git init -q && printf 'replicas: 3\n' > app.yaml && git add app.yaml && git commit -q -m "feat: app" && cd /; }
mk /srv/e2e/app
mk /etc/labctl-e2e-repo
mk /srv/e2e/linkgit && rm -rf /srv/e2e/linkgit/.git && ln -s /srv/e2e/app/.git /srv/e2e/linkgit/.git
mk /srv/e2e/gitfile && rm -rf /srv/e2e/gitfile/.git && echo 'gitdir: /srv/e2e/app/.git' > /srv/e2e/gitfile/.git
mk /srv/e2e/huge && truncate -s 10G /srv/e2e/huge/.git/objects/pack/pack-big.pack
ln -sfn /proc/1/root /srv/e2e/self
ln -sfn /srv/e2e/loop2 /srv/e2e/loop1 && ln -sfn /srv/e2e/loop1 /srv/e2e/loop2
git -C /srv/e2e/app rev-parse HEAD > /etc/labctl-e2e-head`
		if code, out := script(t, env, plant); code != 0 {
			t.Fatalf("planting the repositories exited %d: %s", code, out)
		}
		check := func(name string, gc lab.GitCheck) lab.Check {
			return lab.Check{Name: name, Timeout: lab.Duration{Duration: 10 * time.Second}, Git: &gc}
		}
		commits := func(name, repo string) lab.Check {
			return check(name, lab.GitCheck{Repo: repo, Commits: &lab.Range{Min: func() *int { n := 1; return &n }()}})
		}
		round := func(cs ...lab.Check) []checks.Result { t.Helper(); return checkRound(t, ctx, env, cs...) }
		want := func(r checks.Result, status checks.Status, says string) { t.Helper(); wantResult(t, r, status, says) }
		start := time.Now()
		rs := round(
			commits("srv-app", "/srv/e2e/app"),
			check("srv-app-field", lab.GitCheck{Repo: "/srv/e2e/app", Field: &lab.GitFieldAssert{File: "app.yaml",
				FieldAssert: lab.FieldAssert{Path: "replicas", Assert: lab.Assert{Equals: &lab.Value{Literal: 3}}}}}),
			check("srv-app-clean", lab.GitCheck{Repo: "/srv/e2e/app", Clean: func() *bool { b := true; return &b }()}),
			commits("etc-repo", "/etc/labctl-e2e-repo"),
			lab.Check{Name: "by-reference", Timeout: lab.Duration{Duration: 10 * time.Second},
				File: &lab.FileCheck{Path: "/etc/labctl-e2e-head", Equals: &lab.Value{Ref: "git:/srv/e2e/app@HEAD"}}},
			commits("linked-git", "/srv/e2e/linkgit"),
			commits("gitdir-file", "/srv/e2e/gitfile"),
			commits("huge", "/srv/e2e/huge"),
			commits("linked-parent", "/srv/e2e/self/srv/e2e/app"),
			commits("loop", "/srv/e2e/loop1"),
			commits("none", "/srv/e2e/none"),
		)
		t.Logf("one round of %d git checks of the sandbox's repositories took %s", len(rs), time.Since(start))
		want(rs[0], checks.Pass, "")
		want(rs[1], checks.Pass, "")
		want(rs[2], checks.Pass, "")
		want(rs[3], checks.Pass, "")
		want(rs[4], checks.Pass, "")
		want(rs[5], checks.Fail, "/srv/e2e/linkgit/.git is a symbolic link")
		want(rs[6], checks.Fail, "/srv/e2e/gitfile/.git is a file that points to a repository elsewhere")
		want(rs[7], checks.Fail, "with its work tree, is larger than 8 MiB")
		want(rs[8], checks.Fail, "leads outside the learner's files (to /proc/1/root/srv/e2e/app)")
		want(rs[9], checks.Error, "a loop of symbolic links") // the engine refuses to look at the link itself
		want(rs[10], checks.Fail, "expected a git repository at /srv/e2e/none")

		// The check follows the repository as the learner changes it.
		if code, out := script(t, env, "printf 'replicas: 4\\n' > /srv/e2e/app/app.yaml"); code != 0 {
			t.Fatalf("changing the work tree exited %d: %s", code, out)
		}
		want(round(check("srv-app-clean", lab.GitCheck{Repo: "/srv/e2e/app", Clean: func() *bool { b := true; return &b }()}))[0], checks.Fail, "M app.yaml")
	})

	t.Run("the grader lists the kind a selector selects and asks about access, and the learner cannot fake the answer", func(t *testing.T) {
		g := graderClient(t, admin, mustGrader(t, env))
		if _, err := g.RbacV1().RoleBindings(secNS).List(ctx, metav1.ListOptions{}); err != nil {
			t.Errorf("the grader cannot list the RoleBindings a selector selects: %v", err)
		}
		if _, err := g.RbacV1().Roles(secNS).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
			t.Errorf("the grader listing Roles: %v, want Forbidden", err)
		}
		step := l.Steps[len(l.Steps)-1].Checks
		round := func() map[string]checks.Result {
			results, err := env.RunChecks(ctx, checks.Round{Checks: step})
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != 2 {
				t.Fatalf("%d results of the access step's 2 checks", len(results))
			}
			out := map[string]checks.Result{}
			for _, r := range results {
				out[r.Name] = r
			}
			return out
		}
		for name, r := range round() {
			if r.Status != checks.Pass {
				t.Errorf("before the binding, %s: %s (%s), want pass", name, r.Status, r.Message)
			}
		}
		// The learner, admin of the namespace, gives every account of it
		// edit: the API server's answer changes, and so do both checks.
		code, out := script(t, env, "kubectl create rolebinding all-edit --clusterrole=edit --group=system:serviceaccounts:"+secNS+" 2>&1")
		if code != 0 {
			t.Fatalf("the learner binding edit: exit %d, %q", code, out)
		}
		got := round()
		if r := got["default-cannot-read-secrets"]; r.Status != checks.Fail || !strings.Contains(r.Message, "kubectl auth can-i get secrets -n "+secNS+" --as=system:serviceaccount:"+secNS+":default to answer no") {
			t.Errorf("after a group binding, the access check: %s (%s), want a fail naming the question", r.Status, r.Message)
		}
		if r := got["no-broad-binding"]; r.Status != checks.Fail || !strings.Contains(r.Message, "RoleBinding "+secNS+"/all-edit") {
			t.Errorf("after a group binding, the selector check: %s (%s), want a fail naming all-edit", r.Status, r.Message)
		}
		script(t, env, "kubectl delete rolebinding all-edit")
		for name, r := range round() {
			if r.Status != checks.Pass {
				t.Errorf("after the binding is gone, %s: %s (%s), want pass", name, r.Status, r.Message)
			}
		}
	})

	t.Run("the grader's token lasts an hour and a round renews it", func(t *testing.T) {
		first, err := env.GraderCredentials(ctx)
		if err != nil {
			t.Fatal(err)
		}
		exp := provision.TokenExpiry(first.Token)
		if left := time.Until(exp); left < 50*time.Minute || left > time.Hour+5*time.Minute {
			t.Errorf("the grader's token expires in %s, want about an hour", left)
		}
		dir, err := stateDir(l.Metadata.Name)
		if err != nil {
			t.Fatal(err)
		}
		n, err := env.Runtime().(*kindRuntime).engine.State(ctx, nodeName)
		if err != nil {
			t.Fatal(err)
		}
		saved, ok := loadCredentials(dir, n.ID)
		if !ok || !saved.GraderExpires.Equal(exp) {
			t.Fatalf("saved credentials %v, expiry %v; want the token's, %v", ok, saved.GraderExpires, exp)
		}
		again, err := Connect(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		defer again.Close()
		if kube, err := again.GraderCredentials(ctx); err != nil || kube.Token != saved.Grader.Token {
			t.Errorf("a round renewed a grader token with most of its hour left (%v)", err)
		}
		saved.GraderExpires = time.Now().Add(5 * time.Minute)
		if err := saveCredentials(dir, saved); err != nil {
			t.Fatal(err)
		}
		renewed, err := Connect(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		defer renewed.Close()
		kube, err := renewed.GraderCredentials(ctx)
		if err != nil {
			t.Fatal(err)
		}
		learner, err := renewed.LearnerIdentity(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if kube.Token == saved.Grader.Token || learner.Token != saved.Learner.Token {
			t.Fatal("a round with 5 minutes of the grader's token left: want a new grader token and the learner's unchanged")
		}
		after, ok := loadCredentials(dir, n.ID)
		if !ok || after.Grader.Token != kube.Token || time.Until(after.GraderExpires) < 50*time.Minute {
			t.Errorf("the renewed token was not saved with its expiry: %v, %v", ok, after.GraderExpires)
		}
		g := graderClient(t, admin, kube)
		if _, err := g.CoreV1().ConfigMaps(secNS).Get(ctx, "named", metav1.GetOptions{}); err != nil {
			t.Errorf("the renewed grader token cannot read what the lab names: %v", err)
		}
	})

	t.Run("reset restores the Pod Security labels; the grader's access is out of the learner's reach", func(t *testing.T) {
		ns, err := cs.CoreV1().Namespaces().Get(ctx, secNS, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ns.Labels[provision.PodSecurityEnforce] = "privileged"
		if _, err := cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The learner, admin of the namespace, finds no grader access there
		// to take away, and may not touch the cluster-wide one.
		if code, out := script(t, env, "kubectl -n "+secNS+" get rolebindings,roles -o name 2>&1 | grep -c "+provision.GraderRole+"; kubectl delete clusterrolebinding "+provision.GraderRole+" 2>&1"); code == 0 ||
			!strings.HasPrefix(out, "0\n") || !strings.Contains(out, "forbidden") {
			t.Errorf("the grader's access seen and deleted by the learner: exit %d, %q; want none in the namespace and a forbidden delete", code, out)
		}
		if err := env.ResetNamespaces(ctx); err != nil {
			t.Fatal(err)
		}
		ns, err = cs.CoreV1().Namespaces().Get(ctx, secNS, metav1.GetOptions{})
		if err != nil || ns.Labels[provision.PodSecurityEnforce] != "baseline" {
			t.Errorf("after reset %s enforces %q (%v), want baseline", secNS, ns.Labels[provision.PodSecurityEnforce], err)
		}
		if code, out := script(t, env, "kubectl create -f - 2>&1 <<'EOF'\napiVersion: v1\nkind: Pod\nmetadata: {name: hostpid}\nspec:\n  hostPID: true\n  containers: [{name: c, image: registry.k8s.io/pause:3.10}]\nEOF"); code == 0 ||
			!strings.Contains(out, "violates PodSecurity") {
			t.Errorf("a hostPID Pod after reset: exit %d, %q; want refused", code, out)
		}
		if _, err := cs.CoreV1().ConfigMaps(secNS).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "named", Namespace: secNS}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		g := graderClient(t, admin, mustGrader(t, env))
		if _, err := g.CoreV1().ConfigMaps(secNS).Get(ctx, "named", metav1.GetOptions{}); err != nil {
			t.Errorf("after reset the grader cannot read what the lab names: %v", err)
		}
	})
}

// graderClient is a client with the grader's token, through the admin
// config's host address (the grader's own is inside the kind network).
func graderClient(t *testing.T, admin *rest.Config, grader *checks.KubeCredentials) kubernetes.Interface {
	t.Helper()
	cfg := &rest.Config{Host: admin.Host, BearerToken: grader.Token, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// checkRound runs one checker round of cs on env.
func checkRound(t *testing.T, ctx context.Context, env *provision.Live, cs ...lab.Check) []checks.Result {
	t.Helper()
	results, err := env.RunChecks(ctx, checks.Round{Checks: cs})
	if err != nil {
		t.Fatal(err)
	}
	return results
}

// wantResult fails t unless r has status and its message says says.
func wantResult(t *testing.T, r checks.Result, status checks.Status, says string) {
	t.Helper()
	if r.Status != status || !strings.Contains(r.Message, says) {
		t.Errorf("check %s: %s %q, want %s saying %q", r.Name, r.Status, r.Message, status, says)
	}
}
