package class

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/internal/podexec"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// probeCluster is a learner's control plane as a fake: the built-in admin
// role, and tokens for whoever asks.
func probeCluster() *fake.Clientset {
	cs := fake.NewClientset(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "admin"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"*"}}}})
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{
			Token: "probe-token-" + a.(k8stesting.CreateActionImpl).Name}}, nil
	})
	return cs
}

// A class probe's script runs as kind's does: in a container of the
// sandbox image without the control plane's certificates, with the
// probe's service account (a token of its own, on stdin), never as the
// control plane's admin (system:masters); nothing cluster-wide names it.
func TestClassProbeIsNotAdmin(t *testing.T) {
	var seen []podexec.Exec
	var stdin []string
	e := fakeLearner(func(_ context.Context, x podexec.Exec) (int, error) {
		seen = append(seen, x)
		in := []byte(nil)
		if x.Stdin != nil {
			in, _ = io.ReadAll(x.Stdin)
		}
		stdin = append(stdin, string(in))
		return 0, nil
	}, 0)
	e.lab = &lab.Lab{Metadata: lab.Metadata{Name: "gitops-drift"}}
	e.lab.Cluster.Namespaces = []string{"gitops-lab"}
	e.lab.Steps = []lab.Step{{ID: "sync", Probe: &lab.Probe{Setup: "true", Run: "true", Restore: "true"}}}
	e.lab.Default()
	cs := probeCluster()
	admin, err := makeControlPlaneCerts("labctl-ada", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.adminCS, e.admin = cs, &rest.Config{TLSClientConfig: rest.TLSClientConfig{CAData: admin[certCA]}}
	ctx := context.Background()
	for range 2 {
		if code, err := e.RunAdminScript(ctx, "kubectl get pods", io.Discard); err != nil || code != 0 {
			t.Fatalf("RunAdminScript: %d, %v", code, err)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("%d execs, want 2", len(seen))
	}
	for i, x := range seen {
		if x.Pod != vcpPod || x.Container != containerProbe {
			t.Errorf("script %d ran in %s/%s, want %s/%s", i, x.Pod, x.Container, vcpPod, containerProbe)
		}
		if strings.Contains(strings.Join(x.Cmd, " "), "token") {
			t.Errorf("script %d's command line carries its credentials: %q", i, x.Cmd)
		}
		if strings.Contains(stdin[i], string(admin[certAdminConf])) {
			t.Errorf("script %d got the admin's kubeconfig", i)
		}
		cfg, err := clientcmd.Load([]byte(stdin[i]))
		if err != nil {
			t.Fatalf("script %d's kubeconfig: %v", i, err)
		}
		ctxt := cfg.Contexts[cfg.CurrentContext]
		if ctxt == nil {
			t.Fatalf("script %d got no kubeconfig on its stdin", i)
		}
		user := cfg.AuthInfos[ctxt.AuthInfo]
		if user == nil || user.Token != "probe-token-"+provision.ProbeAccount || len(user.ClientCertificateData) > 0 || user.ClientCertificate != "" {
			t.Errorf("script %d's identity: %+v, want the probe's token and no certificate", i, user)
		}
		if cfg.Clusters[ctxt.Cluster].Server != vcpInternalServer || ctxt.Namespace != "gitops-lab" {
			t.Errorf("script %d reaches %s in %s", i, cfg.Clusters[ctxt.Cluster].Server, ctxt.Namespace)
		}
	}
	crbs, err := cs.RbacV1().ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil || len(crbs.Items) != 0 {
		t.Errorf("cluster-wide bindings made for the probe: %+v, %v", crbs, err)
	}
	rb, err := cs.RbacV1().RoleBindings("gitops-lab").Get(ctx, "labctl-probe", metav1.GetOptions{})
	if err != nil || len(rb.Subjects) != 1 || rb.Subjects[0].Name != provision.ProbeAccount {
		t.Errorf("the probe's binding in gitops-lab: %+v, %v", rb, err)
	}

	// The probe's container: the sandbox image, no capabilities, a
	// read-only root, no Secret and no home; the admin container keeps
	// the home and no certificate either.
	for _, o := range []classObjects{testObjects(), nodeObjects()} {
		p := o.controlPlanePod()
		secrets := map[string]bool{}
		for _, v := range p.Spec.Volumes {
			if v.Secret != nil {
				secrets[v.Name] = true
			}
		}
		probe := container(p, containerProbe)
		if probe == nil || probe.Image != o.image {
			t.Fatalf("the probe's container: %+v, want one of the sandbox image", probe)
		}
		sc := probe.SecurityContext
		if sc == nil || len(sc.Capabilities.Add) != 0 || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation {
			t.Errorf("the probe's container is not hardened: %+v", sc)
		}
		for _, name := range []string{containerProbe, containerAdmin, containerGrader} {
			for _, m := range container(p, name).VolumeMounts {
				if secrets[m.Name] || m.Name == "home" && name == containerProbe {
					t.Errorf("container %s mounts %s", name, m.Name)
				}
			}
			for _, env := range container(p, name).Env {
				if env.Name == "KUBECONFIG" {
					t.Errorf("container %s has a KUBECONFIG: %s", name, env.Value)
				}
			}
		}
	}

	// What install and lint say of the probe holds for a class as for
	// kind: this is the container and the identity they describe.
	line := ""
	for _, l := range e.lab.Powers().Lines() {
		if strings.HasPrefix(l, "probe scripts") {
			line = l
		}
	}
	if !strings.Contains(line, "in a container of the sandbox image, admin of the lab's namespaces, nothing cluster-wide") {
		t.Errorf("the probe's powers as shown: %q", line)
	}
}

// EndProbe stops what the probe's scripts left running and empties what
// they wrote; the next probe's first script is granted every right again.
func TestClassEndProbe(t *testing.T) {
	var cmds []string
	e := fakeLearner(func(_ context.Context, x podexec.Exec) (int, error) {
		if x.Stdin != nil {
			_, _ = io.Copy(io.Discard, x.Stdin)
		}
		cmds = append(cmds, x.Container+": "+strings.Join(x.Cmd, " "))
		return 0, nil
	}, 0)
	e.adminCS, e.admin = probeCluster(), &rest.Config{}
	ctx := context.Background()
	if _, err := e.RunAdminScript(ctx, "true", io.Discard); err != nil || !e.probing {
		t.Fatalf("RunAdminScript: %v, probing %v", err, e.probing)
	}
	if err := e.EndProbe(ctx); err != nil || e.probing {
		t.Fatalf("EndProbe: %v, probing %v", err, e.probing)
	}
	last := cmds[len(cmds)-1]
	if !strings.HasPrefix(last, containerProbe+": ") || !strings.Contains(last, "kill -KILL -1") || !strings.Contains(last, provision.ProbeDir+" /tmp -mindepth 1 -delete") {
		t.Errorf("EndProbe ran %q", last)
	}
}

// etcd takes only the API server: TLS with client certificates of a CA of
// its own, on client and peer ports alike, no plain-HTTP listener; the API
// server alone holds the client certificate, and no one the CA's key.
func TestEtcdTakesOnlyTheAPIServer(t *testing.T) {
	for _, o := range []classObjects{testObjects(), nodeObjects()} {
		p := o.controlPlanePod()
		etcd := strings.Join(container(p, "etcd").Command, " ")
		for _, want := range []string{
			"--listen-client-urls=https://127.0.0.1:2379", "--client-cert-auth=true",
			"--cert-file=" + etcdCertDir + "/" + certEtcdServer, "--key-file=" + etcdCertDir + "/" + certEtcdServerKey,
			"--trusted-ca-file=" + etcdCertDir + "/" + certEtcdCA,
			"--listen-peer-urls=https://127.0.0.1:2380", "--peer-client-cert-auth=true",
			"--peer-trusted-ca-file=" + etcdCertDir + "/" + certEtcdCA,
		} {
			if !strings.Contains(etcd, want+" ") {
				t.Errorf("etcd lacks %s: %s", want, etcd)
			}
		}
		if strings.Contains(etcd, "http://") {
			t.Errorf("etcd listens without TLS: %s", etcd)
		}
		api := container(p, "kube-apiserver").Command
		for _, want := range []string{"--etcd-servers=https://127.0.0.1:2379", "--etcd-cafile=" + vcpCertDir + "/" + certEtcdCA,
			"--etcd-certfile=" + vcpCertDir + "/" + certEtcdClient, "--etcd-keyfile=" + vcpCertDir + "/" + certEtcdClientKey} {
			if !slices.Contains(api, want) {
				t.Errorf("the API server lacks %s", want)
			}
		}
		// Which containers may read which of etcd's keys.
		keysOf := map[string][]string{}
		for _, v := range p.Spec.Volumes {
			if v.Secret != nil {
				for _, it := range v.Secret.Items {
					keysOf[v.Name] = append(keysOf[v.Name], it.Key)
				}
			}
		}
		for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
			for _, m := range c.VolumeMounts {
				for _, k := range keysOf[m.Name] {
					switch {
					case k == certEtcdClientKey && c.Name != "kube-apiserver":
						t.Errorf("container %s has etcd's client key", c.Name)
					case k == certEtcdServerKey && c.Name != "etcd":
						t.Errorf("container %s has etcd's own key", c.Name)
					}
				}
			}
		}
		for _, name := range []string{containerGrader, containerProbe, containerAdmin} {
			for _, m := range container(p, name).VolumeMounts {
				if m.Name == "data" && m.SubPath != "audit" {
					t.Errorf("container %s mounts etcd's data (%+v)", name, m)
				}
			}
		}
	}

	// etcd's CA signs the API server's client certificate; no certificate
	// of the control plane's CA (labctl's admin, the kubelet's) is one
	// etcd accepts.
	data, err := makeControlPlaneCerts("labctl-ada", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(data[certEtcdCA])
	verify := func(certPEM []byte, usage x509.ExtKeyUsage) error {
		b, _ := pem.Decode(certPEM)
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return err
		}
		_, err = c.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	if err := verify(data[certEtcdClient], x509.ExtKeyUsageClientAuth); err != nil {
		t.Errorf("the API server's etcd client certificate: %v", err)
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if err := verify(data[certEtcdServer], usage); err != nil {
			t.Errorf("etcd's certificate (usage %d: it serves, and is its own peer's client): %v", usage, err)
		}
	}
	if b, _ := pem.Decode(data[certEtcdServer]); b != nil {
		if c, err := x509.ParseCertificate(b.Bytes); err != nil || c.VerifyHostname("127.0.0.1") != nil {
			t.Errorf("etcd's certificate does not name 127.0.0.1: %v", err)
		}
	}
	for _, conf := range []string{certAdminConf, certKubeletConf, certSchedulerConf} {
		cfg, err := clientcmd.Load(data[conf])
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range cfg.AuthInfos {
			if verify(u.ClientCertificateData, x509.ExtKeyUsageClientAuth) == nil {
				t.Errorf("etcd would take %s's certificate", conf)
			}
		}
	}
	if bytes.Equal(data[certEtcdCA], data[certCA]) {
		t.Error("etcd's CA is the control plane's")
	}
	for k, v := range data {
		if strings.HasPrefix(k, "etcd-ca") && strings.Contains(string(v), "PRIVATE KEY") {
			t.Errorf("the Secret keeps etcd's CA key as %s", k)
		}
	}

	// A control plane made when etcd took plain connections gets etcd's
	// credentials; one that has them keeps them.
	old := maps.Clone(data)
	for _, k := range []string{certEtcdCA, certEtcdServer, certEtcdServerKey, certEtcdClient, certEtcdClientKey} {
		delete(old, k)
	}
	got, changed, err := withEtcdCerts(old, time.Now())
	if err != nil || !changed || len(got[certEtcdClientKey]) == 0 || !bytes.Equal(got[certCA], data[certCA]) {
		t.Errorf("withEtcdCerts of an older Secret: changed %v, %v", changed, err)
	}
	if again, changed, err := withEtcdCerts(got, time.Now()); err != nil || changed || !bytes.Equal(again[certEtcdCA], got[certEtcdCA]) {
		t.Errorf("withEtcdCerts of a current Secret: changed %v, %v", changed, err)
	}
}

// A learner node's kubelet gives every Pod that names no seccomp profile
// the runtime's default.
func TestNodeKubeletSeccompDefault(t *testing.T) {
	if !strings.Contains(nodeConfig()["kubelet.yaml"], "\nseccompDefault: true\n") {
		t.Errorf("the learner node's kubelet has no seccompDefault:\n%s", nodeKubelet)
	}
}

// nodeObjects are testObjects with a learner node.
func nodeObjects() classObjects {
	o := testObjects()
	o.nodeImage = "labctl/node:x"
	return o
}

// The warden asks the home's file system every homePoll between its looks,
// so that one allocation past the bound is seen at once.
func TestHomeboundPolls(t *testing.T) {
	cmd := container(testObjects().homeboundPod(), containerWarden).Command
	if !slices.Contains(cmd, "--poll="+homePoll.String()) || homePoll <= 0 || homePoll >= homeLook {
		t.Errorf("the warden's command: %q", cmd)
	}
}

// A control plane made by an earlier labctl, still running, has no probe
// container: a probe there says so and what brings the learner's Pods to
// these settings, not the API server's bare refusal.
func TestClassProbeOnAnEarlierControlPlane(t *testing.T) {
	e := fakeLearner(func(_ context.Context, x podexec.Exec) (int, error) {
		if x.Container == containerProbe {
			return -1, errors.New(`unable to upgrade connection: container probe is not valid for pod vcp`)
		}
		return 0, nil
	}, 0)
	e.adminCS, e.admin = probeCluster(), &rest.Config{}
	_, err := e.RunAdminScript(context.Background(), "true", io.Discard)
	if err == nil || !strings.Contains(err.Error(), "earlier labctl") || !strings.Contains(err.Error(), "--renew-outdated") {
		t.Errorf("a probe on a control plane without the probe's container: %v, want what to do", err)
	}
}
