//go:build e2e

package kind

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/docker"
	"github.com/labctl/labctl/sandbox"
)

const probeNS = "e2e-probe-ns"

// probeLab's one step has a probe that scales the Deployment web to 4 and
// keeps, in the probe's directory, what it was for the restore, and leaves
// the grader an answer in labctl-probe; the learner's run scales web back
// to 1 and says so.
func probeLab() *lab.Lab {
	l := e2eTestLab()
	l.Metadata.Name = "e2e-probe"
	l.Cluster.Namespaces = []string{probeNS}
	l.Steps = l.Steps[:1]
	l.Steps[0].Setup = ""
	l.Steps[0].Checks = []lab.Check{
		{Name: "answer", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "ConfigMap", Namespace: provision.ProbeNamespace, Name: "probe-answer",
			Field: &lab.FieldAssert{Path: "data.replicas", Assert: lab.Assert{Equals: &lab.Value{Literal: "4"}}}}},
	}
	l.Steps[0].Probe = &lab.Probe{
		Setup: `set -euo pipefail
kubectl -n ` + probeNS + ` get deployment web -o jsonpath='{.spec.replicas}' > web-replicas
kubectl -n ` + probeNS + ` scale deployment web --replicas=4
kubectl -n ` + provision.ProbeNamespace + ` create configmap probe-answer --from-literal=replicas=4 --dry-run=client -o yaml | kubectl apply -f -`,
		Run:     `echo "replicas=$(kubectl -n ` + probeNS + ` get deployment web -o jsonpath='{.spec.replicas}')"`,
		Restore: `set -euo pipefail; kubectl -n ` + probeNS + ` scale deployment web --replicas="$(cat web-replicas)"`,
		Timeout: lab.Duration{Duration: time.Minute},
	}
	return l
}

// countKind counts the objects of kind.
func countKind(objs []docker.Object, kind string) int {
	n := 0
	for _, o := range objs {
		if o.Kind == kind {
			n++
		}
	}
	return n
}

// adminScript runs a probe script in env and returns its exit code and
// output.
func adminScript(t *testing.T, env *provision.Live, s string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, err := env.RunAdminScript(ctx, s, &out)
	if err != nil {
		t.Fatalf("probe script %q: %v", s, err)
	}
	return code, out.String()
}

