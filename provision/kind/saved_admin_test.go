package kind

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeAdminFile writes a kubeconfig as kind writes it for cluster name:
// its context kind-NAME, the server and the certificate authority given.
func writeAdminFile(t *testing.T, path, name, server string, ca []byte) {
	t.Helper()
	key := "kind-" + name
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[key] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[key] = &clientcmdapi.AuthInfo{Token: "admin"}
	cfg.Contexts[key] = &clientcmdapi.Context{Cluster: key, AuthInfo: key}
	cfg.CurrentContext = key
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
}

// TestSavedAdmin: a warm up reuses the admin kubeconfig kind wrote at
// create only when the cluster's own API server answers it; a file from
// another cluster (another authority), a server that is not ready, a file
// without the cluster's context or no file are asked of kind instead.
func TestSavedAdmin(t *testing.T) {
	ready := true
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready {
			http.Error(w, "not ready", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	otherCA := selfSignedCA(t)

	dir := t.TempDir()
	path := filepath.Join(dir, "admin.kubeconfig")
	k := &kind{name: "labctl-shop", kubeconfig: path}
	if _, ok := k.savedAdmin(t.Context()); ok {
		t.Fatal("no file, yet the saved config was used")
	}
	writeAdminFile(t, path, "labctl-shop", srv.URL, ca)
	cfg, ok := k.savedAdmin(t.Context())
	if !ok || cfg.Host != srv.URL || k.admin == nil {
		t.Fatalf("the cluster's own file: %v %v, cached %v", cfg, ok, k.admin != nil)
	}
	if again, err := k.adminConfig(t.Context()); err != nil || again.Host != srv.URL {
		t.Fatalf("adminConfig after it: %v, %v; want the saved config without asking kind", again, err)
	}

	for _, tt := range []struct {
		name string
		prep func()
	}{
		{"another cluster's authority", func() { writeAdminFile(t, path, "labctl-shop", srv.URL, otherCA) }},
		{"another cluster's context", func() { writeAdminFile(t, path, "labctl-other", srv.URL, ca) }},
		{"not ready", func() { writeAdminFile(t, path, "labctl-shop", srv.URL, ca); ready = false }},
		{"a broken file", func() { os.WriteFile(path, []byte("{"), 0o600) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.prep()
			defer func() { ready = true }()
			k := &kind{name: "labctl-shop", kubeconfig: path}
			if _, ok := k.savedAdmin(t.Context()); ok || k.admin != nil {
				t.Errorf("the saved config was used")
			}
		})
	}
}

// selfSignedCA is a certificate authority of another cluster.
func selfSignedCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
