package provision

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/lab"
)

// Node access (cluster.nodeAccess): the learner reaches each node as root
// from the sandbox, by its name, without the node's kubelet (a lab may ask
// them to repair one that does not start). Each node runs a Pod of
// labctl's own, named like the node, in NodeAccessNamespace: privileged,
// in the node's PID namespace and network, running the image of the
// cluster's kube-proxy (already in every node: nothing is pulled or
// loaded). It enters the node's namespaces and serves, with the node's
// socat, a TLS listener on the node's address (NodeAccessPort) that asks
// for a client certificate of a CA up makes afresh each time; each
// connection runs the node's perl with nodeSession, which runs a root
// login shell (in a PTY) or the command asked. A container stops with its
// kubelet no more than it starts with it, so the listener survives a
// stopped kubelet. The sandbox's `node NAME` finds the node's address in
// its Pod's status (the learner may only get those Pods, by name) and
// connects with the client certificate, which only the sandbox holds
// besides the cluster's admin. The sandbox never gets the Docker socket
// and no port of the host is opened.
const (
	// NodeAccessNamespace holds the node-access Pods.
	NodeAccessNamespace = "labctl-nodes"
	// NodeCommand is the sandbox's command that opens a root shell (or
	// runs a command) on a node: node NAME [COMMAND...].
	NodeCommand = "/usr/local/sbin/node"
	// NodeAccessPort is the port of each node's listener, on its address
	// in the kind network.
	NodeAccessPort = 10290
	// NodeAccessTLSDir is where the sandbox keeps the learner's client
	// certificate and key and the CA (root's only).
	NodeAccessTLSDir = "/etc/labctl/node-access"
	// nodeAccessContainer is the container of each node-access Pod.
	nodeAccessContainer = "node"
	// nodeAccessRole is the learner's Role in NodeAccessNamespace.
	nodeAccessRole = "labctl-node-access"
	// nodeAccessServerSecret holds the listener's CA, certificate, key
	// and session program, which its Pods mount; nodeAccessClientSecret
	// holds the learner's, which up writes into the sandbox.
	nodeAccessServerSecret = "labctl-node-access-server"
	nodeAccessClientSecret = "labctl-node-access-client"
	// nodeAccessCertAnnotation names the certificate a Pod serves.
	nodeAccessCertAnnotation = "labctl.dev/node-access-cert"
	// nodeAccessWait bounds how long up waits for the Pods to run.
	nodeAccessWait = 2 * time.Minute
)

