package class

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"net"
	"net/netip"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The certificates of one learner's virtual control plane, made by labctl:
// a CA of its own (so no other learner's credentials are accepted), the API
// server's serving certificate, client certificates for labctl (the
// control plane's admin) and the controller manager, and the key pair that
// signs service-account tokens. They live in a Secret in the learner's
// namespace on the class cluster, which only the instructor reads.

// Keys of the certificates Secret.
const (
	certCA          = "ca.crt"
	certCAKey       = "ca.key"
	certServer      = "apiserver.crt"
	certServerKey   = "apiserver.key"
	certSA          = "sa.pub"
	certSAKey       = "sa.key"
	certAdminConf   = "admin.conf"
	certManagerConf = "controller-manager.conf"
	// The learner node's (nodes.go): the kubelet's, the scheduler's and
	// kube-proxy's kubeconfigs, and the API server's client certificate
	// for the kubelet.
	certKubeletConf    = "kubelet.conf"
	certSchedulerConf  = "scheduler.conf"
	certProxyConf      = "kube-proxy.conf"
	certKubeletClient  = "apiserver-kubelet-client.crt"
	certKubeletClientK = "apiserver-kubelet-client.key"
	// etcd's (addEtcdCerts): the certificate of a CA of its own, whose
	// key is not kept, etcd's serving and peer certificate, and the API
	// server's client certificate for etcd.
	certEtcdCA        = "etcd-ca.crt"
	certEtcdServer    = "etcd-server.crt"
	certEtcdServerKey = "etcd-server.key"
	certEtcdClient    = "apiserver-etcd-client.crt"
	certEtcdClientKey = "apiserver-etcd-client.key"
)

// certValidity is how long the certificates of a class live.
const certValidity = 2 * 365 * 24 * time.Hour

// vcpInternalServer is the virtual API server's address inside its own Pod.
const vcpInternalServer = "https://127.0.0.1:6443"

