package provision

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"
)

// NodeAccessTLS is what the node's listener and the sandbox's node command
// hold: a CA made for this cluster at up, the server's key and certificate
// (naming every node), and the learner's client key and certificate. The
// CA's key is never kept: nothing else is ever signed by it.
type NodeAccessTLS struct {
	CA         []byte
	ServerCert []byte
	ServerKey  []byte
	ClientCert []byte
	ClientKey  []byte
}

// nodeAccessTLSLifetime bounds the certificates; up makes new ones anyway.
const nodeAccessTLSLifetime = 365 * 24 * time.Hour

// Keys of the node-access Secrets.
const (
	tlsCA   = "ca.crt"
	tlsCert = "tls.crt"
	tlsKey  = "tls.key"
)

// NewNodeAccessTLS makes a CA and, signed by it, a server certificate for
// the names of nodes and a client certificate.
func NewNodeAccessTLS(nodes []string, now time.Time) (*NodeAccessTLS, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("making the node access CA: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "labctl node access CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(nodeAccessTLSLifetime),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("making the node access CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("making the node access CA: %w", err)
	}
	leaf := func(cn string, usage x509.ExtKeyUsage, dns []string) (cert, key []byte, err error) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(),
			Subject:      pkix.Name{CommonName: cn},
			DNSNames:     dns,
			NotBefore:    now.Add(-time.Minute),
			NotAfter:     now.Add(nodeAccessTLSLifetime),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return nil, nil, err
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
	}
	t := &NodeAccessTLS{CA: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
	if t.ServerCert, t.ServerKey, err = leaf("labctl node access", x509.ExtKeyUsageServerAuth, nodes); err != nil {
		return nil, fmt.Errorf("making the nodes' certificate: %w", err)
	}
	if t.ClientCert, t.ClientKey, err = leaf("labctl learner", x509.ExtKeyUsageClientAuth, nil); err != nil {
		return nil, fmt.Errorf("making the learner's node certificate: %w", err)
	}
	return t, nil
}

// serial is a random certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

// fingerprint names a certificate (a node-access Pod's annotation, so a Pod
// serving an older certificate is replaced).
func fingerprint(certPEM []byte) string {
	sum := sha256.Sum256(certPEM)
	return hex.EncodeToString(sum[:8])
}

// certNames reports whether the PEM certificate names every one of nodes.
func certNames(certPEM []byte, nodes []string) bool {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return false
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return false
	}
	for _, n := range nodes {
		if c.VerifyHostname(n) != nil {
			return false
		}
	}
	return true
}
