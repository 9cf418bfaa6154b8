//go:build e2e

package class

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/provision"
)

// testClassAttacks plays the learner who wants the grade without the work,
// or wants out of the lab: as root in the sandbox, as the holder of an
// invite, and as admin of the lab in the own control plane. Learner 1 only
// holds an invite, so that its grade stays whole; learner 3 is left for a
// hard reset, so it takes the attacks that change its home.
func testClassAttacks(t *testing.T, h *classHost, c *Class, ls []*provision.Live) {
	ctx := context.Background()
	podIP := func(learner, pod string) string {
		t.Helper()
		p, err := h.cs.CoreV1().Pods(c.Namespace(learner)).Get(ctx, pod, metav1.GetOptions{})
		if err != nil || p.Status.PodIP == "" {
			t.Fatalf("pod %s of %s: %v (IP %q)", pod, learner, err, p.Status.PodIP)
		}
		return p.Status.PodIP
	}

	t.Run("the sandbox reaches no etcd, controller manager, kubelet or class API", func(t *testing.T) {
		nodes, err := h.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil || len(nodes.Items) == 0 {
			t.Fatalf("nodes: %v", err)
		}
		node := ""
		for _, a := range nodes.Items[0].Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				node = a.Address
			}
		}
		// The own control plane serves nothing but the API server beyond
		// its Pod's loopback (etcd's client, peer and metrics ports, the
		// controller manager's), and that answers nobody anonymously but
		// the kubelet's probe. Outside the namespace's wall nothing
		// answers at all: the kubelet, the node's other ports, the class
		// cluster's API server and etcd, the other learners' Pods.
		out, code := runAs(t, ls[1], `set -u
bad=0
reach() { timeout 3 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }
for port in 2379 2380 2381 10257; do
  if reach `+podIP("learner-2", vcpPod)+` $port; then echo "open: own control plane :$port"; bad=1; fi
done
anon() { curl -sk -m 5 -o /dev/null -w '%{http_code}' https://vcp.`+c.Namespace("learner-2")+`.svc:6443$1; }
[ "$(anon /version)" = 401 ] || { echo "the own API server answered /version anonymously: $(anon /version)"; bad=1; }
[ "$(anon /api/v1/namespaces)" = 401 ] || { echo "the own API server answered /api anonymously: $(anon /api/v1/namespaces)"; bad=1; }
[ "$(anon /readyz)" = 200 ] || { echo "the own API server's /readyz answered $(anon /readyz)"; bad=1; }
for target in `+node+`/10250 `+node+`/10255 `+node+`/6443 `+node+`/2379 `+node+`/22 \
    `+podIP("learner-1", vcpPod)+`/6443 `+podIP("learner-3", vcpPod)+`/6443; do
  if reach ${target%/*} ${target#*/}; then echo "open: $target"; bad=1; fi
done
code=$(curl -sk -m 5 -o /dev/null -w '%{http_code}' https://kubernetes.default.svc/version)
[ "$code" = 000 ] || { echo "the class cluster's API server answered $code"; bad=1; }
exit $bad`)
		if code != 0 {
			t.Errorf("the sandbox reached a port it must not:\n%s", out)
		}
	})

	t.Run("each learner's namespace is walled off from the others", func(t *testing.T) {
		// A port learner 3's sandbox listens on answers learner 3's own
		// control-plane Pod, and not learner 2's sandbox.
		mustRun(t, ls[2], `setsid python3 -m http.server 8080 >/dev/null 2>&1 < /dev/null &
for i in $(seq 50); do timeout 1 bash -c 'exec 3<>/dev/tcp/127.0.0.1/8080' 2>/dev/null && exit 0; sleep 0.1; done; exit 1`)
		listener := podIP("learner-3", sandboxPod) + "/8080"
		probe := "if timeout 3 bash -c 'exec 3<>/dev/tcp/" + listener + "' 2>/dev/null; then echo open; else echo walled; fi"
		code, kept, err := c.pods(c.Namespace("learner-3")).run(ctx, podCommand{pod: vcpPod, container: containerAdmin, cmd: []string{"sh", "-c", probe}, wait: time.Minute})
		if err != nil || code != 0 || strings.TrimSpace(string(kept.Bytes())) != "open" {
			t.Fatalf("learner 3's own Pod does not reach its sandbox's listener: %d, %v, %q", code, err, kept.Bytes())
		}
		if out, _ := runAs(t, ls[1], probe); strings.TrimSpace(out) != "walled" {
			t.Errorf("learner 2's sandbox reached learner 3's: %q", out)
		}
		// class up tries the wall; a policy of an older labctl (ingress
		// only) lets the learner out, which CheckIsolation tells, and up
		// puts the whole wall back.
		if err := c.CheckIsolation(ctx, "learner-3"); err != nil {
			t.Fatalf("the walls of learner 3: %v", err)
		}
		policies := h.cs.NetworkingV1().NetworkPolicies(c.Namespace("learner-3"))
		np, err := policies.Get(ctx, isolatePolicy, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		np.Spec.PolicyTypes, np.Spec.Egress = []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, nil
		if _, err := policies.Update(ctx, np, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		var open error
		for range 20 {
			if open = c.CheckIsolation(ctx, "learner-3"); open != nil {
				break
			}
			time.Sleep(time.Second)
		}
		if !errors.Is(open, ErrOpenNetwork) || !strings.Contains(open.Error(), "kube-router") {
			t.Errorf("an ingress-only wall: %v, want ErrOpenNetwork", open)
		}
		if err := c.Up(ctx, "learner-3"); err != nil {
			t.Fatal(err)
		}
		var walled error
		for range 20 {
			if walled = c.CheckIsolation(ctx, "learner-3"); walled == nil {
				break
			}
			time.Sleep(time.Second)
		}
		if walled != nil {
			t.Errorf("after class up: %v", walled)
		}
	})

	t.Run("an invite opens nothing but its own sandbox", func(t *testing.T) {
		v := inviteOf(t, c, "learner-1")
		ns := c.Namespace("learner-1")
		pods := v.sandbox.cs.CoreV1().Pods(ns)
		if _, err := pods.Get(ctx, sandboxPod, metav1.GetOptions{}); err != nil {
			t.Fatalf("the invite cannot read its own sandbox Pod: %v", err)
		}
		// A subresource that needs a stream is authorised before the
		// upgrade: a plain POST is refused as forbidden, or accepted
		// and then refused for the missing upgrade.
		stream := func(pod, sub string) error {
			return v.sandbox.cs.CoreV1().RESTClient().Post().Namespace(ns).Resource("pods").Name(pod).SubResource(sub).Do(ctx).Error()
		}
		secrets := v.sandbox.cs.CoreV1().Secrets(ns)
		ignore := func(_ any, err error) error { return err }
		attempts := []struct {
			what string
			do   func() error
		}{
			{"attach to the sandbox", func() error { return stream(sandboxPod, "attach") }},
			{"port-forward to the control plane", func() error { return stream(vcpPod, "portforward") }},
			{"exec into the control plane", func() error { return stream(vcpPod, "exec") }},
			{"read the sandbox's log", func() error { return pods.GetLogs(sandboxPod, &corev1.PodLogOptions{}).Do(ctx).Error() }},
			{"read the control plane's log", func() error {
				return pods.GetLogs(vcpPod, &corev1.PodLogOptions{Container: "kube-apiserver"}).Do(ctx).Error()
			}},
			{"read the control plane's Pod", func() error { return ignore(pods.Get(ctx, vcpPod, metav1.GetOptions{})) }},
			{"add an ephemeral container to the sandbox", func() error {
				return ignore(pods.Patch(ctx, sandboxPod, types.StrategicMergePatchType,
					[]byte(`{"spec":{"ephemeralContainers":[{"name":"x","image":"busybox","targetContainerName":"sandbox"}]}}`), metav1.PatchOptions{}, "ephemeralcontainers"))
			}},
			{"create a Pod", func() error {
				return ignore(pods.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "x", Image: "busybox"}}}}, metav1.CreateOptions{}))
			}},
			{"update the sandbox Pod", func() error {
				return ignore(pods.Update(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sandboxPod, Namespace: ns}}, metav1.UpdateOptions{}))
			}},
			{"read the control plane's certificates", func() error { return ignore(secrets.Get(ctx, certsSecret, metav1.GetOptions{})) }},
			{"exec into the warden of /root", func() error { return stream(homeboundPod, "exec") }},
			{"mint a token for the warden's account", func() error {
				return ignore(v.sandbox.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, homeboundPod, &authenticationv1.TokenRequest{}, metav1.CreateOptions{}))
			}},
			{"evict its own sandbox (to be stopped without a reason on record)", func() error {
				return pods.EvictV1(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: sandboxPod, Namespace: ns}})
			}},
			{"mint a token for its account", func() error {
				return ignore(v.sandbox.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, inviteAccount, &authenticationv1.TokenRequest{}, metav1.CreateOptions{}))
			}},
			{"bind itself to admin", func() error {
				return ignore(v.sandbox.cs.RbacV1().RoleBindings(ns).Create(ctx, selfAdminBinding(ns), metav1.CreateOptions{}))
			}},
			{"impersonate the cluster's admin", func() error {
				imp := rest.CopyConfig(v.sandbox.cfg)
				imp.Impersonate = rest.ImpersonationConfig{UserName: "kubernetes-admin", Groups: []string{"system:masters"}}
				ics, err := kubernetes.NewForConfig(imp)
				if err != nil {
					return err
				}
				return ignore(ics.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}))
			}},
		}
		for _, a := range attempts {
			if err := a.do(); !apierrors.IsForbidden(err) {
				t.Errorf("the invite could %s: %v, want forbidden", a.what, err)
			}
		}

		// Whatever the invite may do in its namespace: its sandbox Pod, by
		// name, and the reviews every identity may ask for.
		review, err := v.sandbox.cs.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range review.Status.ResourceRules {
			own := len(r.ResourceNames) == 1 && r.ResourceNames[0] == sandboxPod
			group := strings.Join(r.APIGroups, ",")
			reviews := group == "authorization.k8s.io" || group == "authentication.k8s.io"
			// Trust bundles are public certificates every identity may read.
			bundles := group == "certificates.k8s.io" && strings.Join(r.Resources, ",") == "clustertrustbundles" && !slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "get" && v != "list" && v != "watch" })
			if !own && !reviews && !bundles {
				t.Errorf("the invite may %v %v (group %v, names %v)", r.Verbs, r.Resources, r.APIGroups, r.ResourceNames)
			}
		}
	})

	t.Run("the learner cannot touch the grader or the class cluster through its API server", func(t *testing.T) {
		e := ls[2]
		// Each attempt must be refused: it prints the command when the API
		// server lets it through, or when it fails for another reason.
		out, code := runAs(t, e, `set -u
bad=0
try() {
  if out=$("$@" 2>&1); then echo "allowed: $*: $out"; bad=1; return; fi
  case $out in *Forbidden*|*forbidden*) ;; *) echo "not refused as forbidden: $*: $out"; bad=1;; esac
}
apply() { printf '%s\n' "$1" | try kubectl create -f -; }
try kubectl delete namespace `+provision.SystemNamespace+` --wait=false
try kubectl -n `+provision.SystemNamespace+` get secrets
try kubectl -n `+provision.SystemNamespace+` delete serviceaccount `+provision.GraderAccount+`
try kubectl -n `+provision.SystemNamespace+` create token `+provision.GraderAccount+`
try kubectl delete clusterrole `+provision.GraderRole+`
try kubectl delete clusterrolebinding `+provision.GraderRole+`
try kubectl patch clusterrole `+provision.LearnerAdminRole+` --type=json -p '[{"op":"add","path":"/rules/-","value":{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}}]'
try kubectl create clusterrolebinding escalate --clusterrole=cluster-admin --serviceaccount=`+provision.SystemNamespace+`:`+provision.LearnerAccount+`
try kubectl -n gitops-lab create rolebinding escalate --clusterrole=cluster-admin --serviceaccount=`+provision.SystemNamespace+`:`+provision.LearnerAccount+`
try kubectl label namespace gitops-lab pod-security.kubernetes.io/enforce=privileged --overwrite
try kubectl create namespace escape
try kubectl -n kube-system get secrets
apply 'apiVersion: v1
kind: Node
metadata: {name: rogue}'
for kind in Validating Mutating; do
  apply "apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}WebhookConfiguration
metadata: {name: intercept-all}
webhooks:
- name: intercept.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Fail
  clientConfig: {url: 'https://127.0.0.1:1/'}
  rules: [{apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*']}]"
done
apply 'apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.rogue.example.com}
spec: {group: rogue.example.com, version: v1, groupPriorityMinimum: 1000, versionPriority: 15, insecureSkipTLSVerify: true, service: {namespace: gitops-lab, name: x}}'
apply 'apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rogues.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: rogues, singular: rogue, kind: Rogue}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]'
exit $bad`)
		if code != 0 {
			t.Errorf("the learner's API server let through:\n%s", out)
		}
		rs, err := gradeAll(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if f := failed(rs); len(f) > 0 {
			t.Errorf("learner 3's grade after the attempts: %v", f)
		}
	})

	t.Run("hostile files in the home neither hang the backup, leak the admin's files nor escape the wipe", func(t *testing.T) {
		e := ls[2]
		mustRun(t, e, `set -e
cd /root
mkfifo fifo
ln -s `+vcpCertDir+` certs-link
ln -s `+vcpCertDir+`/`+certAdminConf+` admin-link
ln -s /home-vol home-link
ln -s loop loop
mkdir -p "$(printf 'odd\nname')" -- '--checkpoint-action=exec=touch x' locked
touch -- "$(printf 'odd\nname')/-rf" '--checkpoint-action=exec=touch x/--to-command=sh'
chmod 000 locked
mkdir -p "deep/$(printf 'd/%.0s' $(seq 1000))"`)

		certs, err := h.cs.CoreV1().Secrets(c.Namespace(learnerOf(e))).Get(ctx, certsSecret, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		_, adminKey, _ := bytes.Cut(certs.Data[certAdminConf], []byte("client-key-data: "))
		if adminKey, _, _ = bytes.Cut(adminKey, []byte("\n")); len(adminKey) < 100 {
			t.Fatalf("no client key in the admin kubeconfig: %q", adminKey)
		}

		// The whole home comes out within a bound, links as links.
		bctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		var backup bytes.Buffer
		err = e.BackupHome(bctx, &backup)
		cancel()
		if err != nil {
			t.Fatalf("backup with hostile files: %v", err)
		}
		tr := tar.NewReader(&backup)
		links := map[string]string{}
		for {
			hd, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("the backup's tar: %v", err)
			}
			if !strings.HasPrefix(hd.Name, "root/") && hd.Name != "root" {
				t.Errorf("backup entry outside root/: %q", hd.Name)
			}
			if hd.Typeflag == tar.TypeSymlink {
				links[hd.Name] = hd.Linkname
			}
			if b, _ := io.ReadAll(tr); bytes.Contains(b, adminKey) {
				t.Errorf("backup entry %s holds the control plane's admin key", hd.Name)
			}
		}
		if links["root/admin-link"] != vcpCertDir+"/"+certAdminConf || links["root/certs-link"] != vcpCertDir {
			t.Errorf("the links are not kept as links in the backup: %v", links)
		}

		// A sparse file of a terabyte: its header comes first, and the
		// stream ends soon after the reader gives up (as reset's bounded
		// copy does), rather than after a terabyte of zeros.
		mustRun(t, e, "truncate -s 1T /root/sparse")
		sctx, stop := context.WithCancel(ctx)
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() { err := e.BackupHome(sctx, pw); pw.CloseWithError(err); done <- err }()
		sr := tar.NewReader(pr)
		var big int64
		for big == 0 {
			hd, err := sr.Next()
			if err != nil {
				t.Errorf("the backup ended before announcing /root/sparse: %v", err)
				break
			}
			if hd.Size > 1<<30 {
				big = hd.Size
			}
		}
		stop()
		pr.CloseWithError(context.Canceled)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Fatal("the backup of a sparse terabyte goes on 15 s after its reader stopped")
		}
		if big != 1<<40 {
			t.Errorf("the sparse file is announced at %d bytes", big)
		}

		// The wipe removes all of it, follows no link, and seeds afresh.
		wctx, cancelWipe := context.WithTimeout(ctx, 2*time.Minute)
		defer cancelWipe()
		if err := e.RecreateSandbox(wctx); err != nil {
			t.Fatalf("recreating the sandbox over hostile files: %v", err)
		}
		var adminOut bytes.Buffer
		code, err := e.Runtime().(*learnerRuntime).execIn(ctx, containerAdmin, []string{"sh", "-c", `ls -A ` + homeMount}, nil, &adminOut, &adminOut)
		if err != nil || code != 0 {
			t.Errorf("the admin container after the wipe: exit %d, %v: %s", code, err, adminOut.String())
		}
		for _, gone := range []string{"fifo", "sparse", "deep", "locked", "admin-link", "gitops"} {
			if strings.Contains("\n"+adminOut.String(), "\n"+gone+"\n") {
				t.Errorf("%s is in the home after the wipe:\n%s", gone, adminOut.String())
			}
		}
		mustRun(t, e, `test -f /root/.bashrc && kubectl get namespace gitops-lab >/dev/null`)
	})
}

// inviteOf opens an invite of the learner, as its holder would.
func inviteOf(t *testing.T, c *Class, learner string) *Invite {
	t.Helper()
	kc, _, err := c.Invite(context.Background(), learner, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v, err := OpenInvite(context.Background(), kc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// runAs runs script in the learner's sandbox and returns its output and
// exit code; an exec that fails ends the test.
func runAs(t *testing.T, e *provision.Live, script string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code, err := e.RunScript(context.Background(), script, &out, &out)
	if err != nil {
		t.Fatalf("%s: %v:\n%s", learnerOf(e), err, out.String())
	}
	return out.String(), code
}

// selfAdminBinding binds the invite's account to admin in ns.
func selfAdminBinding(ns string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "invite-admin", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: inviteAccount, Namespace: ns}},
	}
}
