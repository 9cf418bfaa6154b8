package class

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/provision"
)

// The way onto a learner's node, in a class of a node-access lab the
// instructor consented to (nodeaccess.go): labctl starts, in the node
// container of the learner's control-plane Pod, a listener like kind's
// (provision/node_access.go): the node's socat serving TLS on port
// provision.NodeAccessPort of the Pod's address, asking for a client
// certificate of a CA of the learner's own, each connection running the
// node's perl with the session program. The learner's sandbox reaches it
// through the control-plane Service, whose port nodeAccessPortName only
// node-access classes have; the network wall (isolatePolicy) lets only the
// Pods of the learner's own namespace reach the control-plane Pod, and
// only the sandbox holds the client certificate. No port of the class
// node is opened and the Pod keeps its own network.

// nodeAccessSecret holds a learner's node-access certificates: the CA, the
// listener's certificate and key (named learnerNodeName), and the
// learner's client certificate and key.
const nodeAccessSecret = "node-access"

// Keys of nodeAccessSecret besides the CA's and the listener's
// (provision.NodeAccessCA, Cert, Key).
const (
	nodeAccessClientCert = "client.crt"
	nodeAccessClientKey  = "client.key"
)

// nodeAccessPortName names the control-plane Service's port of the
// listener.
const nodeAccessPortName = "node-access"

// nodeAccessRenewBefore: the certificates are made again when they expire
// within this.
const nodeAccessRenewBefore = 30 * 24 * time.Hour

// nodeListenerDir is where the listener's files are kept in the node
// (its /run, in memory), root's only.
const nodeListenerDir = "/run/labctl-node-access"

// nodeAccess says the learners of o's class are root on their learner
// node, which they reach from the sandbox.
func (o classObjects) nodeAccess() bool {
	return o.node() && o.lab.Cluster.NodeAccess && !o.nodeAccessOn.IsZero()
}

// nodeAccessHost is the address the learner's sandbox reaches the listener
// at: the control-plane Service's name.
func nodeAccessHost(ns string) string { return vcpService + "." + ns + ".svc" }

// ensureNodeAccessCerts returns the learner's node-access certificates,
// made and kept in nodeAccessSecret when missing, not naming the node, or
// expiring within nodeAccessRenewBefore.
func ensureNodeAccessCerts(ctx context.Context, cs kubernetes.Interface, ns string, now time.Time) (map[string][]byte, error) {
	secrets := cs.CoreV1().Secrets(ns)
	cur, err := secrets.Get(ctx, nodeAccessSecret, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading the node-access certificates of %s: %w", ns, err)
	}
	found := err == nil
	if found && nodeAccessCertsGood(cur.Data, now) {
		return cur.Data, nil
	}
	t, err := provision.NewNodeAccessTLS([]string{learnerNodeName}, now)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{
		provision.NodeAccessCA: t.CA, provision.NodeAccessCert: t.ServerCert, provision.NodeAccessKey: t.ServerKey,
		nodeAccessClientCert: t.ClientCert, nodeAccessClientKey: t.ClientKey,
	}
	if found {
		cur.Data = data
		_, err = secrets.Update(ctx, cur, metav1.UpdateOptions{})
	} else {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: nodeAccessSecret, Namespace: ns}, Data: data}
		_, err = secrets.Create(ctx, sec, metav1.CreateOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("keeping the node-access certificates of %s: %w", ns, err)
	}
	return data, nil
}

