package class

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/sandbox"
)

func testObjects() classObjects {
	l := &lab.Lab{Metadata: lab.Metadata{Name: "gitops-drift"}}
	l.Cluster.Namespaces = []string{"gitops-lab"}
	l.Default()
	return classObjects{lab: l, namespace: "labctl-ada", learner: "ada", prefix: "labctl-", image: "labctl/sandbox:x", cp: images.ControlPlaneImages()}
}

func container(p *corev1.Pod, name string) *corev1.Container {
	for i := range p.Spec.Containers {
		if p.Spec.Containers[i].Name == name {
			return &p.Spec.Containers[i]
		}
	}
	return nil
}

func mountAt(c *corev1.Container, path string) *corev1.VolumeMount {
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == path {
			return &c.VolumeMounts[i]
		}
	}
	return nil
}

// The sandbox Pod is the learner's: hardened like the Docker sandbox, with
// nothing of the grader's or the class cluster's in it.
func TestClassSandboxPod(t *testing.T) {
	p := testObjects().sandboxPod()
	if p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken {
		t.Error("the sandbox Pod mounts a service-account token")
	}
	if p.Spec.EnableServiceLinks == nil || *p.Spec.EnableServiceLinks {
		t.Error("the sandbox Pod gets the class cluster's service variables")
	}
	if p.Spec.HostNetwork || p.Spec.HostPID || p.Spec.HostIPC || p.Spec.ShareProcessNamespace != nil {
		t.Error("the sandbox Pod shares a host or process namespace")
	}
	for _, v := range p.Spec.Volumes {
		if v.HostPath != nil || v.Secret != nil || v.Projected != nil {
			t.Errorf("volume %s: the sandbox mounts a host path or a secret", v.Name)
		}
	}
	c := container(p, containerSandbox)
	sc := c.SecurityContext
	if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Privileged != nil {
		t.Fatal("the sandbox may escalate privileges")
	}
	var caps []string
	for _, cp := range sc.Capabilities.Add {
		caps = append(caps, string(cp))
	}
	if !slices.Equal(caps, sandbox.Capabilities()) || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("capabilities %v, want ALL dropped and %v", caps, sandbox.Capabilities())
	}
	if c.Resources.Limits.Memory().IsZero() || c.Resources.Limits.Cpu().IsZero() {
		t.Error("the sandbox has no memory or CPU limit")
	}
	if m := mountAt(c, "/root"); m == nil || m.ReadOnly {
		t.Error("no writable /root")
	}
	if m := mountAt(c, "/opt/lab/fixtures"); m == nil || !m.ReadOnly {
		t.Error("the fixtures are not read-only")
	}
	if mountAt(c, sandbox.CheckerMount) != nil {
		t.Error("the sandbox has the checker's mount")
	}
}

// The grader reads everything read-only; the checker's mount is its only.
func TestClassControlPlanePod(t *testing.T) {
	p := testObjects().controlPlanePod()
	g := container(p, containerGrader)
	for _, m := range g.VolumeMounts {
		if !m.ReadOnly {
			t.Errorf("the grader mounts %s writable", m.MountPath)
		}
	}
	if g.SecurityContext == nil || !*g.SecurityContext.ReadOnlyRootFilesystem {
		t.Error("the grader's root file system is writable")
	}
	if mountAt(g, sandbox.CheckerMount) == nil || mountAt(g, vcpAuditDir) == nil || mountAt(g, "/root") == nil {
		t.Error("the grader lacks the checker, the audit log or the home")
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", containerGrader, containerAdmin} {
		c := container(p, name)
		if c == nil {
			t.Fatalf("no container %s", name)
		}
		if c.Resources.Limits.Memory().IsZero() || c.Resources.Limits.Cpu().IsZero() {
			t.Errorf("%s has no limits", name)
		}
	}
	etcd := strings.Join(container(p, "etcd").Command, " ")
	if strings.Contains(etcd, "0.0.0.0") || !strings.Contains(etcd, "--listen-client-urls=https://127.0.0.1:2379") {
		t.Errorf("etcd listens beyond its Pod's loopback: %s", etcd)
	}
	if p.Spec.AutomountServiceAccountToken == nil || *p.Spec.AutomountServiceAccountToken {
		t.Error("the control plane Pod mounts a token of the class cluster")
	}
	// The API server reads its audit policy when it starts: a Pod
	// started with another (another lab's namespaces, an earlier
	// labctl's) runs from other settings.
	other := testObjects()
	other.lab.Cluster.Namespaces = []string{"gitops-lab", "more"}
	a, _ := settingsSum(p)
	b, _ := settingsSum(other.controlPlanePod())
	if p.Annotations[annotationConfig] == "" || a == b {
		t.Errorf("the control plane's settings do not follow its audit policy: %q, %q", a, b)
	}
}