// makeControlPlaneCerts returns the Secret's data for a control plane whose
// Service is vcpService in namespace ns.
func makeControlPlaneCerts(ns string, now time.Time) (map[string][]byte, error) {
	ca, caKey, caPEM, caKeyPEM, err := newCA("labctl-class-ca "+ns, now)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{certCA: caPEM, certCAKey: caKeyPEM}
	if out[certServer], out[certServerKey], err = serverCert(ns, ca, caKey, now); err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if out[certSAKey], err = pemKey(saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	out[certSA] = pemBlock("PUBLIC KEY", pub)
	for key, subject := range map[string]pkix.Name{
		certAdminConf:   {CommonName: "labctl-admin", Organization: []string{"system:masters"}},
		certManagerConf: {CommonName: "system:kube-controller-manager"},
	} {
		cert, certKey, err := signedCert(ca, caKey, now, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, subject, nil, nil)
		if err != nil {
			return nil, err
		}
		if out[key], err = clientKubeconfig(vcpInternalServer, out[certCA], cert, certKey); err != nil {
			return nil, err
		}
	}
	if err := addNodeCerts(out, ca, caKey, now); err != nil {
		return nil, err
	}
	if err := addEtcdCerts(out, now); err != nil {
		return nil, err
	}
	return out, nil
}

// addEtcdCerts adds to a control plane's Secret data etcd's credentials:
// a CA of etcd's own, so that no certificate of the control plane's CA
// (the kubelet's, the scheduler's, labctl's admin) is one etcd accepts,
// etcd's certificate (it serves and, for its peer port, is a client too)
// and the API server's client certificate, the only other one it signs:
// its key is dropped once they are signed.
func addEtcdCerts(out map[string][]byte, now time.Time) error {
	ca, caKey, caPEM, _, err := newCA("labctl-class-etcd-ca", now)
	if err != nil {
		return err
	}
	out[certEtcdCA] = caPEM
	if out[certEtcdServer], out[certEtcdServerKey], err = signedCert(ca, caKey, now,
		[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		pkix.Name{CommonName: "etcd"}, []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}); err != nil {
		return err
	}
	out[certEtcdClient], out[certEtcdClientKey], err = signedCert(ca, caKey, now, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		pkix.Name{CommonName: "kube-apiserver-etcd-client"}, nil, nil)
	return err
}

// withEtcdCerts is a Secret's data made by a labctl whose etcd took
// connections without TLS, with etcd's credentials added; ok is false when
// nothing was missing.
func withEtcdCerts(data map[string][]byte, now time.Time) (out map[string][]byte, ok bool, err error) {
	if len(data[certEtcdCA]) > 0 && len(data[certEtcdServer]) > 0 && len(data[certEtcdClient]) > 0 {
		return data, false, nil
	}
	out = maps.Clone(data)
	if err := addEtcdCerts(out, now); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// newCA is a new CA named cn, with its key, also as PEM.
func newCA(cn string, now time.Time) (ca *x509.Certificate, key *ecdsa.PrivateKey, certPEM, keyPEM []byte, err error) {
	key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if ca, err = x509.ParseCertificate(der); err != nil {
		return nil, nil, nil, nil, err
	}
	if keyPEM, err = pemKey(key); err != nil {
		return nil, nil, nil, nil, err
	}
	return ca, key, pemBlock("CERTIFICATE", der), keyPEM, nil
}

// serverCert is the API server's serving certificate: its names on the
// class cluster (through its Service) and, for the Pods of a learner node,
// its names and address in the learner's cluster (the kubernetes Service,
// the first address of the node's Service range).
func serverCert(ns string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, now time.Time) (certPEM, keyPEM []byte, err error) {
	svc := vcpService
	return signedCert(ca, caKey, now, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, pkix.Name{CommonName: "kube-apiserver"},
		[]string{"localhost", svc, svc + "." + ns, svc + "." + ns + ".svc",
			"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		[]net.IP{net.IPv4(127, 0, 0, 1), nodeAPIServiceIP()})
}

// nodeAPIServiceIP is the kubernetes Service's address in a learner node's
// cluster: the first of its Service range.
func nodeAPIServiceIP() net.IP {
	return net.IP(netip.MustParsePrefix(nodeServiceCIDR).Addr().Next().AsSlice())
}

// addNodeCerts adds to a control plane's Secret data the credentials of its
// learner node (nodes.go), signed by its CA.
func addNodeCerts(out map[string][]byte, ca *x509.Certificate, caKey *ecdsa.PrivateKey, now time.Time) error {
	for key, subject := range map[string]pkix.Name{
		certKubeletConf:   {CommonName: "system:node:" + learnerNodeName, Organization: []string{"system:nodes"}},
		certSchedulerConf: {CommonName: "system:kube-scheduler"},
		certProxyConf:     {CommonName: "system:kube-proxy"},
	} {
		cert, certKey, err := signedCert(ca, caKey, now, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, subject, nil, nil)
		if err != nil {
			return err
		}
		if out[key], err = clientKubeconfig(vcpInternalServer, out[certCA], cert, certKey); err != nil {
			return err
		}
	}
	cert, key, err := signedCert(ca, caKey, now, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}}, nil, nil)
	if err != nil {
		return err
	}
	out[certKubeletClient], out[certKubeletClientK] = cert, key
	return nil
}

// withNodeCerts is a Secret's data made by a labctl before learner nodes,
// with their credentials added and a serving certificate the node's Pods
// can trust (an older labctl's lacked the kubernetes Service's address);
// ok is false when nothing was missing.
func withNodeCerts(ns string, data map[string][]byte, now time.Time) (out map[string][]byte, ok bool, err error) {
	hasNode := len(data[certKubeletConf]) > 0 && len(data[certKubeletClient]) > 0
	if hasNode && servesNodePods(data[certServer]) {
		return data, false, nil
	}
	cb, _ := pem.Decode(data[certCA])
	kb, _ := pem.Decode(data[certCAKey])
	if cb == nil || kb == nil {
		return nil, false, fmt.Errorf("the control plane's CA is not in its Secret")
	}
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, false, err
	}
	caKey, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, false, err
	}
	out = maps.Clone(data)
	if !hasNode {
		if err := addNodeCerts(out, ca, caKey, now); err != nil {
			return nil, false, err
		}
	}
	if !servesNodePods(data[certServer]) {
		// The API server reloads its serving certificate from the file.
		if out[certServer], out[certServerKey], err = serverCert(ns, ca, caKey, now); err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}

// servesNodePods reports whether the serving certificate certPEM holds the
// address the Pods of a learner node reach the API server at.
func servesNodePods(certPEM []byte) bool {
	b, _ := pem.Decode(certPEM)
	if b == nil {
		return false
	}
	c, err := x509.ParseCertificate(b.Bytes)
	return err == nil && c.VerifyHostname(nodeAPIServiceIP().String()) == nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

func signedCert(ca *x509.Certificate, caKey *ecdsa.PrivateKey, now time.Time, usage []x509.ExtKeyUsage, subject pkix.Name, dns []string, ips []net.IP) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usage,
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = pemKey(key)
	return pemBlock("CERTIFICATE", der), keyPEM, err
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func pemKey(k *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pemBlock("EC PRIVATE KEY", der), nil
}

// clientKubeconfig is a kubeconfig with a client certificate.
func clientKubeconfig(server string, ca, cert, key []byte) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["vcp"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos["vcp"] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
	cfg.Contexts["vcp"] = &clientcmdapi.Context{Cluster: "vcp", AuthInfo: "vcp"}
	cfg.CurrentContext = "vcp"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing a kubeconfig: %w", err)
	}
	return b, nil
}
