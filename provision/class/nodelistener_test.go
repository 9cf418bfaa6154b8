package class

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/labctl/labctl/internal/podexec"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// With the instructor's consent a node-access lab whose checks judge
// through the API server is admitted; one whose checks read a node from
// outside it (a node's file, a service) is refused, naming the check and
// saying to judge through the API server.
func TestCheckLabNodeAccessChecks(t *testing.T) {
	consent := Consent{LearnerNodes: true, NodeAccessOn: NodeLabel{Key: "labctl.dev/node-access", Value: "yes"}}
	ok, err := lab.Load("testdata/class-node/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckLab(ok, consent); err != nil {
		t.Errorf("class-node with the consent: %v, want it admitted", err)
	}
	if err := CheckLab(ok, Consent{LearnerNodes: true}); err == nil {
		t.Error("class-node without --node-access-on is admitted")
	}
	admin, err := lab.Load("../../labs/node-admin/lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	service := *ok
	service.Steps = []lab.Step{{ID: "s", Checks: []lab.Check{{Name: "kubelet-runs", Service: &lab.ServiceCheck{Node: "control-plane", Unit: "kubelet.service"}}}}}
	for _, tc := range []struct {
		l    *lab.Lab
		says []string
	}{
		{admin, []string{"manifest-on-node", "/etc/kubernetes/manifests/web.yaml", "through the API server", "labctl up"}},
		{&service, []string{"kubelet-runs", "kubelet.service", "through the API server"}},
	} {
		var le *LabError
		err := CheckLab(tc.l, consent)
		if !errors.As(err, &le) {
			t.Errorf("%s: %v, want a *LabError", tc.l.Metadata.Name, err)
			continue
		}
		for _, want := range tc.says {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q does not say %q", tc.l.Metadata.Name, err, want)
			}
		}
	}
}

