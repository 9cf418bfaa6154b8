package class

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kres "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/labctl/labctl/images"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// A learner node: with Config.LearnerNodes, each learner's control-plane
// Pod also runs a node of the learner's own, so that a lab whose Pods must
// run works as a class. The node is labctl's node image (systemd,
// containerd and the kubelet, as `labctl up` runs them in kind) in a
// privileged container of the control-plane Pod, registered with the
// learner's API server; a kube-scheduler and kube-proxy run beside the API
// server. Sharing the Pod's network namespace is what makes the node work
// without anything home-made: the kubelet reaches the API server on
// 127.0.0.1, and the API server reaches the node's Pods (service proxy,
// logs, exec, port-forward) through the node's bridge in the same
// namespace. The learner's Pods leave the node through the Pod's own
// address, so the namespace's network walls hold for them too.
//
// The price is privilege: the node container is privileged on the class
// cluster's node, so whatever breaks out of a Pod on the learner's node is
// root there. Pod Security baseline is the default of every namespace of the
// learner's API server (no privileged, host-namespace or hostPath Pods),
// and a lab whose learner could change namespaces' labels, admission
// policies or reach the kubelet's API is refused (checkNodeSafe).

// learnerNodeName is the node's name in the learner's API server.
const learnerNodeName = "lab-node"

// The learner node's address ranges: its Pods' (the node's bridge, inside
// the control-plane Pod's network namespace) and its Services'. Neither may
// hold an address the control-plane Pod must reach on the class cluster
// (checkNodeRanges).
const (
	nodePodCIDR     = "10.245.0.0/24"
	nodeServiceCIDR = "10.97.0.0/16"
)

// Containers and volumes of a control-plane Pod with a node.
const (
	containerNode      = "node"
	containerNodeVar   = "node-var"
	containerScheduler = "kube-scheduler"
	containerProxy     = "kube-proxy"
	nodeConfigMap      = "node"
	// nodeVarSize bounds the node's /var: its container images (the node
	// image's own, about 600 MiB, and the lab's) and its Pods' layers and
	// logs. nodeRunSize bounds its /run and /tmp (memory).
	nodeVarSize = "6Gi"
	nodeRunSize = "256Mi"
	// nodeCgroupRoot is the kubelet's cgroup root inside the node: not the
	// class node's (/kubelet), whose Pods the learner's kubelet would
	// otherwise take for its own and stop.
	nodeCgroupRoot = "labctl-node"
)

