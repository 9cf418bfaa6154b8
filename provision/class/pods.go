package class

import (
	"encoding/json"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/sandbox"
)

// controlPlanePod is the virtual control plane: etcd (data on the
// vcp-data claim; TLS only, taking only the API server's client
// certificate, so that nothing else sharing the Pod's loopback writes past
// admission), kube-apiserver (audit log beside it), the controller
// manager, the grader (the checker on a read-only mount placed through the
// prepare init container; the home and the fixtures read-only), the admin
// container (no credentials; the home read-write for seeding, wiping and
// backups) and the probe container (a probe's scripts, with the probe's
// identity: RunAdminScript). The learner can exec into none of them.
func (o classObjects) controlPlanePod() *corev1.Pod {
	no, grace := false, int64(10)
	fixtures := o.fixturesDir()
	apiserver := []string{
		"kube-apiserver",
		"--etcd-servers=" + etcdServer,
		"--etcd-cafile=" + vcpCertDir + "/" + certEtcdCA,
		"--etcd-certfile=" + vcpCertDir + "/" + certEtcdClient,
		"--etcd-keyfile=" + vcpCertDir + "/" + certEtcdClientKey,
		"--secure-port=" + strconv.Itoa(vcpPort),
		"--bind-address=0.0.0.0",
		"--client-ca-file=" + vcpCertDir + "/" + certCA,
		"--tls-cert-file=" + vcpCertDir + "/" + certServer,
		"--tls-private-key-file=" + vcpCertDir + "/" + certServerKey,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + vcpCertDir + "/" + certSA,
		"--service-account-signing-key-file=" + vcpCertDir + "/" + certSAKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--authorization-mode=RBAC",
		"--authentication-config=" + vcpLabSrc + "/" + authnConfigKey,
		"--profiling=false",
		"--audit-policy-file=" + vcpAuditDir + "/" + provision.AuditPolicyFile,
		"--audit-log-path=" + vcpAuditDir + "/" + provision.AuditLogFile,
		"--audit-log-format=json",
		"--audit-log-maxsize=" + strconv.Itoa(provision.AuditMaxSizeMB),
		"--audit-log-maxbackup=" + strconv.Itoa(provision.AuditMaxBackups),
	}
	manager := []string{
		"kube-controller-manager",
		"--kubeconfig=" + vcpCertDir + "/" + certManagerConf,
		"--service-account-private-key-file=" + vcpCertDir + "/" + certSAKey,
		"--root-ca-file=" + vcpCertDir + "/" + certCA,
		"--use-service-account-credentials=true",
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
	}
	etcd := []string{
		"etcd",
		"--name=vcp",
		"--data-dir=" + vcpDataDir + "/etcd",
		"--listen-client-urls=" + etcdServer,
		"--advertise-client-urls=" + etcdServer,
		"--cert-file=" + etcdCertDir + "/" + certEtcdServer,
		"--key-file=" + etcdCertDir + "/" + certEtcdServerKey,
		"--client-cert-auth=true",
		"--trusted-ca-file=" + etcdCertDir + "/" + certEtcdCA,
		"--listen-peer-urls=https://127.0.0.1:2380",
		"--initial-advertise-peer-urls=https://127.0.0.1:2380",
		"--initial-cluster=vcp=https://127.0.0.1:2380",
		"--peer-cert-file=" + etcdCertDir + "/" + certEtcdServer,
		"--peer-key-file=" + etcdCertDir + "/" + certEtcdServerKey,
		"--peer-client-cert-auth=true",
		"--peer-trusted-ca-file=" + etcdCertDir + "/" + certEtcdCA,
		"--quota-backend-bytes=536870912",
		"--auto-compaction-retention=1h",
		"--snapshot-count=10000",
	}
	prepare := `set -e
tar -x -f ` + vcpLabSrc + `/fixtures.tar -C /fixtures-out
cp ` + vcpLabSrc + `/audit-policy.yaml ` + vcpAuditDir + `/` + provision.AuditPolicyFile + `.new
mv ` + vcpAuditDir + `/` + provision.AuditPolicyFile + `.new ` + vcpAuditDir + `/` + provision.AuditPolicyFile + waitForChecker(sandbox.CheckerMount)
	pod := &corev1.Pod{
		ObjectMeta: o.meta(vcpPod, "vcp"),
		Spec: corev1.PodSpec{
			NodeSelector:                  o.nodeSelector(),
			Tolerations:                   o.placement.Tolerations,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			SecurityContext:               runtimeDefault(),
			InitContainers: []corev1.Container{{
				Name: containerPrepare, Image: o.image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"sh", "-c", prepare},
				Resources:       prepareResources(),
				SecurityContext: hardened(true, "DAC_OVERRIDE", "FOWNER", "CHOWN"),
				VolumeMounts: []corev1.VolumeMount{
					mount("lab", vcpLabSrc, true), mount("fixtures", "/fixtures-out", false),
					mount("checker", sandbox.CheckerMount, false),
					{Name: "data", MountPath: vcpAuditDir, SubPath: "audit"},
				},
			}},
			Containers: []corev1.Container{
				{
					Name: "etcd", Image: o.cp.Etcd, ImagePullPolicy: corev1.PullIfNotPresent, Command: etcd,
					Resources: resources("etcd"),
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: vcpDataDir + "/etcd", SubPath: "etcd"},
						mount("etcd-certs", etcdCertDir, true)},
				},
				{
					Name: "kube-apiserver", Image: o.cp.APIServer, ImagePullPolicy: corev1.PullIfNotPresent, Command: apiserver,
					Resources: resources("kube-apiserver"),
					Ports:     []corev1.ContainerPort{{Name: "https", ContainerPort: vcpPort}},
					VolumeMounts: []corev1.VolumeMount{
						mount("apiserver-certs", vcpCertDir, true),
						{Name: "data", MountPath: vcpAuditDir, SubPath: "audit"},
						mount("lab", vcpLabSrc, true),
					},
					// Only the learner's own Pods reach the port (the
					// isolate policy): a slow answer under their own load
					// is not a failure.
					ReadinessProbe: &corev1.Probe{
						ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intPort(vcpPort), Scheme: corev1.URISchemeHTTPS}},
						PeriodSeconds: 2, TimeoutSeconds: 5, FailureThreshold: 5,
					},
				},
				{
					Name: "kube-controller-manager", Image: o.cp.ControllerManager, ImagePullPolicy: corev1.PullIfNotPresent, Command: manager,
					Resources:    resources("kube-controller-manager"),
					VolumeMounts: []corev1.VolumeMount{mount("manager-certs", vcpCertDir, true)},
				},
				policyContainer(corev1.Container{
					Name: containerGrader, Image: o.image, ImagePullPolicy: corev1.PullIfNotPresent,
					Command:   idle,
					Resources: resources(containerGrader),
					VolumeMounts: []corev1.VolumeMount{
						mount("checker", sandbox.CheckerMount, true), mount("home", "/root", true),
						mount("fixtures", fixtures, true),
						{Name: "data", MountPath: vcpAuditDir, SubPath: "audit", ReadOnly: true},
					},
				}, sandbox.GraderPolicy()),
				{
					Name: containerAdmin, Image: o.image, ImagePullPolicy: corev1.PullIfNotPresent,
					Command:      idle,
					Env:          []corev1.EnvVar{{Name: "HOME", Value: "/root"}, {Name: "LANG", Value: "C.UTF-8"}},
					Resources:    resources(containerAdmin),
					VolumeMounts: []corev1.VolumeMount{mount("home", homeMount, false)},
				},
				{
					Name: containerProbe, Image: o.image, ImagePullPolicy: corev1.PullIfNotPresent,
					Command:         probeIdle,
					Env:             []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}, {Name: "LANG", Value: "C.UTF-8"}},
					WorkingDir:      provision.ProbeDir,
					Resources:       resources(containerProbe),
					SecurityContext: hardened(true),
					VolumeMounts:    []corev1.VolumeMount{mount("probe", provision.ProbeDir, false), mount("probe-tmp", "/tmp", false)},
				},
			},
			Volumes: []corev1.Volume{
				certVolume("apiserver-certs", apiserverCerts...),
				certVolume("etcd-certs", certEtcdCA, certEtcdServer, certEtcdServerKey),
				certVolume("manager-certs", certCA, certManagerConf, certSAKey),
				{Name: "lab", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: labConfigMap}}}},
				claimVolume("data", dataClaim, false),
				claimVolume("home", homeClaim, false),
				emptyDir("fixtures", fixturesDirSize), emptyDir("checker", checkerDirSize),
				emptyDir("probe", probeDirSize), emptyDir("probe-tmp", probeDirSize),
			},
		},
	}
	// The API server reads its audit policy and authentication
	// configuration when it starts: a Pod started from others is outdated.
	config := provision.AuditPolicy(o.lab, true)
	config = append(config, authnConfig...)
	if o.node() {
		o.addNode(pod)
		data, _ := json.Marshal(nodeConfig())
		config = append(config, data...)
	}
	pod.Annotations = map[string]string{annotationConfig: shortSum(config)}
	return pod
}

