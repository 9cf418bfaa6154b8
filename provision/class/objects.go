package class

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/sandbox"
)

// The objects of one learner's namespace on the class cluster, as data.

// Names inside a learner's namespace.
const (
	vcpPod        = "vcp"
	vcpService    = "vcp"
	sandboxPod    = "sandbox"
	certsSecret   = "vcp-certs"
	labConfigMap  = "lab"
	dataClaim     = "vcp-data"
	homeClaim     = "home"
	inviteAccount = "invite"
	// legacyInviteSecret is the token Secret of invites before they
	// expired; class up deletes it.
	legacyInviteSecret = "invite-token"
	inviteRole         = "invite"
	// homeboundPod, its account, role and policy: the warden of the
	// learner's /root (homeboundPod()).
	homeboundPod   = "homebound"
	isolatePolicy  = "isolate"
	learnerQuota   = "learner"
	vcpPort        = 6443
	labelPart      = "labctl.dev/part"
	annotationDone = "labctl.dev/setup-done"
	annotationSpec = "labctl.dev/spec"
	// annotationConfig is the sum of what a Pod reads once, when it
	// starts, from a ConfigMap that class up keeps current (the learner
	// node's configuration): part of the Pod's settings, as its spec is.
	annotationConfig = "labctl.dev/config"
)

// authnConfig is the learner's API server's authentication configuration:
// anonymous requests only to the health endpoints the kubelet probes.
// Anything else needs a certificate or a token.
const authnConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
anonymous:
  enabled: true
  conditions:
  - path: /livez
  - path: /readyz
  - path: /healthz