// nodeSession is the program each connection to a node's listener runs
// (the node's perl, its stdin and stdout the connection). Both ways carry
// frames: a type byte, a 4-byte big-endian length, the data. The client
// sends H (tty flag, TERM, rows, columns, then the command's words, NUL
// separated), then I (stdin) and E (stdin ended); the node sends O
// (stdout), R (stderr) and last X (the exit code). With a tty the command
// runs in a PTY (util-linux script) and its output comes as O.
const nodeSession = `use strict; use warnings;
use POSIX qw(EAGAIN EINTR);
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
$SIG{PIPE} = 'IGNORE';
my ($in, $out) = (\*STDIN, \*STDOUT);
binmode $in; binmode $out;
sub readn { my $n = shift; my $b = ''; while (length($b) < $n) { my $r = sysread($in, $b, $n - length($b), length($b)); return undef if !$r; } return $b; }
sub frame { my ($t, $d) = @_; my $m = $t . pack('N', length $d) . $d;
  while (length $m) { my $w = syswrite($out, $m); if (!defined $w) { next if $! == EINTR; exit 1; } substr($m, 0, $w) = ''; } }
my $h = readn(5); exit 1 unless defined $h;
my ($t, $len) = unpack('a N', $h); exit 1 if $t ne 'H' || $len > 1 << 20;
my $body = $len ? readn($len) : ''; exit 1 unless defined $body;
my ($tty, $term, $rows, $cols, @argv) = split /\0/, $body, -1;
$term = 'xterm' unless defined $term && $term =~ /^[A-Za-z0-9._+-]{1,64}$/;
my @cmd = @argv ? @argv : ('bash', '-l');
my @run = ('env', '-i', 'HOME=/root', "TERM=$term", 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  'bash', '-c', 'cd /root 2>/dev/null; exec "$@"', 'node', @cmd);
if ($tty) {
  my $q = join ' ', map { (my $a = $_) =~ s/'/'\\''/g; "'$a'" } @run;
  my $size = (defined $rows && defined $cols && $rows =~ /^\d{1,4}$/ && $cols =~ /^\d{1,4}$/) ? "stty rows $rows cols $cols 2>/dev/null; " : '';
  @run = ('script', '-qfec', "${size}exec $q", '/dev/null');
}
pipe(my $cin_r, my $cin_w) or exit 1; pipe(my $cout_r, my $cout_w) or exit 1; pipe(my $cerr_r, my $cerr_w) or exit 1;
my $pid = fork; exit 1 unless defined $pid;
if (!$pid) {
  $SIG{PIPE} = 'DEFAULT';
  open(STDIN, '<&', $cin_r); open(STDOUT, '>&', $cout_w); open(STDERR, '>&', $cerr_w);
  close $_ for $cin_r, $cin_w, $cout_r, $cout_w, $cerr_r, $cerr_w;
  $ENV{SHELL} = '/bin/sh';
  exec { $run[0] } @run; print STDERR "node: $run[0]: $!\n"; POSIX::_exit(127);
}
close $_ for $cin_r, $cout_w, $cerr_w;
fcntl($cin_w, F_SETFL, fcntl($cin_w, F_GETFL, 0) | O_NONBLOCK);
my ($pending, $rbuf, $eof, $open) = ('', '', 0, 1);
my %outs = (O => $cout_r, R => $cerr_r);
while (%outs) {
  my ($rin, $win) = ('', '');
  vec($rin, fileno($in), 1) = 1 if $open && $pending eq '';
  vec($rin, fileno($_), 1) = 1 for values %outs;
  vec($win, fileno($cin_w), 1) = 1 if $cin_w && $pending ne '';
  my $n = select(my $r = $rin, my $w = $win, undef, undef);
  if ($n < 0) { next if $! == EINTR; last; }
  if ($open && vec($r, fileno($in), 1)) {
    my $got = sysread($in, $rbuf, 65536, length $rbuf);
    if (!$got) { $open = 0; kill 'HUP', $pid; close $cin_w if $cin_w; $cin_w = undef; $pending = ''; }
    while (length($rbuf) >= 5) {
      my ($ft, $fl) = unpack('a N', $rbuf); last if length($rbuf) < 5 + $fl;
      my $d = substr($rbuf, 5, $fl); substr($rbuf, 0, 5 + $fl) = '';
      if ($ft eq 'I') { $pending .= $d if $cin_w } elsif ($ft eq 'E') { $eof = 1 }
    }
  }
  if ($cin_w && $pending ne '' && vec($w, fileno($cin_w), 1)) {
    my $wr = syswrite($cin_w, $pending);
    if (defined $wr) { substr($pending, 0, $wr) = '' } elsif ($! != EAGAIN && $! != EINTR) { close $cin_w; $cin_w = undef; $pending = '' }
  }
  if ($cin_w && $eof && $pending eq '') { close $cin_w; $cin_w = undef }
  for my $k (keys %outs) {
    my $fh = $outs{$k}; next unless vec($r, fileno($fh), 1);
    my $got = sysread($fh, my $d, 65536);
    if ($got) { frame($k, $d) } elsif (!defined $got && $! == EINTR) { next } else { close $fh; delete $outs{$k} }
  }
}
waitpid($pid, 0);
my $code = ($? & 127) ? 128 + ($? & 127) : $? >> 8;
frame('X', "$code");
`

