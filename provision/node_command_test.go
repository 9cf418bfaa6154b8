package provision

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The sandbox's node command finds a node the runtime serves itself (a
// class's learner node) in NodeAccessHosts, connects there with the
// learner's client certificate, sends the command and ends with its exit
// code; a name the file does not list is no node, and no node-access Pod
// is asked for. The listener here is a TLS server of the test's that
// answers the session's frames.
func TestNodeCommandHosts(t *testing.T) {
	py, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("python3, which runs the node command: %v", err)
	}
	python := strings.TrimSpace(string(py))
	certs, err := NewNodeAccessTLS([]string{"lab-node"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certs.ServerCert, certs.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certs.CA)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		head := make([]byte, 5)
		if _, err := io.ReadFull(c, head); err != nil {
			got <- "no frame: " + err.Error()
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[1:]))
		if _, err := io.ReadFull(c, body); err != nil {
			got <- "no body: " + err.Error()
			return
		}
		got <- string(head[:1]) + " " + strings.Join(strings.Split(string(body), "\x00")[4:], " ")
		frame := func(t byte, data string) {
			b := append([]byte{t, 0, 0, 0, 0}, data...)
			binary.BigEndian.PutUint32(b[1:], uint32(len(data)))
			_, _ = c.Write(b)
		}
		frame('O', "on the node\n")
		frame('X', "3")
	}()
	dir := t.TempDir()
	for name, data := range map[string][]byte{tlsCA: certs.CA, tlsCert: certs.ClientCert, tlsKey: certs.ClientKey} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(filepath.Join(dir, "nodes"), []byte("lab-node 127.0.0.1 "+strconv.Itoa(port)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := strings.ReplaceAll(nodeCommand, NodeAccessTLSDir, dir)
	if strings.Contains(script, NodeAccessTLSDir) {
		t.Fatal("the node command names its directory another way")
	}
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
		// No kubectl: a node looked for another way is not found.
		cmd.Env = []string{"PATH=/nonexistent"}
		var out, errOut bytes.Buffer
		cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(""), &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("lab-node", "systemctl", "status", "kubelet")
	if code != 3 || out != "on the node\n" {
		t.Errorf("node lab-node: exit %d, %q, %q; want exit 3 and the node's output", code, out, errOut)
	}
	select {
	case h := <-got:
		if h != "H systemctl status kubelet" {
			t.Errorf("the listener got %q, want the command", h)
		}
	case <-time.After(10 * time.Second):
		t.Error("the listener got nothing")
	}
	if code, _, errOut := run("other-node", "true"); code != 2 || !strings.Contains(errOut, "other-node is not a node of this lab") {
		t.Errorf("node other-node: exit %d, %q; want 2 and that it is no node", code, errOut)
	}
}