// A learner's node-access certificates are made once and kept in their
// namespace; the client certificate is the CA's, the listener's names the
// learner's node; they are made again when they are about to expire.
func TestNodeAccessCerts(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	now := time.Now()
	a, err := ensureNodeAccessCerts(ctx, cs, "labctl-ada", now)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := cs.CoreV1().Secrets("labctl-ada").Get(ctx, nodeAccessSecret, metav1.GetOptions{})
	if err != nil || !maps.EqualFunc(sec.Data, a, bytes.Equal) {
		t.Fatalf("the Secret %s holds %v (%v), want what was returned", nodeAccessSecret, sec, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(a[provision.NodeAccessCA]) {
		t.Fatal("no CA")
	}
	parse := func(k string) *x509.Certificate {
		b, _ := pem.Decode(a[k])
		if b == nil {
			t.Fatalf("%s is no PEM", k)
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if _, err := parse(nodeAccessClientCert).Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if _, err := parse(provision.NodeAccessCert).Verify(x509.VerifyOptions{Roots: pool, DNSName: learnerNodeName}); err != nil {
		t.Errorf("listener certificate for %s: %v", learnerNodeName, err)
	}
	for _, pair := range [][2]string{{provision.NodeAccessCert, provision.NodeAccessKey}, {nodeAccessClientCert, nodeAccessClientKey}} {
		if _, err := tls.X509KeyPair(a[pair[0]], a[pair[1]]); err != nil {
			t.Errorf("%s and %s: %v", pair[0], pair[1], err)
		}
	}
	b, err := ensureNodeAccessCerts(ctx, cs, "labctl-ada", now.Add(time.Hour))
	if err != nil || !maps.EqualFunc(a, b, bytes.Equal) {
		t.Errorf("a second class up made them again (%v)", err)
	}
	later := now.Add(365*24*time.Hour - nodeAccessRenewBefore + time.Hour)
	c, err := ensureNodeAccessCerts(ctx, cs, "labctl-ada", later)
	if err != nil || bytes.Equal(a[provision.NodeAccessCA], c[provision.NodeAccessCA]) {
		t.Errorf("certificates about to expire were kept (%v)", err)
	}
	if sec, _ := cs.CoreV1().Secrets("labctl-ada").Get(ctx, nodeAccessSecret, metav1.GetOptions{}); !maps.EqualFunc(sec.Data, c, bytes.Equal) {
		t.Error("the renewed certificates are not kept")
	}
}

// Only a node-access class's control-plane Service has the listener's
// port; the learner's own network wall keeps every other namespace's Pods
// from the control-plane Pod.
func TestNodeAccessServicePort(t *testing.T) {
	o := testObjects()
	l := *o.lab
	l.Cluster.NodeAccess = true
	o.lab = &l
	has := func(o classObjects) bool { return hasServicePort(o.service().Spec.Ports, nodeAccessPortName) }
	if has(o) {
		t.Error("a class without learner nodes has the node-access port")
	}
	o.nodeImage = "labctl/node:x"
	if has(o) {
		t.Error("a class without --node-access-on has the node-access port")
	}
	o.nodeAccessOn = NodeLabel{Key: "labctl.dev/node-access", Value: "yes"}
	if !has(o) {
		t.Fatal("a node-access class has no node-access port")
	}
	for _, p := range o.service().Spec.Ports {
		if p.Name == nodeAccessPortName && (p.Port != provision.NodeAccessPort || p.NodePort != 0) {
			t.Errorf("node-access port %+v, want %d and no node port", p, provision.NodeAccessPort)
		}
	}
	if s := o.service(); s.Spec.Type != "" || len(s.Spec.ExternalIPs) > 0 {
		t.Errorf("the control-plane Service is %q %v, want a cluster-internal one", s.Spec.Type, s.Spec.ExternalIPs)
	}
	np := o.networkPolicy().Spec
	if len(np.Ingress) != 1 || len(np.Ingress[0].From) != 1 || np.Ingress[0].From[0].NamespaceSelector != nil || np.Ingress[0].From[0].IPBlock != nil {
		t.Errorf("the wall lets in %+v, want the namespace's own Pods only", np.Ingress)
	}
}

// The listener is the node's socat on the Pod's address, TLS with a client
// certificate required against the learner's CA, a process per connection
// running the session program; its files come on the exec's stdin.
func TestNodeListenerCommand(t *testing.T) {
	cmd := nodeListenerCommand("10.244.1.7")
	if len(cmd) != 5 || cmd[0] != "sh" || cmd[4] != "10.244.1.7" {
		t.Fatalf("command %q, want sh -c SCRIPT sh ADDRESS", cmd)
	}
	script := cmd[2]
	for _, want := range []string{"socat OPENSSL-LISTEN:10290,bind=\"$1\",reuseaddr,fork,", "cafile=\"$d/ca.crt\"", "cert=\"$d/tls.crt\"", "key=\"$d/tls.key\"",
		"verify=1", `EXEC:"perl $d/session"`, "setsid", "</dev/null", "sport = :10290", "echo kept", "/run/labctl-node-access"} {
		if !strings.Contains(script, want) {
			t.Errorf("the listener's script does not say %q:\n%s", want, script)
		}
	}
	if strings.Contains(script, "%!") || strings.Contains(script, "verify=0") {
		t.Errorf("the listener's script is malformed:\n%s", script)
	}
	certs := map[string][]byte{provision.NodeAccessCA: []byte("CA"), provision.NodeAccessCert: []byte("CERT"), provision.NodeAccessKey: []byte("KEY"),
		nodeAccessClientKey: []byte("CLIENT KEY")}
	b, err := nodeListenerFiles(certs)
	if err != nil {
		t.Fatal(err)
	}
	got := tarFiles(t, b)
	want := map[string][]byte{"ca.crt": []byte("CA"), "tls.crt": []byte("CERT"), "tls.key": []byte("KEY"), "session": []byte(provision.NodeSession())}
	if !maps.EqualFunc(got, want, bytes.Equal) {
		t.Errorf("the listener's files: %q, want the CA, its certificate and key and the session (never the learner's key)", got)
	}
}

// A node-access class's learner whose Service an earlier labctl made
// without the listener's port gets it at the next class up; the API
// server's port stays.
func TestNodeAccessPortAddedToAnOlderService(t *testing.T) {
	ctx := context.Background()
	c, cs := fakeClass()
	l := *c.cfg.Lab
	l.Cluster.NodeAccess = true
	c.cfg.Lab, c.cfg.LearnerNodes, c.cfg.NodeImage = &l, true, "labctl/node:x"
	c.cfg.NodeAccessOn = NodeLabel{Key: "labctl.dev/node-access", Value: "yes"}
	o := c.objects("ada")
	old := o.service()
	old.Spec.Ports = old.Spec.Ports[:1]
	if _, err := cs.CoreV1().Services(o.namespace).Create(ctx, old, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.ensureObjects(ctx, o); err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(o.namespace).Get(ctx, vcpService, metav1.GetOptions{})
	if err != nil || !hasServicePort(svc.Spec.Ports, nodeAccessPortName) || !hasServicePort(svc.Spec.Ports, "https") {
		t.Errorf("the Service of an older class after class up: %+v, %v", svc.Spec.Ports, err)
	}
}

// What labctl hands the learner's node, where the learner is root: the
// CA's certificate, the listener's own certificate and key, and the
// session program; never a key that could sign a client certificate (the
// CA's key is kept nowhere), nor the learner's client key. What the node
// answers is not read back: only its exit code says whether it started.
func TestNodeListenerGetsNoSigningKey(t *testing.T) {
	ctx := context.Background()
	var sent []byte
	var cmd []string
	e := withNodeAccess(fakeLearner(func(_ context.Context, x podexec.Exec) (int, error) {
		cmd = x.Cmd
		sent, _ = io.ReadAll(x.Stdin)
		// A node whose programs the learner replaced answers as they like.
		_, _ = io.WriteString(x.Stdout, "kept\n-----BEGIN PRIVATE KEY-----\n")
		return 0, nil
	}, 0))
	if err := e.startNodeListener(ctx); err != nil {
		t.Fatal(err)
	}
	if len(cmd) != 5 || cmd[4] != "10.244.1.7" {
		t.Errorf("the listener's command %q, want it bound to the Pod's address", cmd)
	}
	sec, err := e.class.cs.CoreV1().Secrets(e.ns).Get(ctx, nodeAccessSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(sec.Data))
	if want := []string{provision.NodeAccessCA, nodeAccessClientCert, nodeAccessClientKey, provision.NodeAccessCert, provision.NodeAccessKey}; !slices.Equal(keys, slices.Sorted(slices.Values(want))) {
		t.Errorf("the Secret keeps %q, want %q (no key of the CA)", keys, want)
	}
	files := tarFiles(t, sent)
	if names := slices.Sorted(maps.Keys(files)); !slices.Equal(names, []string{provision.NodeAccessCA, "session", provision.NodeAccessCert, provision.NodeAccessKey}) {
		t.Errorf("the node gets %q", names)
	}
	for name, data := range files {
		if name != provision.NodeAccessKey && bytes.Contains(data, []byte("PRIVATE KEY")) {
			t.Errorf("the node's %s holds a private key", name)
		}
	}
	if !bytes.Equal(files[provision.NodeAccessKey], sec.Data[provision.NodeAccessKey]) || bytes.Equal(files[provision.NodeAccessKey], sec.Data[nodeAccessClientKey]) {
		t.Error("the node's key is not the listener's own")
	}
	if c, _ := x509.ParseCertificate(mustPEM(t, files[provision.NodeAccessCert])); c == nil || c.IsCA || !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Error("the listener's certificate could sign, or serve as a client's")
	}
}

func mustPEM(t *testing.T, data []byte) []byte {
	t.Helper()
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatal("no PEM")
	}
	return b.Bytes
}

// A learner brought down and up again (their namespace, and its Secret,
// made anew) gets a CA of its own: a client certificate they kept from
// before is not one the new listener asks for.
func TestNodeAccessCertsAfterDown(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset()
	now := time.Now()
	old, err := ensureNodeAccessCerts(ctx, cs, "labctl-ada", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Secrets("labctl-ada").Delete(ctx, nodeAccessSecret, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	cur, err := ensureNodeAccessCerts(ctx, cs, "labctl-ada", now)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cur[provision.NodeAccessCA]) {
		t.Fatal("no CA")
	}
	kept, err := x509.ParseCertificate(mustPEM(t, old[nodeAccessClientCert]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kept.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("the client certificate from before the learner was brought down is one the new CA signed")
	}
}

// tarFiles returns the files of the tar archive b by name.
func tarFiles(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if files[h.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
}