// addNode gives a control-plane Pod the learner's node (nodes.go).
func (o classObjects) addNode(pod *corev1.Pod) {
	spec := &pod.Spec
	for i, c := range spec.Containers {
		if c.Name != "kube-apiserver" {
			continue
		}
		var args []string
		for _, a := range c.Command {
			switch {
			case strings.HasPrefix(a, "--authorization-mode="):
			case strings.HasPrefix(a, "--service-cluster-ip-range="):
				args = append(args, "--service-cluster-ip-range="+nodeServiceCIDR)
			default:
				args = append(args, a)
			}
		}
		spec.Containers[i].Command = append(args, nodeAPIServerArgs()...)
	}
	for i, v := range spec.Volumes {
		if v.Name == "apiserver-certs" {
			spec.Volumes[i] = certVolume("apiserver-certs", append(apiserverCerts, certKubeletClient, certKubeletClientK)...)
		}
	}
	init, cs := o.nodeContainers()
	spec.InitContainers = append(spec.InitContainers, init)
	spec.Containers = append(spec.Containers, cs...)
	spec.Volumes = append(spec.Volumes, nodeVolumes()...)
}

// pods are the learner's Pods, in the order class up makes them.
func (o classObjects) pods() []*corev1.Pod {
	return []*corev1.Pod{o.controlPlanePod(), o.sandboxPod(), o.homeboundPod()}
}