// nodeCommand is the sandbox's node command: it finds the node's address in
// NodeAccessHosts when that file exists (a runtime that serves its nodes
// itself), else in its node-access Pod (so a name that is no node says
// so), connects to the node's listener with the learner's client
// certificate, and relays stdin, stdout, stderr and the exit code
// (nodeSession's frames); a terminal is put in raw mode and the node gives
// the command a PTY.
var nodeCommand = `#!/usr/bin/python3
# node NAME [COMMAND...]: a root login shell, or COMMAND, on the lab's node NAME.
import os, select, socket, ssl, struct, subprocess, sys, termios, tty

USAGE = "usage: node NAME [COMMAND ...]: a root login shell, or COMMAND, on the lab's node NAME (kubectl get nodes lists them)"
TLS = "` + NodeAccessTLSDir + `"
HOSTS = "` + NodeAccessHosts + `"

def say(msg):
    sys.stderr.write("node: " + msg + "\n")

def lookup(name):
    # A node the runtime serves itself is named in HOSTS: NAME HOST PORT.
    try:
        with open(HOSTS) as f:
            for line in f:
                w = line.split()
                if len(w) == 3 and w[0] == name and w[2].isdigit():
                    return w[1], int(w[2])
    except OSError:
        pass
    return "", ` + fmt.Sprint(NodeAccessPort) + `

def pod_address(name):
    # Else the node's address is its node-access Pod's, which the learner may get by name.
    if os.path.exists(HOSTS) or "/" in name:
        return ""
    try:
        got = subprocess.run(["kubectl", "get", "-n", "` + NodeAccessNamespace + `", "pod/" + name, "-o", "jsonpath={.status.hostIP}"],
                             stdin=subprocess.DEVNULL, capture_output=True, text=True)
    except OSError:
        return ""
    return got.stdout.strip() if got.returncode == 0 else ""

def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        sys.stderr.write(USAGE + "\n")
        return 2
    name, cmd = args[0], args[1:]
    host, port = lookup(name)
    if host:
        addr = host
    else:
        addr = pod_address(name)
    if not addr:
        say(name + " is not a node of this lab: kubectl get nodes lists them")
        return 2
    try:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(TLS + "/ca.crt")
        ctx.load_cert_chain(TLS + "/tls.crt", TLS + "/tls.key")
        raw = socket.create_connection((addr, port), timeout=15)
        s = ctx.wrap_socket(raw, server_hostname=name)
        s.settimeout(None)
    except (OSError, ssl.SSLError) as e:
        say("cannot reach node %s at %s:%d (%s): labctl up, or a class's class up, starts its listener again" % (name, addr, port, e))
        return 255
    term = os.isatty(0) and os.isatty(1)
    rows, cols = 24, 80
    if term:
        try:
            cols, rows = os.get_terminal_size(1)
        except OSError:
            pass
    def send(t, data):
        s.sendall(t + struct.pack(">I", len(data)) + data)
    def write(fd, data):
        while data:
            data = data[os.write(fd, data):]
    head = [b"1" if term else b"0", os.environ.get("TERM", "xterm").encode(), str(rows).encode(), str(cols).encode()]
    saved = None
    try:
        send(b"H", b"\0".join(head + [os.fsencode(a) for a in cmd]))
        if term:
            saved = termios.tcgetattr(0)
            tty.setraw(0)
        buf, stdin_open, code = b"", True, None
        while code is None:
            ready = [s] if s.pending() else select.select([s] + ([0] if stdin_open else []), [], [])[0]
            if s in ready:
                # A TLS record without data (a session ticket) makes the
                # socket readable too: never wait in recv for data.
                s.setblocking(False)
                try:
                    data = s.recv(65536)
                except ssl.SSLWantReadError:
                    continue
                finally:
                    s.setblocking(True)
                if not data:
                    break
                buf += data
                while len(buf) >= 5 and code is None:
                    t, n = struct.unpack(">cI", buf[:5])
                    if len(buf) < 5 + n:
                        break
                    part, buf = buf[5:5 + n], buf[5 + n:]
                    if t == b"O":
                        write(1, part)
                    elif t == b"R":
                        write(2, part)
                    elif t == b"X":
                        code = int(part)
                continue
            try:
                data = os.read(0, 16384)
            except OSError:
                data = b""
            if data:
                send(b"I", data)
            else:
                send(b"E", b"")
                stdin_open = False
    except BrokenPipeError:
        return 141
    except (OSError, ssl.SSLError) as e:
        if saved is not None:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)
            saved = None
        say("the connection to node %s failed (%s)" % (name, e))
        return 255
    finally:
        if saved is not None:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)
    if code is None:
        say("the connection to node %s ended before its command did" % name)
        return 255
    return code

sys.exit(main())
`