// The class grader is sandbox.GraderPolicy as Kubernetes has it: the
// policy's user, capabilities for Pod Security baseline, read-only root,
// no privilege escalation, environment, working directory and memory.
func TestClassGraderRendersThePolicy(t *testing.T) {
	pol := sandbox.GraderPolicy()
	g := container(testObjects().controlPlanePod(), containerGrader)
	sc := g.SecurityContext
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != pol.UID || sc.RunAsGroup == nil || *sc.RunAsGroup != pol.GID {
		t.Fatalf("security context %+v, want user %d:%d", sc, pol.UID, pol.GID)
	}
	var caps []string
	for _, c := range sc.Capabilities.Add {
		caps = append(caps, string(c))
	}
	if !slices.Equal(caps, pol.BaselineCapabilities) || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("capabilities: add %v drop %v, want %v and ALL", caps, sc.Capabilities.Drop, pol.BaselineCapabilities)
	}
	if sc.ReadOnlyRootFilesystem == nil || *sc.ReadOnlyRootFilesystem != pol.ReadOnlyRoot {
		t.Error("root file system not as the policy says")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation == pol.NoNewPrivileges || sc.Privileged != nil {
		t.Error("privilege escalation not as the policy says")
	}
	var env []string
	for _, e := range g.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	if !slices.Equal(env, pol.Env) || g.WorkingDir != pol.WorkDir {
		t.Errorf("env %v in %s, want %v in %s", env, g.WorkingDir, pol.Env, pol.WorkDir)
	}
	if m := g.Resources.Limits.Memory(); m.Value() != pol.Memory {
		t.Errorf("memory limit %s, want %d", m, pol.Memory)
	}
}

// baselineCapabilities are those Pod Security's baseline level admits.
var baselineCapabilities = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

// A learner's namespace enforces baseline: a container that adds any other
// capability would not be admitted.
func TestClassPodsPassPodSecurityBaseline(t *testing.T) {
	o := testObjects()
	if l := o.namespaceObject().Labels[provision.PodSecurityEnforce]; l != "baseline" {
		t.Fatalf("the namespace enforces %q", l)
	}
	for _, p := range o.pods() {
		for _, c := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
			if c.SecurityContext == nil || c.SecurityContext.Capabilities == nil {
				continue
			}
			for _, cp := range c.SecurityContext.Capabilities.Add {
				if !slices.Contains(baselineCapabilities, string(cp)) {
					t.Errorf("%s/%s adds %s, which baseline does not admit", p.Name, c.Name, cp)
				}
			}
		}
	}
}

// An invite may do nothing but reach the sandbox Pod, by name.
func TestClassInviteRole(t *testing.T) {
	_, role, rb := testObjects().inviteObjects()
	for _, r := range role.Rules {
		if !slices.Equal(r.ResourceNames, []string{sandboxPod}) {
			t.Errorf("rule %v is not limited to the sandbox Pod", r)
		}
		for _, res := range r.Resources {
			if !slices.Contains([]string{"pods", "pods/exec", "pods/portforward"}, res) {
				t.Errorf("the invite reaches %s", res)
			}
		}
		if slices.Contains(r.Verbs, "*") || slices.Contains(r.Verbs, "update") || slices.Contains(r.Verbs, "delete") {
			t.Errorf("rule %v may change things", r)
		}
	}
	if rb.RoleRef.Kind != "Role" || rb.Namespace != "labctl-ada" {
		t.Errorf("binding %+v", rb)
	}
}