// nodeAccessCertsGood says data holds every certificate and key, the
// listener's naming the learner's node, none expiring within
// nodeAccessRenewBefore.
func nodeAccessCertsGood(data map[string][]byte, now time.Time) bool {
	for _, k := range []string{provision.NodeAccessKey, nodeAccessClientKey} {
		if len(data[k]) == 0 {
			return false
		}
	}
	for _, k := range []string{provision.NodeAccessCA, provision.NodeAccessCert, nodeAccessClientCert} {
		b, _ := pem.Decode(data[k])
		if b == nil {
			return false
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil || now.Add(nodeAccessRenewBefore).After(c.NotAfter) {
			return false
		}
		if k == provision.NodeAccessCert && c.VerifyHostname(learnerNodeName) != nil {
			return false
		}
	}
	return true
}

// nodeListenerScript starts the listener in the node container, detached
// so that it outlives the exec, bound to the Pod's address $1, from the
// files on its stdin (a tar); a listener that runs from the same files is
// kept. It prints "kept" or "started".
const nodeListenerScript = `set -eu
d=` + nodeListenerDir + `
listening() { ss -Hltn "sport = :%[1]d" | grep -q .; }
ours() { [ -f "$d/pid" ] && [ "$(cat "/proc/$(cat "$d/pid")/comm" 2>/dev/null)" = socat ]; }
umask 077
new=$(mktemp -d /run/labctl-node-access.XXXXXX)
tar -x -C "$new"
if ours && listening && cmp -s "$new/%[2]s" "$d/%[2]s" && cmp -s "$new/%[3]s" "$d/%[3]s" && cmp -s "$new/session" "$d/session"; then
  rm -rf "$new"; echo kept; exit 0
fi
if ours; then kill "$(cat "$d/pid")"; fi
rm -rf "$d"; mv "$new" "$d"
setsid socat OPENSSL-LISTEN:%[1]d,bind="$1",reuseaddr,fork,cert="$d/%[3]s",key="$d/%[4]s",cafile="$d/%[2]s",verify=1 EXEC:"perl $d/session" </dev/null >/dev/null 2>&1 &
echo $! > "$d/pid"
for i in $(seq 50); do
  if listening; then echo started; exit 0; fi
  sleep 0.2
done
echo "socat is not listening on port %[1]d" >&2
exit 1`

// nodeListenerCommand is the node container's command that starts the
// listener on podIP.
func nodeListenerCommand(podIP string) []string {
	script := fmt.Sprintf(nodeListenerScript, provision.NodeAccessPort, provision.NodeAccessCA, provision.NodeAccessCert, provision.NodeAccessKey)
	return []string{"sh", "-c", script, "sh", podIP}
}

// nodeListenerFiles is the tar of the listener's files: the CA, its
// certificate and key, and the session program.
func nodeListenerFiles(certs map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		data []byte
	}{
		{provision.NodeAccessCA, certs[provision.NodeAccessCA]},
		{provision.NodeAccessCert, certs[provision.NodeAccessCert]},
		{provision.NodeAccessKey, certs[provision.NodeAccessKey]},
		{"session", []byte(provision.NodeSession())},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o400, Size: int64(len(f.data)), Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// startNodeListener starts the listener in the learner's node container,
// with the instructor's identity through the class cluster's exec API,
// unless it runs already from the learner's certificates.
func (e *learnerRuntime) startNodeListener(ctx context.Context) error {
	certs, err := ensureNodeAccessCerts(ctx, e.class.cs, e.ns, time.Now())
	if err != nil {
		return err
	}
	pod, err := e.class.cs.CoreV1().Pods(e.ns).Get(ctx, vcpPod, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading pod %s/%s: %w", e.ns, vcpPod, err)
	}
	if pod.Status.PodIP == "" {
		return fmt.Errorf("pod %s/%s has no address yet for the listener of %s's node: run labctl class up again", e.ns, vcpPod, e.learner)
	}
	files, err := nodeListenerFiles(certs)
	if err != nil {
		return fmt.Errorf("packing the listener's files of %s's node: %w", e.learner, err)
	}
	code, out, err := e.run(ctx, podCommand{pod: vcpPod, container: containerNode, cmd: nodeListenerCommand(pod.Status.PodIP),
		stdin: bytes.NewReader(files), wait: fileWait})
	if err == nil && code != 0 {
		err = fmt.Errorf("exit %d: %s", code, out.LastLines(3))
	}
	if err != nil {
		return fmt.Errorf("starting the listener of %s's node, which the sandbox's node command reaches: %w", e.learner, err)
	}
	return nil
}

// writeNodeAccess writes into the learner's sandbox the node command, the
// learner's client certificate and key and the CA (root's only), and
// provision.NodeAccessHosts naming the learner's node at the control-plane
// Service.
func (e *learnerRuntime) writeNodeAccess(ctx context.Context) error {
	sec, err := e.class.cs.CoreV1().Secrets(e.ns).Get(ctx, nodeAccessSecret, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the node-access certificates of %s (class up makes them): %w", e.ns, err)
	}
	dir := provision.NodeAccessTLSDir + "/"
	hosts := fmt.Sprintf("%s %s %d\n", learnerNodeName, nodeAccessHost(e.ns), provision.NodeAccessPort)
	for _, f := range []struct {
		path string
		data []byte
		mode string
	}{
		{provision.NodeCommand, []byte(provision.NodeCommandScript()), "755"},
		{dir + provision.NodeAccessCA, sec.Data[provision.NodeAccessCA], "600"},
		{dir + provision.NodeAccessCert, sec.Data[nodeAccessClientCert], "600"},
		{dir + provision.NodeAccessKey, sec.Data[nodeAccessClientKey], "600"},
		{provision.NodeAccessHosts, []byte(hosts), "600"},
	} {
		if len(f.data) == 0 {
			return fmt.Errorf("the node-access certificates of %s lack %s: class up makes them again", e.ns, f.path)
		}
		script := `umask 077; mkdir -p "$(dirname "$1")" && cat > "$1.new" && chmod "$2" "$1.new" && mv -f "$1.new" "$1"`
		code, out, err := e.run(ctx, podCommand{pod: sandboxPod, container: containerSandbox,
			cmd: []string{"sh", "-c", script, "sh", f.path, f.mode}, stdin: bytes.NewReader(f.data), wait: fileWait})
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d: %s", code, out.LastLines(3))
		}
		if err != nil {
			return fmt.Errorf("writing the sandbox's %s in %s: %w", f.path, e.ns, err)
		}
	}
	return nil
}

// nodeAccessServicePort is the control-plane Service's port of the
// listener.
func nodeAccessServicePort() corev1.ServicePort {
	return corev1.ServicePort{Name: nodeAccessPortName, Port: provision.NodeAccessPort}
}

// hasServicePort says ports has one named name.
func hasServicePort(ports []corev1.ServicePort, name string) bool {
	return slices.ContainsFunc(ports, func(p corev1.ServicePort) bool { return p.Name == name })
}