// writeNodeCommand puts the node command in the sandbox, and the learner's
// client certificate and key, and the CA, that up made (in
// nodeAccessClientSecret), in NodeAccessTLSDir, root's only.
func (e *Live) writeNodeCommand(ctx context.Context) error {
	admin, err := e.adminConfig(ctx)
	if err != nil {
		return err
	}
	cs, err := clientFor(admin)
	if err != nil {
		return fmt.Errorf("connecting to cluster %s: %w", e.rt.Name(), err)
	}
	sec, err := cs.CoreV1().Secrets(NodeAccessNamespace).Get(ctx, nodeAccessClientSecret, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the learner's node certificate (%s/%s; labctl up makes it): %w", NodeAccessNamespace, nodeAccessClientSecret, err)
	}
	files := []struct {
		path string
		data []byte
		mode string
	}{
		{NodeCommand, []byte(nodeCommand), "755"},
		{NodeAccessTLSDir + "/" + tlsCA, sec.Data[tlsCA], "600"},
		{NodeAccessTLSDir + "/" + tlsCert, sec.Data[tlsCert], "600"},
		{NodeAccessTLSDir + "/" + tlsKey, sec.Data[tlsKey], "600"},
	}
	for _, f := range files {
		if len(f.data) == 0 {
			return fmt.Errorf("the learner's node certificate (%s/%s) has no %s: labctl up makes it again", NodeAccessNamespace, nodeAccessClientSecret, path.Base(f.path))
		}
		var out bytes.Buffer
		script := `umask 077; mkdir -p "$(dirname "$1")" && cat > "$1.new" && chmod "$2" "$1.new" && mv -f "$1.new" "$1"`
		code, err := e.rt.Exec(ctx, e.login([]string{"sh", "-c", script, "sh", f.path, f.mode}, bytes.NewReader(f.data), &out, &out))
		if err != nil {
			return fmt.Errorf("writing the sandbox's %s: %w", f.path, err)
		}
		if code != 0 {
			return fmt.Errorf("writing the sandbox's %s: exit %d: %s", f.path, code, LastLines(out.String(), 3))
		}
	}
	return nil
}