// Each control plane has its own CA; the serving certificate names the
// Service the sandbox reaches it by.
func TestClassCertificates(t *testing.T) {
	now := time.Now()
	a, err := makeControlPlaneCerts("labctl-ada", now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := makeControlPlaneCerts("labctl-bob", now)
	if err != nil {
		t.Fatal(err)
	}
	if string(a[certCA]) == string(b[certCA]) || string(a[certSAKey]) == string(b[certSAKey]) {
		t.Fatal("two learners share a CA or a token signing key")
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(a[certCA])
	block, _ := pem.Decode(a[certServer])
	server, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"vcp.labctl-ada.svc", "localhost"} {
		if _, err := server.Verify(x509.VerifyOptions{DNSName: name, Roots: pool}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	other := x509.NewCertPool()
	other.AppendCertsFromPEM(b[certCA])
	if _, err := server.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: other}); err == nil {
		t.Error("another learner's CA accepts this API server")
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(a[certAdminConf])
	if err != nil || cfg.Host != vcpInternalServer || len(cfg.CertData) == 0 {
		t.Fatalf("admin kubeconfig: %+v, %v", cfg, err)
	}
}

func TestLearnerNames(t *testing.T) {
	for _, ok := range []string{"ada", "learner-1", "a1"} {
		if err := ValidLearnerName("", ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Ada", "-a", "a-", "a_b", "a.b", strings.Repeat("a", 60)} {
		if err := ValidLearnerName("labctl-", bad); err == nil {
			t.Errorf("%q is accepted", bad)
		}
	}
	if prefixLabel("labctl-") != "labctl" {
		t.Error(prefixLabel("labctl-"))
	}
	// The prefix left unset is the default, wherever it is read.
	if PrefixOr("") != DefaultPrefix || PrefixOr("x-") != "x-" {
		t.Errorf("PrefixOr: %q, %q", PrefixOr(""), PrefixOr("x-"))
	}
	name := strings.Repeat("a", 56) // 63 characters under labctl-
	if ValidLearnerName("", name) != nil || ValidLearnerName("", name+"a") == nil {
		t.Error("a learner name without a prefix is not checked under the default one")
	}
}

func TestCapacityFits(t *testing.T) {
	mem, milli := learnerRequests()
	c := Capacity{FreeMemory: 10 * mem, FreeMilliCPU: 3 * milli, LearnerMemory: mem, LearnerMilliCPU: milli}
	if c.Fits() != 3 {
		t.Errorf("fits %d, want 3 (CPU bound)", c.Fits())
	}
	if (Capacity{}).Fits() != 0 {
		t.Error("nothing fits in nothing")
	}
}

func TestFixturesTar(t *testing.T) {
	b, err := fixturesTar(fstest.MapFS{"gitops/a.yaml": {Data: []byte("x")}, "run.sh": {Data: []byte("#!"), Mode: 0o755}})
	if err != nil || len(b) == 0 {
		t.Fatal(err)
	}
	if _, err := fixturesTar(fstest.MapFS{"big": {Data: make([]byte, maxFixtures+1)}}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("oversized fixtures: %v", err)
	}
	if b, err := fixturesTar(nil); err != nil || len(b) == 0 {
		t.Errorf("no fixtures: %v", err)
	}
}

// Every learner's namespace takes connections from itself only, and
// opens them to itself and the cluster's DNS only.
func TestClassNetworkPolicy(t *testing.T) {
	np := testObjects().networkPolicy()
	if len(np.Spec.PodSelector.MatchLabels) != 0 || len(np.Spec.PodSelector.MatchExpressions) != 0 {
		t.Error("the policy does not select every Pod of the namespace")
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
		t.Errorf("policy types %v, want ingress and egress", np.Spec.PolicyTypes)
	}
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 {
		t.Fatalf("ingress %+v", np.Spec.Ingress)
	}
	from := np.Spec.Ingress[0].From[0]
	if from.PodSelector == nil || from.NamespaceSelector != nil || from.IPBlock != nil || len(np.Spec.Ingress[0].Ports) != 0 {
		t.Errorf("ingress from %+v: want the namespace's own Pods only", from)
	}
	if len(np.Spec.Egress) != 2 {
		t.Fatalf("egress %+v", np.Spec.Egress)
	}
	own, dns := np.Spec.Egress[0], np.Spec.Egress[1]
	if len(own.To) != 1 || own.To[0].NamespaceSelector != nil || own.To[0].IPBlock != nil || len(own.Ports) != 0 {
		t.Errorf("egress %+v: want the namespace's own Pods", own)
	}
	if len(dns.To) != 1 || dns.To[0].IPBlock != nil || dns.To[0].NamespaceSelector == nil ||
		dns.To[0].NamespaceSelector.MatchLabels[corev1.LabelMetadataName] != "kube-system" ||
		dns.To[0].PodSelector == nil || dns.To[0].PodSelector.MatchLabels["k8s-app"] != "kube-dns" || len(dns.Ports) != 2 {
		t.Errorf("egress %+v: want kube-system's DNS Pods on port 53 only", dns)
	}
	for _, p := range dns.Ports {
		if p.Port == nil || p.Port.IntValue() != 53 || p.EndPort != nil {
			t.Errorf("DNS port %+v", p)
		}
	}
	if np.Namespace != "labctl-ada" {
		t.Errorf("namespace %s", np.Namespace)
	}
}

// The learner's box: every container has memory, CPU and disk limits
// within the LimitRange, and the quota admits the three Pods and a
// second sandbox, but no more.
func TestClassBox(t *testing.T) {
	for _, node := range []string{"", "labctl/node:x"} {
		o := testObjects()
		o.nodeImage = node
		t.Run("node="+strconv.FormatBool(o.node()), func(t *testing.T) { testClassBox(t, o) })
	}
}

func testClassBox(t *testing.T, o classObjects) {
	lr, q := o.limitRange(), o.quota()
	max := lr.Spec.Limits[0].Max
	total := corev1.ResourceList{}
	add := func(name corev1.ResourceName, v kres.Quantity) {
		cur := total[name]
		cur.Add(v)
		total[name] = cur
	}
	pods := append(o.pods(), o.sandboxPod())
	for _, p := range pods {
		for _, c := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
			for _, r := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceCPU, corev1.ResourceEphemeralStorage} {
				lim, ok := c.Resources.Limits[r]
				if _, req := c.Resources.Requests[r]; !ok || !req {
					t.Errorf("pod %s container %s has no %s request and limit", p.Name, c.Name, r)
				}
				if lim.Cmp(max[r]) > 0 {
					t.Errorf("pod %s container %s: %s limit %s over the LimitRange's %v", p.Name, c.Name, r, lim.String(), max[r])
				}
			}
		}
		// Init containers run before the others: a Pod counts the larger.
		for _, c := range p.Spec.Containers {
			add(corev1.ResourceRequestsMemory, c.Resources.Requests[corev1.ResourceMemory])
			add(corev1.ResourceRequestsCPU, c.Resources.Requests[corev1.ResourceCPU])
			add(corev1.ResourceLimitsMemory, c.Resources.Limits[corev1.ResourceMemory])
			add(corev1.ResourceLimitsCPU, c.Resources.Limits[corev1.ResourceCPU])
			add(corev1.ResourceRequestsEphemeralStorage, c.Resources.Requests[corev1.ResourceEphemeralStorage])
			add(corev1.ResourceLimitsEphemeralStorage, c.Resources.Limits[corev1.ResourceEphemeralStorage])
		}
		// The kubelet evicts a Pod whose emptyDirs and layers hold more
		// than its containers' ephemeral-storage limits together: they
		// must leave room for its emptyDirs filled to their size.
		var disk, dirs kres.Quantity
		for _, c := range p.Spec.Containers {
			disk.Add(c.Resources.Limits[corev1.ResourceEphemeralStorage])
		}
		for _, v := range p.Spec.Volumes {
			if v.EmptyDir != nil && v.EmptyDir.SizeLimit == nil {
				t.Errorf("pod %s: emptyDir %s has no size limit", p.Name, v.Name)
			} else if v.EmptyDir != nil {
				dirs.Add(*v.EmptyDir.SizeLimit)
			}
		}
		if disk.Cmp(dirs) < 0 {
			t.Errorf("pod %s: its containers may write %s on the node, less than its emptyDirs hold (%s)", p.Name, disk.String(), dirs.String())
		}
	}
	for name, used := range total {
		if hard := q.Spec.Hard[name]; used.Cmp(hard) > 0 {
			t.Errorf("quota %s: the three Pods and a second sandbox take %s, the quota allows %s", name, used.String(), hard.String())
		}
	}
	if pods := q.Spec.Hard[corev1.ResourcePods]; pods.Value() != 4 {
		t.Errorf("quota pods %s, want 4", pods.String())
	}
	claims := q.Spec.Hard[corev1.ResourceRequestsStorage]
	size := kres.MustParse(claimSize)
	size.Add(kres.MustParse(claimSize))
	if claims.Cmp(size) != 0 || lr.Spec.Limits[1].Max[corev1.ResourceStorage] != kres.MustParse(claimSize) {
		t.Errorf("storage quota %s and claim max %v, want the two claims' %s", claims.String(), lr.Spec.Limits[1].Max, size.String())
	}
}

// Every Pod runs the checker: they go to nodes of its architecture only.
func TestClassPodsStayOnTheCheckersArch(t *testing.T) {
	o := testObjects()
	o.arch = "arm64"
	for _, p := range o.pods() {
		if got := p.Spec.NodeSelector[corev1.LabelArchStable]; got != "arm64" || len(p.Spec.NodeSelector) != 1 {
			t.Errorf("pod %s: node selector %v, want %s=arm64", p.Name, p.Spec.NodeSelector, corev1.LabelArchStable)
		}
	}
	o.arch = ""
	if p := o.sandboxPod(); p.Spec.NodeSelector != nil {
		t.Errorf("no architecture known, yet a node selector: %v", p.Spec.NodeSelector)
	}
}

// A learner node lives in the control-plane Pod, next to the API server,
// which authorizes it as a node, reaches it by address and makes Pod
// Security baseline every namespace's default. Only the node and
// kube-proxy are privileged.
func TestClassLearnerNode(t *testing.T) {
	o := testObjects()
	if c := container(o.controlPlanePod(), containerNode); c != nil || o.labConfigMap(nil).Data[nodeAdmissionKey] != "" {
		t.Fatal("a control plane without a node image has a node")
	}
	o.nodeImage = "labctl/node:x"
	if l := o.namespaceObject().Labels[provision.PodSecurityEnforce]; l != "privileged" {
		t.Errorf("the namespace of a learner with a node enforces %q, want privileged", l)
	}
	p := o.controlPlanePod()
	for _, name := range []string{containerNode, containerScheduler, containerProxy} {
		if container(p, name) == nil {
			t.Fatalf("no container %s", name)
		}
	}
	if len(p.Spec.InitContainers) != 2 || p.Spec.InitContainers[1].Name != containerNodeVar {
		t.Errorf("init containers %v, want prepare then %s", p.Spec.InitContainers, containerNodeVar)
	}
	args := strings.Join(container(p, "kube-apiserver").Command, " ")
	for _, want := range []string{"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--service-cluster-ip-range=" + nodeServiceCIDR, "--kubelet-preferred-address-types=InternalIP",
		"--admission-control-config-file=", "--kubelet-client-certificate="} {
		if strings.Count(args, want) != 1 {
			t.Errorf("the API server's flags have %q %d times: %s", want, strings.Count(args, want), args)
		}
	}
	if strings.Contains(args, "--authorization-mode=RBAC") || strings.Contains(args, "10.96.0.0/16") {
		t.Errorf("the API server keeps a flag of a control plane without a node: %s", args)
	}
	if !strings.Contains(o.labConfigMap(nil).Data[nodeAdmissionKey], "enforce: baseline") {
		t.Error("the admission configuration does not make baseline the default")
	}
	for _, c := range p.Spec.Containers {
		priv := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
		if priv != (c.Name == containerNode || c.Name == containerProxy) {
			t.Errorf("container %s privileged: %v", c.Name, priv)
		}
	}
	if !strings.Contains(nodeKubelet, "anonymous: {enabled: false}") || !strings.Contains(nodeKubelet, "authorization: {mode: Webhook}") {
		t.Error("the node's kubelet admits anonymous or unauthorized requests")
	}
}

// What a learner with a node requests is what docs/classroom.md says.
func TestNodeLearnerRequests(t *testing.T) {
	mem, milli := learnerRequests()
	nm, nc := nodeLearnerRequests()
	if got := (mem + nm) >> 20; got != 1056 || milli+nc != 118 {
		t.Errorf("a learner with a node requests %d MiB and %dm, docs/classroom.md says 1056 MiB and 118m", got, milli+nc)
	}
}

// A control plane made before learner nodes gets the node's credentials,
// signed by its own CA.
func TestNodeCertsAdded(t *testing.T) {
	data, err := makeControlPlaneCerts("labctl-ada", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, changed, err := withNodeCerts("labctl-ada", data, time.Now()); err != nil || changed {
		t.Fatalf("a new control plane's certificates: changed %v, %v; want them complete", changed, err)
	}
	old := maps.Clone(data)
	for _, k := range []string{certKubeletConf, certSchedulerConf, certProxyConf, certKubeletClient, certKubeletClientK} {
		delete(old, k)
	}
	got, changed, err := withNodeCerts("labctl-ada", old, time.Now())
	if err != nil || !changed {
		t.Fatalf("an old control plane's certificates: changed %v, %v", changed, err)
	}
	cfg, err := clientcmd.Load(got[certKubeletConf])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(cfg.AuthInfos["vcp"].ClientCertificateData)
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(data[certCA])
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the kubelet's certificate is not the control plane's CA's: %v", err)
	}
	if cert.Subject.CommonName != "system:node:"+learnerNodeName || !slices.Equal(cert.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("the kubelet's certificate is %v, want system:node:%s in system:nodes", cert.Subject, learnerNodeName)
	}
	if !bytes.Equal(got[certCA], data[certCA]) || !bytes.Equal(got[certAdminConf], data[certAdminConf]) || !bytes.Equal(got[certServer], data[certServer]) {
		t.Error("adding the node's certificates changed the others")
	}
}

// The API server's certificate is valid for the address and names the
// Pods of a learner node reach it at (in-cluster clients, CoreDNS), signed
// by the control plane's CA; one made before learner nodes is reissued,
// nothing else changed.
func TestServerCertServesTheNodesPods(t *testing.T) {
	data, err := makeControlPlaneCerts("labctl-ada", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(data[certCA])
	verify := func(certPEM []byte) {
		t.Helper()
		b, _ := pem.Decode(certPEM)
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"10.97.0.1", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "127.0.0.1", "vcp.labctl-ada.svc"} {
			if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
				t.Errorf("the API server's certificate does not serve %s: %v", name, err)
			}
		}
	}
	verify(data[certServer])
	// An older labctl's: without 10.97.0.1.
	ca, caKey := parseCA(t, data)
	old := maps.Clone(data)
	if old[certServer], old[certServerKey], err = signedCert(ca, caKey, time.Now(), []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		pkix.Name{CommonName: "kube-apiserver"}, []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}); err != nil {
		t.Fatal(err)
	}
	got, changed, err := withNodeCerts("labctl-ada", old, time.Now())
	if err != nil || !changed {
		t.Fatalf("an old serving certificate: changed %v, %v", changed, err)
	}
	verify(got[certServer])
	if !bytes.Equal(got[certKubeletConf], old[certKubeletConf]) || !bytes.Equal(got[certAdminConf], old[certAdminConf]) {
		t.Error("reissuing the serving certificate changed the others")
	}
}