// sandboxPod is the learner's Pod: the home claim at /root, the fixtures
// read-only, no service-account token, the sandbox's seven capabilities and
// no privilege escalation, memory and CPU limits, on the node of the
// control plane (which mounts the home too).
func (o classObjects) sandboxPod() *corev1.Pod {
	no, grace := false, int64(2)
	fixtures := o.fixturesDir()
	return &corev1.Pod{
		ObjectMeta: o.meta(sandboxPod, "sandbox"),
		Spec: corev1.PodSpec{
			NodeSelector:                  o.nodeSelector(),
			Tolerations:                   o.placement.Tolerations,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			SecurityContext:               runtimeDefault(),
			Hostname:                      o.lab.Metadata.Name,
			Affinity:                      o.besideControlPlane(),
			InitContainers: []corev1.Container{{
				Name: containerPrepare, Image: o.image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"sh", "-c", "set -e\ntar -x -f " + vcpLabSrc + "/fixtures.tar -C /fixtures-out" + waitForChecker(practiceDir)},
				Resources:       prepareResources(),
				SecurityContext: hardened(true, "DAC_OVERRIDE", "FOWNER", "CHOWN"),
				VolumeMounts: []corev1.VolumeMount{mount("lab", vcpLabSrc, true), mount("fixtures", "/fixtures-out", false),
					mount("checker", practiceDir, false)},
			}},
			Containers: []corev1.Container{{
				Name: containerSandbox, Image: o.image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         idle,
				Env:             []corev1.EnvVar{{Name: "LANG", Value: "C.UTF-8"}, {Name: "HOME", Value: "/root"}},
				WorkingDir:      o.workDir(),
				Resources:       resources(containerSandbox),
				SecurityContext: hardened(false, sandbox.Capabilities()...),
				VolumeMounts: []corev1.VolumeMount{mount("home", "/root", false), mount("fixtures", fixtures, true),
					mount("checker", practiceDir, true)},
			}},
			Volumes: []corev1.Volume{
				emptyDir("checker", checkerDirSize),
				{Name: "lab", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: labConfigMap}, Items: []corev1.KeyToPath{{Key: "fixtures.tar", Path: "fixtures.tar"}}}}},
				claimVolume("home", homeClaim, false),
				emptyDir("fixtures", fixturesDirSize),
			},
		},
	}
}