// nodeAccessPod is the node-access Pod of node, running image, serving the
// certificate named cert. Its container copies the listener's files from
// its Secret to the node's /run and enters the node's namespaces to run
// socat there, bound to the node's address.
func nodeAccessPod(node, image, cert string, labels map[string]string) *corev1.Pod {
	yes, no := true, false
	var grace int64
	mode := int32(0o400)
	const dir = "/run/labctl-node-access"
	script := fmt.Sprintf(`set -e
d=/proc/1/root%[1]s
rm -rf "$d"; mkdir -m 700 "$d"
cp /tls/%[2]s /tls/%[3]s /tls/%[4]s /tls/session "$d"/
exec nsenter -t 1 -a -- socat OPENSSL-LISTEN:%[5]d,bind="$NODE_IP",reuseaddr,fork,cert=%[1]s/%[3]s,key=%[1]s/%[4]s,cafile=%[1]s/%[2]s,verify=1 EXEC:"perl %[1]s/session"
`, dir, tlsCA, tlsCert, tlsKey, NodeAccessPort)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: NodeAccessNamespace, Labels: labels,
			Annotations: map[string]string{nodeAccessCertAnnotation: cert}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			HostPID:                       true,
			HostNetwork:                   true,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Volumes: []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: nodeAccessServerSecret, DefaultMode: &mode}}}},
			Containers: []corev1.Container{{
				Name:            nodeAccessContainer,
				Image:           image,
				ImagePullPolicy: corev1.PullNever,
				Command:         []string{"sh", "-c", script},
				Env: []corev1.EnvVar{{Name: "NODE_IP", ValueFrom: &corev1.EnvVarSource{
					FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}}},
				VolumeMounts:    []corev1.VolumeMount{{Name: "tls", MountPath: "/tls", ReadOnly: true}},
				SecurityContext: &corev1.SecurityContext{Privileged: &yes},
			}},
		},
	}
}

// ensureNodeAccessTLS makes the listener's and the learner's certificates
// (NewNodeAccessTLS) when renew is set or none exist yet, and keeps them in
// the two Secrets; it returns the fingerprint of the server certificate.
func ensureNodeAccessTLS(ctx context.Context, cs kubernetes.Interface, nodes []string, renew bool, labels map[string]string) (string, error) {
	secrets := cs.CoreV1().Secrets(NodeAccessNamespace)
	if !renew {
		srv, err := secrets.Get(ctx, nodeAccessServerSecret, metav1.GetOptions{})
		cli, cerr := secrets.Get(ctx, nodeAccessClientSecret, metav1.GetOptions{})
		if err == nil && cerr == nil && len(srv.Data[tlsCert]) > 0 && len(cli.Data[tlsKey]) > 0 && string(srv.Data["session"]) == nodeSession &&
			certNames(srv.Data[tlsCert], nodes) {
			return fingerprint(srv.Data[tlsCert]), nil
		}
	}
	t, err := NewNodeAccessTLS(nodes, time.Now())
	if err != nil {
		return "", err
	}
	for name, data := range map[string]map[string][]byte{
		nodeAccessServerSecret: {tlsCA: t.CA, tlsCert: t.ServerCert, tlsKey: t.ServerKey, "session": []byte(nodeSession)},
		nodeAccessClientSecret: {tlsCA: t.CA, tlsCert: t.ClientCert, tlsKey: t.ClientKey},
	} {
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: NodeAccessNamespace, Labels: labels}, Data: data}
		if err := apply(ctx, secrets, sec, func(cur *corev1.Secret) { cur.Data = data; cur.Labels = labels }); err != nil {
			return "", fmt.Errorf("keeping the node access certificates: %w", err)
		}
	}
	return fingerprint(t.ServerCert), nil
}

// nodeAccessImage is the image of the cluster's kube-proxy, which every
// node has.
func nodeAccessImage(ctx context.Context, cs kubernetes.Interface) (string, error) {
	ds, err := cs.AppsV1().DaemonSets(metav1.NamespaceSystem).Get(ctx, "kube-proxy", metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading kube-proxy's image, which the node-access Pods run (cluster.nodeAccess): %w", err)
	}
	if cs := ds.Spec.Template.Spec.Containers; len(cs) > 0 && cs[0].Image != "" {
		return cs[0].Image, nil
	}
	return "", fmt.Errorf("kube-proxy's DaemonSet names no image, which the node-access Pods run (cluster.nodeAccess)")
}