func parseCA(t *testing.T, data map[string][]byte) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	cb, _ := pem.Decode(data[certCA])
	kb, _ := pem.Decode(data[certCAKey])
	ca, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

// The warden of /root is the only holder of a class-cluster identity in the
// learner's namespace, and the only Pod let out to the class cluster's API
// server: its token is mounted in its container alone, its role reads and
// evicts the sandbox Pod by name and records Events, nothing else, and it
// reads /root without writing it.
func TestHomeboundHoldsTheOnlyIdentity(t *testing.T) {
	o := testObjects()
	for _, p := range o.pods() {
		for _, c := range append(slices.Clone(p.Spec.InitContainers), p.Spec.Containers...) {
			for _, m := range c.VolumeMounts {
				if m.Name == "token" && (p.Name != homeboundPod || c.Name != containerWarden || !m.ReadOnly) {
					t.Errorf("%s/%s mounts the warden's token", p.Name, c.Name)
				}
				if p.Name == homeboundPod && m.Name == "home" && !m.ReadOnly {
					t.Errorf("%s/%s mounts /root read-write", p.Name, c.Name)
				}
			}
		}
		if p.Name != homeboundPod && p.Spec.ServiceAccountName != "" {
			t.Errorf("pod %s runs as service account %s", p.Name, p.Spec.ServiceAccountName)
		}
		if *p.Spec.AutomountServiceAccountToken {
			t.Errorf("pod %s mounts a token of its own", p.Name)
		}
	}
	hb := o.homeboundPod()
	w := hb.Spec.Containers[0]
	if w.Name != containerWarden || !slices.Contains(w.Command, "--bytes=2147483648") || !slices.Contains(w.Command, "--namespace="+o.namespace) ||
		!slices.Contains(w.Command, "--pod="+sandboxPod) || !slices.Equal(w.SecurityContext.Capabilities.Add, []corev1.Capability{"DAC_OVERRIDE"}) {
		t.Errorf("warden %+v", w)
	}
	if hb.Spec.Affinity == nil || hb.Spec.Affinity.PodAffinity == nil {
		t.Error("the warden is not kept beside the control plane, whose node has the home")
	}
	_, role, rb := o.homeboundObjects()
	want := map[string][]string{"pods": {"get"}, "pods/eviction": {"create"}, "events": {"create"}}
	if len(role.Rules) != len(want) {
		t.Errorf("rules %+v", role.Rules)
	}
	for _, r := range role.Rules {
		if len(r.Resources) != 1 || !slices.Equal(r.Verbs, want[r.Resources[0]]) {
			t.Errorf("rule %+v", r)
		}
		if r.Resources[0] != "events" && !slices.Equal(r.ResourceNames, []string{sandboxPod}) {
			t.Errorf("rule %+v is not limited to the sandbox Pod", r)
		}
	}
	if rb.Subjects[0].Name != homeboundPod || rb.RoleRef.Name != homeboundPod {
		t.Errorf("binding %+v", rb)
	}
	peer := []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "172.18.0.2/32"}}}
	np := o.homeboundPolicy(peer, nil)
	if !maps.Equal(np.Spec.PodSelector.MatchLabels, o.labels("homebound")) || len(np.Spec.Ingress) != 0 ||
		!slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}) {
		t.Errorf("policy %+v", np.Spec)
	}
	for _, p := range o.pods() {
		if p.Name != homeboundPod && labels.SelectorFromSet(np.Spec.PodSelector.MatchLabels).Matches(labels.Set(p.Labels)) {
			t.Errorf("the warden's way out also lets out pod %s", p.Name)
		}
	}
}