`

// authnConfigKey is authnConfig's key in the lab ConfigMap.
const authnConfigKey = "authentication.yaml"

// Containers of the control-plane Pod.
const (
	containerPrepare = "prepare"
	containerGrader  = "grader"
	containerAdmin   = "admin"
	containerSandbox = "sandbox"
	containerWarden  = "warden"
	// containerProbe runs a probe's scripts with the probe's identity
	// (learnerRuntime.RunAdminScript), as kind's probe container does.
	containerProbe = "probe"
)

// Paths inside the control-plane Pod.
const (
	vcpCertDir = "/etc/vcp"
	// etcdCertDir holds etcd's certificate and its CA's (no CA key).
	etcdCertDir = "/etc/etcd"
	// etcdServer is where etcd takes the API server's connections: TLS
	// with a client certificate of etcd's CA, which only the API server
	// holds.
	etcdServer  = "https://127.0.0.1:2379"
	vcpDataDir  = "/var/lib/labctl"
	vcpAuditDir = vcpDataDir + "/audit"
	vcpLabSrc   = "/etc/labctl"
	// homeMount is where the admin container has the learner's home,
	// read-write: labctl seeds, wipes and backs it up from there.
	homeMount = "/home-vol"
	// checkerBin is the checker in the grader.
	checkerBin = sandbox.CheckerMount + "/labctl"
	// practiceDir holds, read-only in the sandbox, the checker that an
	// invited learner's labctl runs there for feedback (the instructor's
	// grader is elsewhere): the same binary, placed the same way.
	practiceDir = "/usr/local/lib/labctl"
)

// waitForChecker is the end of a prepare container's script: it waits until
// labctl has placed the checker in dir.
func waitForChecker(dir string) string {
	return "\nwhile [ ! -e " + dir + "/ready ]; do sleep 0.2; done"
}

// maxFixtures bounds the lab's fixtures as a class carries them (one
// ConfigMap, at most 1 MiB in the API).
const maxFixtures = 900 << 10

// Requests of one learner's containers: what the scheduler counts, and what
// Capacity divides by. Measured idle: about 253 MiB and 42 millicores. The
// containers that must outlive memory pressure ask for about what they use
// (the kernel's OOM order prefers Pods that asked for less): the API server,
// etcd and the grader; the admin container and the sandbox only wait.
var classRequests = map[string][2]string{
	"etcd":                    {"64Mi", "10m"},
	"kube-apiserver":          {"256Mi", "25m"},
	"kube-controller-manager": {"64Mi", "5m"},
	containerGrader:           {"64Mi", "1m"},
	containerAdmin:            {"32Mi", "1m"},
	containerSandbox:          {"64Mi", "10m"},
	containerWarden:           {"32Mi", "5m"},
	containerProbe:            {"16Mi", "1m"},
}

// classLimits are the containers' memory and CPU limits: what one learner
// can take from the class cluster, whatever they do in their sandbox or
// ask of their API server.
var classLimits = map[string][2]string{
	"etcd":                    {"512Mi", "500m"},
	"kube-apiserver":          {"1Gi", "1"},
	"kube-controller-manager": {"512Mi", "500m"},
	containerGrader:           {kres.NewQuantity(sandbox.GraderPolicy().Memory, kres.BinarySI).String(), "1"},
	containerAdmin:            {"256Mi", "500m"},
	containerSandbox:          {"1Gi", "1"},
	containerWarden:           {"128Mi", "250m"},
	containerProbe:            {kres.NewQuantity(sandbox.ProbeMemoryLimit, kres.BinarySI).String(), "500m"},
}

// classDisk is each container's ephemeral storage: what it may write on
// the node outside its volumes (its writable layer, its logs, and its
// Pod's emptyDirs, which count against the sum of its Pod's limits). The
// kubelet evicts a Pod that writes more, not its neighbours. The checker
// (about 60 MiB) is in an emptyDir of each Pod.
var classDisk = map[string][2]string{
	"etcd":                    {"16Mi", "256Mi"},
	"kube-apiserver":          {"16Mi", "256Mi"},
	"kube-controller-manager": {"16Mi", "128Mi"},
	containerGrader:           {"16Mi", "256Mi"},
	containerAdmin:            {"16Mi", "256Mi"},
	containerSandbox:          {"64Mi", "2Gi"},
	containerWarden:           {"16Mi", "256Mi"},
	containerProbe:            {"16Mi", "64Mi"},
	containerPrepare:          {"16Mi", "64Mi"},
}

// Sizes of the emptyDirs (the kubelet evicts a Pod whose emptyDir grows
// past its sizeLimit) and of the claims.
const (
	checkerDirSize = "256Mi"
	// probeDirSize bounds what a probe's scripts keep (ProbeDir) and their
	// /tmp.
	probeDirSize    = "64Mi"
	fixturesDirSize = "64Mi"
	claimSize       = "2Gi"
	// homeEntries bounds the names in /root (homeboundPod): a name costs
	// the node an inode, whatever it holds.
	homeEntries = 500000
	// homeDepth bounds how deep a name in /root may be: a walk holds one
	// open directory per level.
	homeDepth = 4096
	// homeLook is the least time between two looks at /root.
	homeLook = 5 * time.Second
	// homePoll is how often the warden asks, between two looks, how much
	// of the file system that holds /root is used: growth past what /root
	// may still take starts a look at once (homebound.Warden.Poll).
	homePoll = 250 * time.Millisecond
)

// learnerRequests is the sum of classRequests: memory in bytes, CPU in
// millicores.
func learnerRequests() (mem, milli int64) {
	for _, r := range classRequests {
		m := kres.MustParse(r[0])
		c := kres.MustParse(r[1])
		mem += m.Value()
		milli += c.MilliValue()
	}
	return mem, milli
}

func resources(name string) corev1.ResourceRequirements {
	r := classRequests[name]
	d := classDisk[name]
	rr := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: kres.MustParse(r[0]), corev1.ResourceCPU: kres.MustParse(r[1]),
			corev1.ResourceEphemeralStorage: kres.MustParse(d[0])},
		Limits: corev1.ResourceList{corev1.ResourceMemory: kres.MustParse(classLimits[name][0]), corev1.ResourceCPU: kres.MustParse(classLimits[name][1]),
			corev1.ResourceEphemeralStorage: kres.MustParse(d[1])},
	}
	return rr
}

// prepareResources are an init container's: a little of everything, and
// the disk it unpacks into its Pod's emptyDirs.
func prepareResources() corev1.ResourceRequirements {
	d := classDisk[containerPrepare]
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: kres.MustParse("16Mi"), corev1.ResourceCPU: kres.MustParse("10m"),
			corev1.ResourceEphemeralStorage: kres.MustParse(d[0])},
		Limits: corev1.ResourceList{corev1.ResourceMemory: kres.MustParse("256Mi"), corev1.ResourceCPU: kres.MustParse("500m"),
			corev1.ResourceEphemeralStorage: kres.MustParse(d[1])},
	}
}

// quota is the box a learner's namespace holds: at most what labctl makes
// there (three Pods, a fourth while the sandbox is made anew, two claims), so
// whatever made more in it, or asked for more, would be refused by the
// class cluster itself.
func (o classObjects) quota() *corev1.ResourceQuota {
	hard := corev1.ResourceList{
		corev1.ResourcePods:                   kres.MustParse("4"),
		corev1.ResourcePersistentVolumeClaims: kres.MustParse("2"),
		corev1.ResourceRequestsStorage:        kres.MustParse("4Gi"),
		corev1.ResourceServices:               kres.MustParse("1"),
		corev1.ResourceServicesNodePorts:      kres.MustParse("0"),
		corev1.ResourceServicesLoadBalancers:  kres.MustParse("0"),
	}
	// Requests and limits: the three Pods, and a second sandbox.
	sum := func(of map[string][2]string, i int, name corev1.ResourceName) {
		var q kres.Quantity
		for c, v := range of {
			if c == containerPrepare {
				continue
			}
			n := kres.MustParse(v[i])
			q.Add(n)
			if c == containerSandbox {
				q.Add(n)
			}
		}
		hard[name] = q
	}
	sum(classRequests, 0, corev1.ResourceRequestsMemory)
	sum(classRequests, 1, corev1.ResourceRequestsCPU)
	sum(classLimits, 0, corev1.ResourceLimitsMemory)
	sum(classLimits, 1, corev1.ResourceLimitsCPU)
	sum(classDisk, 0, corev1.ResourceRequestsEphemeralStorage)
	sum(classDisk, 1, corev1.ResourceLimitsEphemeralStorage)
	if o.node() {
		for _, c := range []string{containerNode, containerScheduler, containerProxy} {
			r := nodeResources(c)
			for name, q := range map[corev1.ResourceName]kres.Quantity{
				corev1.ResourceRequestsMemory: r.Requests[corev1.ResourceMemory], corev1.ResourceRequestsCPU: r.Requests[corev1.ResourceCPU],
				corev1.ResourceLimitsMemory: r.Limits[corev1.ResourceMemory], corev1.ResourceLimitsCPU: r.Limits[corev1.ResourceCPU],
				corev1.ResourceRequestsEphemeralStorage: r.Requests[corev1.ResourceEphemeralStorage],
				corev1.ResourceLimitsEphemeralStorage:   r.Limits[corev1.ResourceEphemeralStorage],
			} {
				t := hard[name]
				t.Add(q)
				hard[name] = t
			}
		}
	}
	return &corev1.ResourceQuota{ObjectMeta: o.meta(learnerQuota, ""), Spec: corev1.ResourceQuotaSpec{Hard: hard}}
}

// limitRange bounds each container and claim of the namespace: no
// container larger than labctl's largest, none without limits, and no
// claim larger than labctl's.
func (o classObjects) limitRange() *corev1.LimitRange {
	max := corev1.ResourceList{corev1.ResourceMemory: kres.MustParse("1Gi"), corev1.ResourceCPU: kres.MustParse("1"),
		corev1.ResourceEphemeralStorage: kres.MustParse(classDisk[containerSandbox][1])}
	if o.node() {
		max = nodeResources(containerNode).Limits
	}
	return &corev1.LimitRange{ObjectMeta: o.meta(learnerQuota, ""), Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{
			Type: corev1.LimitTypeContainer, Max: max,
			Default:        corev1.ResourceList{corev1.ResourceMemory: kres.MustParse("128Mi"), corev1.ResourceCPU: kres.MustParse("100m"), corev1.ResourceEphemeralStorage: kres.MustParse("64Mi")},
			DefaultRequest: corev1.ResourceList{corev1.ResourceMemory: kres.MustParse("16Mi"), corev1.ResourceCPU: kres.MustParse("1m"), corev1.ResourceEphemeralStorage: kres.MustParse("16Mi")},
		},
		{Type: corev1.LimitTypePersistentVolumeClaim, Max: corev1.ResourceList{corev1.ResourceStorage: kres.MustParse(claimSize)}},
	}}}
}

// policyContainer is c with p's user, capabilities (those for Pod Security
// baseline, which a learner's namespace enforces), root file system,
// privileges, environment and working directory: the Kubernetes rendering
// of a sandbox.Policy (its memory limit is classLimits'). A Pod has no
// limit of processes per container (the kubelet's per Pod holds there), so
// p.Pids is Docker's only.
func policyContainer(c corev1.Container, p sandbox.Policy) corev1.Container {
	sc := hardened(p.ReadOnlyRoot, p.BaselineCapabilities...)
	uid, gid, escalate := p.UID, p.GID, !p.NoNewPrivileges
	sc.RunAsUser, sc.RunAsGroup, sc.AllowPrivilegeEscalation = &uid, &gid, &escalate
	c.SecurityContext = sc
	c.Env = nil
	for _, kv := range p.Env {
		k, v, _ := strings.Cut(kv, "=")
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: v})
	}
	c.WorkingDir = p.WorkDir
	return c
}

// idle is the command of a container that only waits for execs: it ends at
// once when its Pod is deleted (a plain sleep as PID 1 ignores SIGTERM and
// holds the deletion for the whole grace period).
var idle = []string{"sh", "-c", "trap 'exit 0' TERM; sleep infinity & wait"}

// probeIdle is the probe container's command: idle, but it outlives
// EndProbe's kill -KILL -1, which ends every process of the container
// but its first, the sleep it waits on included; it starts another. Were
// it to end, the container would end with EndProbe's own shell before
// that emptied ProbeDir, and be restarted, in back-off after a few probes.
var probeIdle = []string{"sh", "-c", "trap 'exit 0' TERM; while :; do sleep infinity & wait $!; done"}

// classObjects are the settings the objects are made from.
type classObjects struct {
	lab       *lab.Lab
	namespace string
	learner   string
	prefix    string
	// image is the sandbox image; cp the control-plane images.
	image        string
	cp           images.ControlPlane
	storageClass string
	// arch, when set, keeps the Pods on nodes of the checker's
	// architecture (kubernetes.io/arch).
	arch string
	// nodeImage, when set, gives the learner a node of their own
	// (nodes.go) from this image.
	nodeImage string
	// placement keeps the learner's Pods on the nodes the instructor chose.
	placement Placement
	// nodeAccessOn is the consent to node access the namespace records.
	nodeAccessOn NodeLabel
}

// node says whether the learner has a node of their own.
func (o classObjects) node() bool { return o.nodeImage != "" }

// nodeSelector keeps a Pod on nodes that can run the checker, among those
// the instructor chose.
func (o classObjects) nodeSelector() map[string]string {
	if o.arch == "" && len(o.placement.NodeSelector) == 0 {
		return nil
	}
	m := maps.Clone(o.placement.NodeSelector)
	if m == nil {
		m = map[string]string{}
	}
	if o.arch != "" {
		m[corev1.LabelArchStable] = o.arch
	}
	return m
}

func (o classObjects) labels(part string) map[string]string {
	m := map[string]string{LabelClassLearner: o.learner, LabelClassLab: o.lab.Metadata.Name}
	if part != "" {
		m[labelPart] = part
	}
	return m
}

// namespaceObject is the learner's namespace: Pod Security baseline (the
// sandbox's capabilities are all in it), labelled with the class.
func (o classObjects) namespaceObject() *corev1.Namespace {
	l := o.labels("")
	l[LabelClassPrefix] = prefixLabel(o.prefix)
	l[provision.PodSecurityEnforce] = "baseline"
	l[provision.PodSecurityEnforceVersion] = "latest"
	if o.node() {
		// The node container is privileged; every other Pod spec here is
		// labctl's, and the learner has no identity on the class cluster.
		l[provision.PodSecurityEnforce] = "privileged"
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.namespace, Labels: l}}
	if !o.nodeAccessOn.IsZero() {
		ns.Annotations = map[string]string{annotationNodeAccessOn: o.nodeAccessOn.String()}
	}
	return ns
}

func (o classObjects) meta(name, part string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: o.namespace, Labels: o.labels(part)}
}

func (o classObjects) certsSecret(data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: o.meta(certsSecret, ""), Type: corev1.SecretTypeOpaque, Data: data}
}

func (o classObjects) labConfigMap(fixtures []byte) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		ObjectMeta: o.meta(labConfigMap, ""),
		Data:       map[string]string{"audit-policy.yaml": string(provision.AuditPolicy(o.lab, true)), authnConfigKey: authnConfig},
		BinaryData: map[string][]byte{"fixtures.tar": fixtures},
	}
	if o.node() {
		cm.Data[nodeAdmissionKey] = nodeAdmission
	}
	return cm
}

func (o classObjects) claim(name, size string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: o.meta(name, ""),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: kres.MustParse(size)}},
		},
	}
	if o.storageClass != "" {
		c.Spec.StorageClassName = &o.storageClass
	}
	return c
}

// service reaches the learner's API server whether or not its Pod is
// ready: the Pod is not while any of its other containers (the controller
// manager, the learner's node) restarts, and the route to a Pod that just
// became ready lags a moment behind; the learner's kubectl would be refused
// meanwhile. An API server that is not up refuses all the same.
func (o classObjects) service() *corev1.Service {
	ports := []corev1.ServicePort{{Name: "https", Port: vcpPort}}
	if o.nodeAccess() {
		ports = append(ports, nodeAccessServicePort())
	}
	return &corev1.Service{
		ObjectMeta: o.meta(vcpService, ""),
		Spec: corev1.ServiceSpec{
			Selector:                 o.labels("vcp"),
			Ports:                    ports,
			PublishNotReadyAddresses: true,
		},
	}
}

// fixturesDir and workDir are the lab's, which lab.Default filled in when
// the lab was loaded.
func (o classObjects) fixturesDir() string { return o.lab.Sandbox.Fixtures }

func (o classObjects) workDir() string { return o.lab.Sandbox.WorkDir }

func certVolume(name string, keys ...string) corev1.Volume {
	items := make([]corev1.KeyToPath, len(keys))
	for i, k := range keys {
		items[i] = corev1.KeyToPath{Key: k, Path: k}
	}
	mode := int32(0o400)
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: certsSecret, Items: items, DefaultMode: &mode}}}
}

func emptyDir(name, size string) corev1.Volume {
	limit := kres.MustParse(size)
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &limit}}}
}

func claimVolume(name, claim string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly}}}
}

// runtimeDefault is a Pod's security context: the container runtime's
// default seccomp profile for every container (as Docker gives its own).
func runtimeDefault() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
}

// hardened is the security context of a container that keeps only caps.
func hardened(readOnlyRoot bool, caps ...string) *corev1.SecurityContext {
	no, zero := false, int64(0)
	add := make([]corev1.Capability, len(caps))
	for i, c := range caps {
		add[i] = corev1.Capability(c)
	}
	return &corev1.SecurityContext{
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		RunAsUser:                &zero,
		AllowPrivilegeEscalation: &no,
		ReadOnlyRootFilesystem:   &readOnlyRoot,
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: add},
	}
}

func mount(name, path string, readOnly bool) corev1.VolumeMount {
	return corev1.VolumeMount{Name: name, MountPath: path, ReadOnly: readOnly}
}

// apiserverCerts are what the API server reads of the certificates
// Secret: its own, the service-account keys, and its client certificate
// for etcd, which no other container has.
var apiserverCerts = []string{certCA, certServer, certServerKey, certSA, certSAKey, certEtcdCA, certEtcdClient, certEtcdClientKey}

// podNames are the names of the learner's Pods, and where each has the
// checker.
var podNames = []struct{ name, checker string }{
	{vcpPod, sandbox.CheckerMount}, {sandboxPod, practiceDir}, {homeboundPod, sandbox.CheckerMount},
}

// networkPolicy walls the learner's Pods in: they take connections from
// their own namespace only, and open them only to their own namespace and
// the cluster's DNS. No learner's sandbox reaches another learner's Pods,
// the class cluster's API server, its nodes' kubelets and NodePorts, or a
// cloud's metadata address. The class cluster's network plugin must
// enforce NetworkPolicy for this to hold (Class.NetworkEnforced tells).
func (o classObjects) networkPolicy() *networkingv1.NetworkPolicy {
	own := []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}
	udp, tcp, dns := corev1.ProtocolUDP, corev1.ProtocolTCP, intstr.FromInt32(53)
	return &networkingv1.NetworkPolicy{
		ObjectMeta: o.meta(isolatePolicy, ""),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: own}},
			Egress: []networkingv1.NetworkPolicyEgressRule{
				{To: own},
				{
					To: []networkingv1.NetworkPolicyPeer{{
						NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: metav1.NamespaceSystem}},
						PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
					}},
					Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}, {Protocol: &tcp, Port: &dns}},
				},
			},
		},
	}
}

// inviteObjects are the identity an invite kubeconfig carries: a service
// account whose role may only get, exec into and port-forward to the
// learner's sandbox Pod, by name. Its tokens are short-lived TokenRequests
// (Class.Invite); making the account anew revokes them all.
func (o classObjects) inviteObjects() (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	no := false
	sa := &corev1.ServiceAccount{ObjectMeta: o.meta(inviteAccount, ""), AutomountServiceAccountToken: &no}
	role := &rbacv1.Role{ObjectMeta: o.meta(inviteRole, ""), Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{sandboxPod}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods/exec", "pods/portforward"}, ResourceNames: []string{sandboxPod}, Verbs: []string{"get", "create"}},
	}}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: o.meta(inviteRole, ""),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: inviteRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: inviteAccount, Namespace: o.namespace}},
	}
	return sa, role, rb
}

// fixturesTar packs the lab's fixtures as one tar (nil fsys: an empty one),
// refusing more than maxFixtures.
func fixturesTar(fsys fs.FS) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if fsys != nil {
		err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == "." {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			switch {
			case d.IsDir():
				return tw.WriteHeader(&tar.Header{Name: p + "/", Mode: 0o755, Typeflag: tar.TypeDir, ModTime: info.ModTime()})
			case info.Mode().IsRegular():
				b, err := fs.ReadFile(fsys, p)
				if err != nil {
					return err
				}
				mode := int64(0o644)
				if info.Mode()&0o111 != 0 {
					mode = 0o755
				}
				if err := tw.WriteHeader(&tar.Header{Name: p, Mode: mode, Size: int64(len(b)), ModTime: info.ModTime()}); err != nil {
					return err
				}
				_, err = tw.Write(b)
				return err
			default:
				return fmt.Errorf("fixture %s is not a file or a directory", path.Clean(p))
			}
		})
		if err != nil {
			return nil, fmt.Errorf("packing the lab's fixtures: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if buf.Len() > maxFixtures {
		return nil, fmt.Errorf("the lab's fixtures take %d KiB; a class carries at most %d KiB of them", buf.Len()>>10, maxFixtures>>10)
	}
	return buf.Bytes(), nil
}

func intPort(p int) intstr.IntOrString { return intstr.FromInt32(int32(p)) }

// prefixLabel is a namespace prefix as a label value (which cannot end in
// '-'): "labctl-" is "labctl".
func prefixLabel(prefix string) string { return strings.Trim(prefix, "-_.") }