// grantNodeAccess runs a node-access Pod on each node of the cluster and
// lets the learner get exactly those Pods (to find a node's address). A
// Pod that does not run (its node restarted, or the learner's work stopped
// it) or serves other certificates is made afresh. renew makes new
// certificates (up does; a reset keeps the sandbox's). It waits, bounded,
// until every Pod runs.
func grantNodeAccess(ctx context.Context, cs kubernetes.Interface, l *lab.Lab, labels map[string]string, renew bool) error {
	nsLabels := map[string]string{}
	maps.Copy(nsLabels, labels)
	nsLabels[PodSecurityEnforce] = lab.PodSecurityPrivileged
	if err := ensureNamespace(ctx, cs, NodeAccessNamespace, nsLabels); err != nil {
		return err
	}
	// A new namespace gets its default ServiceAccount from the controller
	// manager only some seconds later, and until then no Pod is admitted.
	if err := ensureDefaultServiceAccounts(ctx, cs, []string{NodeAccessNamespace}); err != nil {
		return err
	}
	image, err := nodeAccessImage(ctx, cs)
	if err != nil {
		return err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the cluster's nodes: %w", err)
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	cert, err := ensureNodeAccessTLS(ctx, cs, names, renew, labels)
	if err != nil {
		return err
	}
	pods := cs.CoreV1().Pods(NodeAccessNamespace)
	for _, n := range nodes.Items {
		want := nodeAccessPod(n.Name, image, cert, labels)
		cur, err := pods.Get(ctx, n.Name, metav1.GetOptions{})
		if err == nil && (cur.Status.Phase == corev1.PodFailed || cur.Status.Phase == corev1.PodSucceeded || cur.DeletionTimestamp != nil ||
			len(cur.Spec.Containers) != 1 || cur.Spec.Containers[0].Image != image || cur.Annotations[nodeAccessCertAnnotation] != cert) {
			if err := deletePodAndWait(ctx, cs, cur.Name); err != nil {
				return err
			}
			err = apierrors.NewNotFound(corev1.Resource("pods"), n.Name)
		}
		if apierrors.IsNotFound(err) {
			_, err = pods.Create(ctx, want, metav1.CreateOptions{FieldManager: fieldManager})
		}
		if err != nil {
			return fmt.Errorf("starting the node-access Pod of node %s: %w", n.Name, err)
		}
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: nodeAccessRole, Namespace: NodeAccessNamespace, Labels: labels},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}, ResourceNames: names},
		},
	}
	if err := apply(ctx, cs.RbacV1().Roles(NodeAccessNamespace), role, func(cur *rbacv1.Role) { cur.Rules = role.Rules; cur.Labels = labels }); err != nil {
		return fmt.Errorf("granting the learner access to the nodes: %w", err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: nodeAccessRole, Namespace: NodeAccessNamespace, Labels: labels},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: LearnerAccount, Namespace: SystemNamespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: nodeAccessRole},
	}
	if err := ensureRoleBinding(ctx, cs, rb); err != nil {
		return fmt.Errorf("granting the learner access to the nodes: %w", err)
	}
	return waitNodeAccess(ctx, cs, names)
}

// deletePodAndWait deletes a node-access Pod and waits until it is gone.
func deletePodAndWait(ctx context.Context, cs kubernetes.Interface, name string) error {
	pods := cs.CoreV1().Pods(NodeAccessNamespace)
	var zero int64
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("replacing the node-access Pod of node %s: %w", name, err)
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, nodeAccessWait, true, func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// waitNodeAccess waits until the node-access Pod of each node runs.
func waitNodeAccess(ctx context.Context, cs kubernetes.Interface, names []string) error {
	var pending string
	err := wait.PollUntilContextTimeout(ctx, time.Second, nodeAccessWait, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			p, err := cs.CoreV1().Pods(NodeAccessNamespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Status.Phase != corev1.PodRunning {
				pending = name + " is " + string(p.Status.Phase)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil && pending != "" {
		return fmt.Errorf("the node-access Pod of node %s after %s (kubectl -n %s describe pod as the cluster's admin says why): %w", pending, nodeAccessWait, NodeAccessNamespace, err)
	}
	return err
}
