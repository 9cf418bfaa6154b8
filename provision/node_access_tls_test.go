package provision

import (
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"
)

// The node access certificates: the nodes' serves every node's name and
// only as a server, the learner's only as a client, both of the one CA;
// a client certificate of another up's CA is not of this one.
func TestNodeAccessTLS(t *testing.T) {
	nodes := []string{"lab-control-plane", "lab-worker"}
	now := time.Now()
	a, err := NewNodeAccessTLS(nodes, now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewNodeAccessTLS(nodes, now)
	if err != nil {
		t.Fatal(err)
	}
	pool := func(ca []byte) *x509.CertPool {
		p := x509.NewCertPool()
		if !p.AppendCertsFromPEM(ca) {
			t.Fatal("CA is no PEM certificate")
		}
		return p
	}
	parse := func(p []byte) *x509.Certificate {
		blk, _ := pem.Decode(p)
		if blk == nil {
			t.Fatal("no PEM block")
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	verify := func(cert, ca []byte, usage x509.ExtKeyUsage, name string) error {
		_, err := parse(cert).Verify(x509.VerifyOptions{Roots: pool(ca), DNSName: name, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	for _, n := range nodes {
		if err := verify(a.ServerCert, a.CA, x509.ExtKeyUsageServerAuth, n); err != nil {
			t.Errorf("the server certificate for %s: %v", n, err)
		}
	}
	if err := verify(a.ServerCert, a.CA, x509.ExtKeyUsageServerAuth, "other-control-plane"); err == nil {
		t.Error("the server certificate is valid for a node of another lab")
	}
	if err := verify(a.ClientCert, a.CA, x509.ExtKeyUsageClientAuth, ""); err != nil {
		t.Errorf("the client certificate: %v", err)
	}
	if err := verify(a.ServerCert, a.CA, x509.ExtKeyUsageClientAuth, ""); err == nil {
		t.Error("the server certificate passes as a client's")
	}
	if err := verify(a.ClientCert, a.CA, x509.ExtKeyUsageServerAuth, ""); err == nil {
		t.Error("the client certificate passes as a server's")
	}
	if err := verify(b.ClientCert, a.CA, x509.ExtKeyUsageClientAuth, ""); err == nil {
		t.Error("a client certificate of another up's CA passes")
	}
	if !certNames(a.ServerCert, nodes) || certNames(a.ServerCert, append(nodes, "lab-worker2")) {
		t.Error("certNames does not tell which nodes the certificate names")
	}
	if !strings.Contains(string(a.ClientKey), "PRIVATE KEY") || !strings.Contains(string(a.ServerKey), "PRIVATE KEY") {
		t.Error("keys are not PEM private keys")
	}
}
