//go:build e2e

package kind

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/internal/e2etest"
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