// nodeKubelet is the learner kubelet's configuration. cgroupfs, not
// systemd: the node's systemd sees the class node's cgroup paths on cgroup
// v1 and cannot make slices where the kubelet looks for them. Every Pod of
// the node runs under the container runtime's default seccomp profile
// unless its spec asks for another (seccompDefault), as kind's nodes do:
// a learner's Pod that names none is not Unconfined. Its static Pods are
// the files of the node image's /etc/kubernetes/manifests, which only root
// on the node writes (a node-access class's learner: nodeaccess.go).
const nodeKubelet = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
cgroupRoot: /` + nodeCgroupRoot + `
failCgroupV1: false
failSwapOn: false
address: 0.0.0.0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: /etc/kubernetes/pki/ca.crt}
authorization: {mode: Webhook}
clusterDomain: cluster.local
clusterDNS: [` + nodeDNSAddress + `]
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: "0%", nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%"}
rotateCertificates: false
serializeImagePulls: false
seccompDefault: true
staticPodPath: /etc/kubernetes/manifests
containerRuntimeEndpoint: unix:///run/containerd/containerd.sock
`

// nodeCNI is the node's Pod network: a bridge in the control-plane Pod's
// network namespace, masquerading what leaves it.
const nodeCNI = `{"cniVersion": "0.4.0", "name": "labctl", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "` + nodePodCIDR + `"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
`

// nodeCgroups prepares the kubelet's cgroup root in every cgroup v1
// hierarchy, as kind's entrypoint prepares /kubelet (cpuset needs its
// CPUs and memory nodes; the bind mount keeps systemd from removing it).
// On cgroup v2 the kubelet makes it itself.
const nodeCgroups = `#!/bin/sh
set -e
[ -f /sys/fs/cgroup/cgroup.controllers ] && exit 0
for sub in /sys/fs/cgroup/*; do
  mountpoint -q "$sub" || continue
  d="$sub/` + nodeCgroupRoot + `"
  mountpoint -q "$d" && continue
  mkdir -p "$d"
  if [ -f "$sub/cpuset.cpus" ]; then
    cat "$sub/cpuset.cpus" > "$d/cpuset.cpus"
    cat "$sub/cpuset.mems" > "$d/cpuset.mems"
  fi
  mount --bind "$d" "$d"
done
`

const (
	nodeKubeletDropIn    = "[Service]\nExecStartPre=/etc/labctl-node/cgroups.sh\n"
	nodeContainerdDropIn = "[Service]\nExecStartPre=/bin/sed -i \"s/SystemdCgroup = true/SystemdCgroup = false/\" /etc/containerd/config.toml\n"
)

// nodeAdmission makes Pod Security baseline the default of every namespace
// in the learner's API server, kube-system included: no Pod there may be
// privileged, share the node's namespaces or mount its files.
const nodeAdmission = `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: baseline, enforce-version: latest, warn: baseline, warn-version: latest}
    exemptions: {usernames: [], runtimeClasses: [], namespaces: []}
`

// nodeAdmissionKey is nodeAdmission's key in the lab ConfigMap.
const nodeAdmissionKey = "admission.yaml"

// nodeConfig is the node ConfigMap's data.
func nodeConfig() map[string]string {
	return map[string]string{
		"kubelet.yaml":      nodeKubelet,
		"cni.conflist":      nodeCNI,
		"cgroups.sh":        nodeCgroups,
		"kubelet-dropin":    nodeKubeletDropIn,
		"containerd-dropin": nodeContainerdDropIn,
		"default-kubelet":   "KUBELET_EXTRA_ARGS=--hostname-override=" + learnerNodeName + " --kubeconfig=/etc/kubernetes/kubelet.conf\n",
	}
}

func (o classObjects) nodeConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: o.meta(nodeConfigMap, ""), Data: nodeConfig()}
}

// nodeAPIServerArgs are the API server's flags for a node: the Node
// authorizer and NodeRestriction, the kubelet reached by its address with
// labctl's client certificate, and Pod Security by default.
func nodeAPIServerArgs() []string {
	return []string{
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--admission-control-config-file=" + vcpLabSrc + "/" + nodeAdmissionKey,
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-client-certificate=" + vcpCertDir + "/" + certKubeletClient,
		"--kubelet-client-key=" + vcpCertDir + "/" + certKubeletClientK,
	}
}

// nodeContainers are the node's containers of the control-plane Pod: the
// node, the scheduler and kube-proxy; init copies the node image's /var
// (containerd's images) into the node's volume once.
func (o classObjects) nodeContainers() (init corev1.Container, cs []corev1.Container) {
	yes, no := true, false
	init = corev1.Container{
		Name: containerNodeVar, Image: o.nodeImage, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"sh", "-c", `set -e
if [ ! -e /node-var/.labctl-copied ]; then
  cp -a /var/. /node-var/
  touch /node-var/.labctl-copied
fi
mkdir -p /node-var/lib/kubelet
cp /etc/labctl-node/kubelet.yaml /node-var/lib/kubelet/config.yaml`},
		Resources:       nodeResources(containerNodeVar),
		SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no},
		VolumeMounts:    []corev1.VolumeMount{mount("node-var", "/node-var", false), mount("node-config", "/etc/labctl-node", true)},
	}
	sub := func(name, path, key string) corev1.VolumeMount {
		return corev1.VolumeMount{Name: name, MountPath: path, SubPath: key, ReadOnly: true}
	}
	cs = []corev1.Container{
		{
			Name: containerNode, Image: o.nodeImage, ImagePullPolicy: corev1.PullIfNotPresent,
			Resources:       nodeResources(containerNode),
			SecurityContext: &corev1.SecurityContext{Privileged: &yes},
			VolumeMounts: []corev1.VolumeMount{
				mount("node-var", "/var", false), mount("node-run", "/run", false), mount("node-tmp", "/tmp", false),
				mount("modules", "/lib/modules", true),
				{Name: "node-config", MountPath: "/etc/labctl-node", ReadOnly: true},
				sub("node-config", "/etc/cni/net.d/10-labctl.conflist", "cni.conflist"),
				sub("node-config", "/etc/default/kubelet", "default-kubelet"),
				sub("node-config", "/etc/systemd/system/kubelet.service.d/20-labctl-node.conf", "kubelet-dropin"),
				sub("node-config", "/etc/systemd/system/containerd.service.d/20-labctl-node.conf", "containerd-dropin"),
				sub("node-certs", "/etc/kubernetes/kubelet.conf", certKubeletConf),
				sub("node-certs", "/etc/kubernetes/pki/ca.crt", certCA),
			},
		},
		{
			Name: containerScheduler, Image: o.cp.Scheduler, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"kube-scheduler", "--kubeconfig=" + vcpCertDir + "/" + certSchedulerConf,
				"--authentication-kubeconfig=" + vcpCertDir + "/" + certSchedulerConf,
				"--authorization-kubeconfig=" + vcpCertDir + "/" + certSchedulerConf,
				"--leader-elect=false", "--bind-address=127.0.0.1"},
			Resources:       nodeResources(containerScheduler),
			SecurityContext: hardened(true),
			VolumeMounts:    []corev1.VolumeMount{mount("scheduler-certs", vcpCertDir, true)},
		},
		{
			Name: containerProxy, Image: o.cp.Proxy, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"kube-proxy", "--kubeconfig=" + vcpCertDir + "/" + certProxyConf,
				"--hostname-override=" + learnerNodeName, "--cluster-cidr=" + nodePodCIDR, "--proxy-mode=iptables",
				"--conntrack-max-per-core=0", "--metrics-bind-address=127.0.0.1:10249", "--healthz-bind-address=127.0.0.1:10256"},
			Resources:       nodeResources(containerProxy),
			SecurityContext: &corev1.SecurityContext{Privileged: &yes},
			VolumeMounts:    []corev1.VolumeMount{mount("proxy-certs", vcpCertDir, true), mount("modules", "/lib/modules", true)},
		},
	}
	return init, cs
}

// nodeVolumes are the node's volumes of the control-plane Pod.
func nodeVolumes() []corev1.Volume {
	scripts := int32(0o755)
	mem := func(name string) corev1.Volume {
		q := kres.MustParse(nodeRunSize)
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &q}}}
	}
	return []corev1.Volume{
		emptyDir("node-var", nodeVarSize), mem("node-run"), mem("node-tmp"),
		{Name: "modules", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/lib/modules"}}},
		{Name: "node-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: nodeConfigMap}, DefaultMode: &scripts}}},
		certVolume("node-certs", certKubeletConf, certCA),
		certVolume("scheduler-certs", certSchedulerConf),
		certVolume("proxy-certs", certProxyConf),
	}
}

// Requests and limits of the node's containers: memory and CPU measured
// idle (the node about 150 MiB with no Pod of the lab), limits with room
// for the lab's Pods, which run inside the node container's.
var nodeRequests = map[string][3][2]string{
	// {memory, cpu, ephemeral storage} x {request, limit}
	containerNode:      {{"384Mi", "2Gi"}, {"50m", "2"}, {"64Mi", "256Mi"}},
	containerNodeVar:   {{"16Mi", "512Mi"}, {"10m", "500m"}, {"16Mi", nodeVarSize}},
	containerScheduler: {{"48Mi", "256Mi"}, {"5m", "500m"}, {"16Mi", "128Mi"}},
	containerProxy:     {{"32Mi", "256Mi"}, {"5m", "500m"}, {"16Mi", "128Mi"}},
}

// nodeLearnerRequests is what a node adds to a learner's requests: memory
// in bytes, CPU in millicores.
func nodeLearnerRequests() (mem, milli int64) {
	for _, c := range []string{containerNode, containerScheduler, containerProxy} {
		r := nodeResources(c).Requests
		mem += r.Memory().Value()
		milli += r.Cpu().MilliValue()
	}
	return mem, milli
}

func nodeResources(name string) corev1.ResourceRequirements {
	r := nodeRequests[name]
	req, lim := corev1.ResourceList{}, corev1.ResourceList{}
	for i, res := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceCPU, corev1.ResourceEphemeralStorage} {
		req[res] = kres.MustParse(r[i][0])
		lim[res] = kres.MustParse(r[i][1])
	}
	if name == containerNode {
		// The node's /var counts against its Pod's limits, with its own.
		v := kres.MustParse(nodeVarSize)
		q := lim[corev1.ResourceEphemeralStorage]
		q.Add(v)
		lim[corev1.ResourceEphemeralStorage] = q
	}
	return corev1.ResourceRequirements{Requests: req, Limits: lim}
}

// checkNodeRanges says which address a control-plane Pod must reach on the
// class cluster falls in the learner node's ranges, where the node's
// bridge or kube-proxy would take it: the class cluster's API server and
// DNS Services, and its nodes' Pod ranges.
func checkNodeRanges(ctx context.Context, cs kubernetes.Interface) error {
	pods, svcs := netip.MustParsePrefix(nodePodCIDR), netip.MustParsePrefix(nodeServiceCIDR)
	clash := func(what, addr string) error {
		a, err := netip.ParseAddr(addr)
		if err != nil {
			return nil
		}
		for _, p := range []netip.Prefix{pods, svcs} {
			if p.Contains(a) {
				return fmt.Errorf("the class cluster's %s (%s) is in the learner nodes' range %s: the learners' nodes would hide it; learner nodes need a class cluster whose Services and Pods are outside %s and %s", what, addr, p, nodePodCIDR, nodeServiceCIDR)
			}
		}
		return nil
	}
	for _, s := range []struct{ ns, name, what string }{{"default", "kubernetes", "API server Service"}, {"kube-system", "kube-dns", "DNS Service"}} {
		svc, err := cs.CoreV1().Services(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the class cluster's %s: %w", s.what, err)
		}
		if err := clash(s.what, svc.Spec.ClusterIP); err != nil {
			return err
		}
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the class cluster's nodes: %w", err)
	}
	for _, n := range nodes.Items {
		for _, c := range n.Spec.PodCIDRs {
			p, err := netip.ParsePrefix(c)
			if err != nil {
				continue
			}
			for _, mine := range []netip.Prefix{pods, svcs} {
				if p.Overlaps(mine) {
					return fmt.Errorf("node %s's Pod range %s overlaps the learner nodes' range %s: learner nodes need a class cluster whose Pods are outside %s and %s", n.Name, c, mine, nodePodCIDR, nodeServiceCIDR)
				}
			}
		}
	}
	return nil
}

// checkNodeSafe refuses a lab whose learner could undo what keeps their
// node's Pods from the class node: Pod Security labels on namespaces,
// admission policies, and the kubelet's own API (which runs commands in any
// Pod of the node, by name). RBAC authorizes a write on namespace N (its
// status and finalize included, which carry its labels as well) against
// the roles bound in N too, so each is asked cluster-wide and in each of
// the lab's namespaces; so are the rights that grant the rest (a role of
// any rules, a binding to any role, another's identity).
func checkNodeSafe(ctx context.Context, cs kubernetes.Interface, l *lab.Lab) error {
	user := "system:serviceaccount:" + provision.SystemNamespace + ":" + provision.LearnerAccount
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + provision.SystemNamespace, "system:authenticated"}
	for _, a := range nodeUnsafeRights(l.Cluster.Namespaces) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: groups, ResourceAttributes: &a}}
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("asking the learner's API server what the lab lets the learner do: %w", err)
		}
		if res.Status.Allowed {
			what := a.Verb + " " + a.Resource
			if a.Subresource != "" {
				what += "/" + a.Subresource
			}
			if a.Namespace != "" {
				what += " in " + a.Namespace
			}
			return &LabError{Lab: l.Metadata.Name, Reason: "its access lets the learner " + what + ", which on a learner node would open the way to root on the class cluster's node (Pod Security labels, admission, the kubelet's API)"}
		}
	}
	return nil
}

// nodeUnsafeRights are what checkNodeSafe asks, cluster-wide and in each
// of namespaces.
func nodeUnsafeRights(namespaces []string) []authorizationv1.ResourceAttributes {
	const rbac = "rbac.authorization.k8s.io"
	out := []authorizationv1.ResourceAttributes{
		{Verb: "create", Resource: "namespaces"},
		{Verb: "create", Resource: "nodes", Subresource: "proxy"},
		{Verb: "get", Resource: "nodes", Subresource: "proxy"},
		{Verb: "create", Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicies"},
		{Verb: "delete", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"},
		{Verb: "create", Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"},
		{Verb: "impersonate", Resource: "users"},
		{Verb: "impersonate", Resource: "groups"},
		{Verb: "impersonate", Resource: "serviceaccounts"},
	}
	for _, ns := range append([]string{""}, namespaces...) {
		for _, verb := range []string{"update", "patch"} {
			for _, sub := range []string{"", "status", "finalize"} {
				out = append(out, authorizationv1.ResourceAttributes{Namespace: ns, Name: ns, Verb: verb, Resource: "namespaces", Subresource: sub})
			}
		}
		for _, verb := range []string{"escalate", "bind"} {
			for _, res := range []string{"roles", "clusterroles"} {
				out = append(out, authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: rbac, Resource: res})
			}
		}
	}
	return out
}

// waitNode waits until the learner's node is Ready in their API server.
func waitNode(ctx context.Context, cs kubernetes.Interface, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	last := "not registered yet"
	for {
		n, err := cs.CoreV1().Nodes().Get(ctx, learnerNodeName, metav1.GetOptions{})
		if err == nil {
			last = "registered, not Ready"
			if nodeReady(n) {
				return nil
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Message != "" {
					last = "not Ready: " + c.Message
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the learner's node %s is %s after %s", learnerNodeName, textsafe.EscapeLine(last), limit)
		case <-time.After(time.Second):
		}
	}
}

// loadNodeImages streams the lab's images from the instructor's engine
// into the learner node's containerd, the way `labctl up` loads them into
// kind's node: the kubelet never pulls them.
func (e *learnerRuntime) loadNodeImages(ctx context.Context, refs []string) error {
	present, err := images.Present(ctx, images.Options{}, refs)
	if err != nil {
		return fmt.Errorf("reading the lab's images in the local engine: %w", err)
	}
	var load []string
	for _, r := range refs {
		if present[r] != "" {
			load = append(load, r)
		}
	}
	if len(load) == 0 {
		return nil
	}
	refs = load
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(images.SaveTo(ctx, images.Options{}, pw, refs))
	}()
	code, out, err := e.run(ctx, podCommand{pod: vcpPod, container: containerNode,
		cmd: []string{"ctr", "--namespace", "k8s.io", "images", "import", "--all-platforms", "-"}, stdin: pr, wait: homeWait})
	pr.CloseWithError(io.EOF)
	if err != nil {
		return fmt.Errorf("loading %s into %s's node: %w", strings.Join(refs, ", "), e.learner, err)
	}
	if code != 0 {
		return fmt.Errorf("loading %s into %s's node: exit %d: %s", strings.Join(refs, ", "), e.learner, code, out.LastLines(3))
	}
	return nil
}
