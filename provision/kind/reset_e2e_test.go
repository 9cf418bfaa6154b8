//go:build e2e

package kind

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/cmd/labctl/e2etest"
)

// TestE2EResetNamespaces resets a real lab namespace the learner filled
// (a Deployment with its pods, a Service, a ConfigMap, an edited default
// ServiceAccount) and one left as up made it:
//
//	go test -tags e2e ./provision/kind/ -run TestE2EResetNamespaces -timeout 20m -v
func TestE2EResetNamespaces(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	_, sb := e2etest.Images()
	ctx := context.Background()
	l := e2eTestLab()
	l.Metadata.Name = "e2e-reset"
	l.Cluster.Namespaces = []string{"e2e-used", "e2e-untouched"}
	env := upFresh(t, ctx, l)
	admin, err := env.Runtime().Admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		t.Fatal(err)
	}
	uid := func(ns string) string {
		n, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(n.UID)
	}
	before := map[string]string{"e2e-used": uid("e2e-used"), "e2e-untouched": uid("e2e-untouched")}

	if code, out := script(t, env, `set -e
kubectl -n e2e-used create deployment web --image=`+sb+` --replicas=2 -- sleep 3600
kubectl -n e2e-used expose deployment web --port=80
kubectl -n e2e-used create configmap learner-made
kubectl -n e2e-used patch serviceaccount default -p '{"imagePullSecrets":[{"name":"regcred"}]}'
for i in $(seq 120); do [ "$(kubectl -n e2e-used get pods -o name | wc -l)" -ge 2 ] && exit 0; sleep 0.5; done
echo "the deployment's pods never appeared"; exit 1`); code != 0 {
		t.Fatalf("filling the namespace as the learner: %d %q", code, out)
	}
	if err := env.ResetNamespaces(ctx); err != nil {
		t.Fatal(err)
	}
	// The learner's objects are gone, the default ServiceAccount is the
	// controller's again, the learner's access is back.
	code, out := script(t, env, `kubectl -n e2e-used get all,configmaps,serviceaccounts -o name | sort
kubectl -n e2e-used get serviceaccount default -o jsonpath='{.imagePullSecrets}'; echo "pull:"
kubectl auth can-i create deployments -n e2e-used`)
	want := "configmap/kube-root-ca.crt\nserviceaccount/default\npull:\nyes\n"
	if code != 0 || !strings.HasSuffix(out, want) || strings.Contains(out, "web") || strings.Contains(out, "learner-made") {
		t.Errorf("after the reset: %d\n%s\nwant\n%s", code, out, want)
	}
	// Neither namespace was deleted: their content was enough.
	for ns, u := range before {
		if got := uid(ns); got != u {
			t.Errorf("namespace %s was recreated (uid %s, was %s)", ns, got, u)
		}
	}
	// A second reset finds both as up left them and keeps their objects.
	cm, err := cs.CoreV1().ConfigMaps("e2e-untouched").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.ResetNamespaces(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := cs.CoreV1().ConfigMaps("e2e-untouched").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
	if err != nil || again.UID != cm.UID {
		t.Errorf("a pristine namespace's kube-root-ca.crt was replaced: %v", err)
	}
}

// TestE2ERestoreSandboxInPlace restores the sandbox's home in place, as
// labctl test does between its phases (/tmp emptied), and refuses whenever
// anything else outside /root changed or a process was left running, so that a phase
// never begins in a sandbox a recreated one would not be:
//
//	go test -tags e2e ./provision/kind/ -run TestE2ERestoreSandboxInPlace -timeout 20m -v
func TestE2ERestoreSandboxInPlace(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	l := e2eTestLab()
	l.Metadata.Name = "e2e-restore"
	env := upFresh(t, ctx, l)
	if env.RestoreSandbox(ctx) {
		t.Fatal("a sandbox never kept was restored in place")
	}
	if err := env.RecreateSandbox(ctx); err != nil {
		t.Fatal(err)
	}
	env.NotePristine(ctx)
	home := func() string {
		t.Helper()
		_, out := script(t, env, `cd /root && find . -printf '%M %u %p %s\n' | sort && md5sum .kube/config`)
		return out
	}
	fresh := home()

	// The author's work in /root goes; the learner's kubeconfig stays.
	if code, out := script(t, env, `set -e
mkdir -p /root/repo/deep && cd /root/repo && git init -q && echo hi > deep/f && chmod 000 deep && chown nobody deep
printf 'alias k=kubectl\n' >> /root/.bashrc && rm /root/.profile && ln -s /etc/passwd /root/link`); code != 0 {
		t.Fatalf("changing /root: %d %s", code, out)
	}
	if !env.RestoreSandbox(ctx) {
		t.Fatal("a sandbox changed only in /root was not restored in place")
	}
	if got := home(); got != fresh {
		t.Errorf("/root after the restore:\n%s\nwant, as fresh:\n%s", got, fresh)
	}
	if code, out := script(t, env, `kubectl auth can-i get pods -n `+l.Cluster.Namespaces[0]); code != 0 || !strings.Contains(out, "yes") {
		t.Errorf("the learner's kubeconfig after the restore: %d %s", code, out)
	}
	if !env.RestoreSandbox(ctx) {
		t.Error("an untouched sandbox was not restored in place")
	}

	// Each of these leaves something a recreated sandbox would not have:
	// the restore refuses, touching nothing, and a recreate follows.
	// What kubectl diff leaves in /tmp goes with the restore.
	if code, out := script(t, env, `mkdir -p /tmp/LIVE-1/d && echo x > /tmp/LIVE-1/d/f && touch /tmp/.hidden`); code != 0 {
		t.Fatalf("writing /tmp: %d %s", code, out)
	}
	if !env.RestoreSandbox(ctx) {
		t.Error("a sandbox changed only in /root and /tmp was not restored in place")
	}
	if _, out := script(t, env, `ls -A /tmp; stat -c '%a' /tmp`); out != "1777\n" {
		t.Errorf("/tmp after the restore: %q, want it empty, mode 1777", out)
	}

	for _, change := range []string{
		`chmod 700 /tmp`,
		`echo x > /var/tmp/left`,
		`rm /etc/motd`,
		`chmod 700 /usr/local/bin`,
		`mkdir /srv/new && rmdir /srv/new`,
		`echo 10.9.9.9 api.example >> /etc/hosts`,
		`touch /dev/shm/left`,
		`setsid sleep 600 >/dev/null 2>&1 </dev/null &`,
		`mkdir /new-top-level`,
	} {
		if code, out := script(t, env, change); code != 0 {
			t.Fatalf("%s: %d %s", change, code, out)
		}
		if env.RestoreSandbox(ctx) {
			t.Errorf("after %q the sandbox was restored in place", change)
		}
		if code, _ := script(t, env, `test -e /root/.profile`); code != 0 {
			t.Errorf("after %q the refused restore touched /root", change)
		}
		if err := env.RecreateSandbox(ctx); err != nil {
			t.Fatal(err)
		}
		env.NotePristine(ctx)
	}
}