// TestE2EProbeConfined runs a stranger's probe scripts on a real lab, as
// the lab's author would write them to take the machine: from the probe's
// setup, no Pod reaches the node, nothing cluster-wide is granted or read,
// there is no node, no admin.conf, no container runtime socket, no
// capability and no writable root to use; the probe's credentials are on
// no command line and in no process's environment on the host; the
// learner cannot make the probe fail by deleting its rights; the probe's
// writes are not recorded as the learner's. A probe that does what a lab's
// probe is for (scale a Deployment, keep a note for its restore, leave the
// grader an answer) still passes, and nothing of it is left afterwards.
//
//	go test -tags e2e ./provision/kind/ -run TestE2EProbeConfined -timeout 20m -v
func TestE2EProbeConfined(t *testing.T) {
	t.Setenv("LABCTL_STATE_DIR", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	l := probeLab()
	env := upFresh(t, ctx, l)
	nodeName := controlPlaneNode(l.Metadata.Name)
	if code, out := script(t, env, "kubectl -n "+probeNS+" create deployment web --image=registry.k8s.io/pause:3.10 --replicas=1 2>&1"); code != 0 {
		t.Fatalf("creating web: exit %d: %s", code, out)
	}

	t.Run("the probe's identity", func(t *testing.T) {
		code, out := adminScript(t, env, `kubectl auth whoami -o jsonpath='{.status.userInfo.username}'; echo; env | grep -c LABCTL_PROBE || true; pwd`)
		if code != 0 || !strings.Contains(out, "system:serviceaccount:labctl-system:labctl-probe\n0\n"+provision.ProbeDir) {
			t.Errorf("exit %d, output %q; want the probe's account, no credentials in the script's environment, in %s", code, out, provision.ProbeDir)
		}
	})

	t.Run("no Pod of the probe's reaches the node", func(t *testing.T) {
		pod := func(name, extra string) string {
			return "kubectl -n " + probeNS + " create -f - 2>&1 <<'EOF'\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name + "}\nspec:\n" +
				"  containers:\n  - name: c\n    image: registry.k8s.io/pause:3.10\n" + extra + "EOF\n"
		}
		for _, tc := range []struct{ name, script, want string }{
			{"privileged", pod("priv", "    securityContext: {privileged: true}\n"), "privileged"},
			{"hostPath", pod("hostpath", "    volumeMounts: [{name: root, mountPath: /host}]\n  volumes: [{name: root, hostPath: {path: /}}]\n"), "hostPath"},
			{"hostPID", strings.Replace(pod("hostpid", ""), "spec:\n", "spec:\n  hostPID: true\n", 1), "hostPID"},
		} {
			code, out := adminScript(t, env, tc.script)
			if code == 0 || !strings.Contains(out, "violates PodSecurity") || !strings.Contains(out, tc.want) {
				t.Errorf("%s Pod: exit %d, output %q; want a Pod Security refusal", tc.name, code, out)
			}
		}
	})

	t.Run("nothing cluster-wide", func(t *testing.T) {
		for _, tc := range []struct{ name, cmd string }{
			{"bind cluster-admin", "kubectl create clusterrolebinding pwn --clusterrole=cluster-admin --serviceaccount=labctl-system:labctl-probe"},
			{"cluster-admin in the lab's namespace", "kubectl -n " + probeNS + " create rolebinding pwn --clusterrole=cluster-admin --serviceaccount=labctl-system:labctl-probe"},
			{"Secrets of kube-system", "kubectl -n kube-system get secrets"},
			{"Secrets everywhere", "kubectl get secrets -A"},
			{"a namespace without Pod Security", "kubectl create namespace pwn"},
			{"relabel the lab's namespace", "kubectl label ns " + probeNS + " pod-security.kubernetes.io/enforce=privileged --overwrite"},
			{"nodes", "kubectl get nodes"},
			{"nodes/proxy", "kubectl get --raw /api/v1/nodes/" + nodeName + "/proxy/configz"},
			{"exec into etcd", "kubectl -n kube-system exec etcd-" + nodeName + " -- true"},
			{"a token for the grader", "kubectl -n labctl-system create token grader"},
			{"a token for the learner", "kubectl -n labctl-system create token learner"},
			{"the learner's identity", "kubectl --as=system:serviceaccount:labctl-system:learner -n " + probeNS + " get pods"},
		} {
			code, out := adminScript(t, env, tc.cmd+" 2>&1")
			if code == 0 || !strings.Contains(strings.ToLower(out), "forbidden") {
				t.Errorf("%s: exit %d, output %q; want forbidden", tc.name, code, out)
			}
		}
	})

	t.Run("nothing of the node or the host where it runs", func(t *testing.T) {
		for _, tc := range []struct{ name, cmd string }{
			{"nsenter into PID 1", "nsenter -t 1 -m -u -i -n -p -- true"},
			{"write to /", "touch /owned"},
			{"write to /usr/local/bin", "touch /usr/local/bin/kubectl"},
			{"the node's admin.conf", "cat /etc/kubernetes/admin.conf"},
			{"the container runtime's socket", "test -S /run/containerd/containerd.sock || test -S /var/run/docker.sock"},
			{"mount", "mount -t tmpfs none /mnt"},
			{"a capability", `[ "$(awk '/^CapEff/ {print $2}' /proc/self/status)" != 0000000000000000 ]`},
			{"a device", "test -e /dev/sda || test -e /dev/vda || test -e /dev/nvme0n1 || test -e /dev/kmsg"},
			{"the learner's home", "ls /root/.kube/config"},
		} {
			if code, out := adminScript(t, env, tc.cmd); code == 0 {
				t.Errorf("%s: exit 0, output %q", tc.name, out)
			}
		}
	})

	t.Run("the probe's token is on no command line and in no environment", func(t *testing.T) {
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			_, err := env.RunAdminScript(ctx, `sed -n 's/^ *token: //p' /tmp/kubeconfig; sleep 5`, pw)
			pw.CloseWithError(err)
			done <- err
		}()
		line, err := bufio.NewReader(pr).ReadString('\n')
		token := strings.TrimSpace(line)
		if err != nil || len(token) < 100 {
			t.Fatalf("the script printed %q (%v), want its token", line, err)
		}
		for _, f := range []string{"cmdline", "environ"} {
			files, _ := filepath.Glob("/proc/[0-9]*/" + f)
			for _, p := range files {
				b, err := os.ReadFile(p)
				if err == nil && bytes.Contains(b, []byte(token)) {
					t.Errorf("%s holds the probe's token", p)
				}
			}
		}
		go io.Copy(io.Discard, pr)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the learner deletes the probe's rights", func(t *testing.T) {
		code, out := script(t, env, "kubectl -n "+probeNS+" delete rolebinding labctl-probe 2>&1")
		if code != 0 {
			t.Fatalf("the learner could not delete the probe's binding (exit %d: %s); the attack is not tried", code, out)
		}
		if code, out := adminScript(t, env, "kubectl -n "+probeNS+" get deployment web -o name"); code != 0 || strings.TrimSpace(out) != "deployment.apps/web" {
			t.Errorf("after the learner deleted the probe's binding: exit %d, output %q; want it granted again", code, out)
		}
		for _, cmd := range []string{"kubectl -n labctl-probe get configmaps", "kubectl -n labctl-probe delete rolebinding labctl-probe"} {
			if code, out := script(t, env, cmd+" 2>&1"); code == 0 || !strings.Contains(out, "forbidden") {
				t.Errorf("the learner ran %q: exit %d, output %q; want forbidden", cmd, code, out)
			}
		}
	})

	t.Run("rights that stand are not written again", func(t *testing.T) {
		admin, err := env.Runtime().(*kindRuntime).Admin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The admin's requests, as the API server gets them: reading the
		// rights back compares them with what the server keeps, defaults
		// and all.
		var mu sync.Mutex
		var writes []string
		cfg := rest.CopyConfig(admin)
		cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
			return roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if r.Method != http.MethodGet {
					mu.Lock()
					writes = append(writes, r.Method+" "+r.URL.Path)
					mu.Unlock()
				}
				return rt.RoundTrip(r)
			})
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// A probe's first script gets every right again, a later one the
		// bindings: both find them as granted, and ask only for a token.
		for _, first := range []bool{true, false} {
			writes = nil
			if _, err := provision.ProbeKubeconfig(ctx, cs, l, "https://api:6443", admin.CAData, first); err != nil {
				t.Fatal(err)
			}
			if len(writes) != 1 || !strings.HasSuffix(writes[0], "/serviceaccounts/"+provision.ProbeAccount+"/token") {
				t.Errorf("first script %v: the admin wrote %v, want the token request alone", first, writes)
			}
		}
	})

	t.Run("a lab's probe passes and leaves nothing", func(t *testing.T) {
		if code, out := adminScript(t, env, "echo kept > note"); code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		if code, out := adminScript(t, env, "cat note"); code != 0 || out != "kept\n" {
			t.Errorf("a note between two scripts: exit %d, output %q", code, out)
		}
		// The probe's scripts share one container until its end.
		objs, err := env.Runtime().(*kindRuntime).engine.ListByLabel(ctx, map[string]string{sandbox.LabelLab: l.Metadata.Name, sandbox.LabelRole: sandbox.RoleProbe})
		if err != nil {
			t.Fatal(err)
		}
		if n := countKind(objs, "container"); n != 1 {
			t.Errorf("%d probe containers during a probe, want 1: %v", n, objs)
		}
		if err := env.EndProbe(ctx); err != nil {
			t.Fatal(err)
		}
		if code, out := adminScript(t, env, `ls -A; echo "[$(ls -A | wc -l)]"`); code != 0 || !strings.Contains(out, "[0]") {
			t.Errorf("after the probe's end: exit %d, output %q; want ProbeDir empty", code, out)
		}

		rs, err := grading.RunStep(ctx, env, env, &l.Steps[0], checks.Windows{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.Status != checks.Pass {
				t.Errorf("%s: %s %s", r.Name, r.Status, r.Message)
			}
		}
		if p := rs[len(rs)-1]; !strings.Contains(p.Message, "replicas=4") {
			t.Errorf("the run saw no drift: %s", p.Message)
		}
		if code, out := script(t, env, "kubectl -n "+probeNS+" get deployment web -o jsonpath='{.spec.replicas}'"); code != 0 || strings.TrimSpace(out) != "1" {
			t.Errorf("web after the probe's restore: %q (exit %d), want 1", out, code)
		}
		objs, err = env.Runtime().(*kindRuntime).engine.ListByLabel(ctx, map[string]string{sandbox.LabelLab: l.Metadata.Name, sandbox.LabelRole: sandbox.RoleProbe})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			t.Errorf("left after the probe: %s %s", o.Kind, o.Name)
		}
	})

	t.Run("the probe's writes are not the learner's", func(t *testing.T) {
		if code, out := adminScript(t, env, "kubectl -n "+probeNS+" create configmap written-by-probe"); code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		if code, out := script(t, env, "kubectl -n "+probeNS+" create configmap written-by-learner"); code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		dir, err := AuditDir(l.Metadata.Name)
		if err != nil {
			t.Fatal(err)
		}
		var log []byte
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
			if log, _ = os.ReadFile(filepath.Join(dir, "audit.log")); bytes.Contains(log, []byte("written-by-learner")) {
				break
			}
		}
		if !bytes.Contains(log, []byte("written-by-learner")) {
			t.Fatalf("the audit log has no record of the learner's write:\n%s", log)
		}
		if bytes.Contains(log, []byte("written-by-probe")) || bytes.Contains(log, []byte("system:serviceaccount:labctl-system:"+provision.ProbeAccount)) {
			t.Errorf("the audit log, which audit checks read as the learner's, records the probe's writes")
		}
	})
}

// roundTripFunc is a function as an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