// homeboundPod bounds the learner's /root where the class cluster's
// storage does not (a claim of a local-path or host-path StorageClass is a
// directory on a node, of no size): its warden measures /root, read-only,
// every few seconds and evicts the sandbox Pod past its bound, as the
// kubelet evicts a Pod past an emptyDir's sizeLimit (internal/homebound).
// It is a Pod of its own: it holds the only identity on the class cluster
// in the learner's namespace (it may read and evict the sandbox Pod and
// record an Event, homeboundObjects) and the only way out to the class
// cluster's API server (homeboundPolicy), and nothing of the learner's
// shares its network.
func (o classObjects) homeboundPod() *corev1.Pod {
	no, grace, expiry := false, int64(2), int64(3600)
	claim := kres.MustParse(claimSize)
	return &corev1.Pod{
		ObjectMeta: o.meta(homeboundPod, "homebound"),
		Spec: corev1.PodSpec{
			NodeSelector:                  o.nodeSelector(),
			Tolerations:                   o.placement.Tolerations,
			ServiceAccountName:            homeboundPod,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			TerminationGracePeriodSeconds: &grace,
			SecurityContext:               runtimeDefault(),
			Affinity:                      o.besideControlPlane(),
			InitContainers: []corev1.Container{{
				Name: containerPrepare, Image: o.image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"sh", "-c", "set -e" + waitForChecker(sandbox.CheckerMount)},
				Resources:       prepareResources(),
				SecurityContext: hardened(true, "DAC_OVERRIDE", "FOWNER", "CHOWN"),
				VolumeMounts:    []corev1.VolumeMount{mount("checker", sandbox.CheckerMount, false)},
			}},
			Containers: []corev1.Container{{
				Name: containerWarden, Image: o.image, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{checkerBin, "__homebound", "--dir=/root",
					"--bytes=" + strconv.FormatInt(claim.Value(), 10), "--entries=" + strconv.Itoa(homeEntries),
					"--depth=" + strconv.Itoa(homeDepth),
					"--every=" + homeLook.String(), "--poll=" + homePoll.String(), "--namespace=" + o.namespace, "--pod=" + sandboxPod},
				Env:       []corev1.EnvVar{{Name: "GOMEMLIMIT", Value: "96MiB"}, {Name: "HOME", Value: "/"}},
				Resources: resources(containerWarden),
				// DAC_OVERRIDE: a directory the learner made unreadable is
				// measured all the same.
				SecurityContext: hardened(true, "DAC_OVERRIDE"),
				VolumeMounts: []corev1.VolumeMount{
					mount("checker", sandbox.CheckerMount, true), mount("home", "/root", true),
					mount("token", "/var/run/secrets/kubernetes.io/serviceaccount", true),
				},
			}},
			Volumes: []corev1.Volume{
				emptyDir("checker", checkerDirSize),
				claimVolume("home", homeClaim, true),
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &expiry}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}},
			},
		},
	}
}

// besideControlPlane keeps a Pod on the node of the learner's control
// plane, which mounts the home too.
func (o classObjects) besideControlPlane() *corev1.Affinity {
	return &corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: o.labels("vcp")},
			TopologyKey:   corev1.LabelHostname,
		}},
	}}
}

// homeboundObjects are the warden's identity: a service account whose role
// may read and evict the sandbox Pod, by name, and record Events.
func (o classObjects) homeboundObjects() (*corev1.ServiceAccount, *rbacv1.Role, *rbacv1.RoleBinding) {
	no := false
	sa := &corev1.ServiceAccount{ObjectMeta: o.meta(homeboundPod, ""), AutomountServiceAccountToken: &no}
	role := &rbacv1.Role{ObjectMeta: o.meta(homeboundPod, ""), Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, ResourceNames: []string{sandboxPod}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, ResourceNames: []string{sandboxPod}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}},
	}}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: o.meta(homeboundPod, ""),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: homeboundPod},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: homeboundPod, Namespace: o.namespace}},
	}
	return sa, role, rb
}

// homeboundPolicy lets the warden, and no other Pod of the learner's,
// reach the class cluster's API server at the addresses it serves on
// (its endpoints: a Service's address is translated to them before a
// network plugin applies a policy).
func (o classObjects) homeboundPolicy(apiServer []networkingv1.NetworkPolicyPeer, ports []networkingv1.NetworkPolicyPort) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: o.meta(homeboundPod, ""),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: o.labels("homebound")},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{To: apiServer, Ports: ports}},
		},
	}
}
