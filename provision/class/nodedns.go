package class

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/internal/textsafe"
)

// The learner node's cluster DNS: CoreDNS, as a kind cluster has it, so
// that a lab's Pods find Services by name (web, web.rollout.svc) as after
// `labctl up`. It runs on the learner's node from the node image's own
// CoreDNS image, behind the Service address the node's kubelet gives every
// Pod, and answers for cluster.local from the learner's API server alone:
// no name of the class cluster resolves there. Other names go on to the
// class cluster's DNS, through the node's resolv.conf.

// nodeDNSAddress is the DNS Service's address, in the node's Service range.
const nodeDNSAddress = "10.97.0.10"

// nodeDNSManifest is CoreDNS in the learner's kube-system: its identity,
// which may read Services, EndpointSlices and namespaces; its Corefile; one
// replica as a non-root user without capabilities (it listens on 1053, the
// Service maps port 53 there); and the Service.
func nodeDNSManifest(image string) string {
	return `apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "labctl:coredns"}
rules:
- {apiGroups: [""], resources: [services, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "labctl:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "labctl:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:1053 {
        errors
        health :8080
        ready :8181
        kubernetes cluster.local in-addr.arpa ip6.arpa {
            fallthrough in-addr.arpa ip6.arpa
        }
        forward . /etc/resolv.conf
        cache 30
        loop
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      priorityClassName: system-cluster-critical
      dnsPolicy: Default
      securityContext: {runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: coredns
        image: ` + image + `
        imagePullPolicy: IfNotPresent
        args: [-conf, /etc/coredns/Corefile]
        ports:
        - {name: dns, containerPort: 1053, protocol: UDP}
        - {name: dns-tcp, containerPort: 1053, protocol: TCP}
        resources: {requests: {cpu: 10m, memory: 32Mi}, limits: {cpu: 500m, memory: 128Mi}}
        securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
        livenessProbe: {httpGet: {path: /health, port: 8080}, initialDelaySeconds: 30, periodSeconds: 10}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: ` + nodeDNSAddress + `
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, targetPort: 1053, protocol: UDP}
  - {name: dns-tcp, port: 53, targetPort: 1053, protocol: TCP}
`
}

// nodeDNSResources maps the manifest's kinds to their resources.
var nodeDNSResources = map[string]string{
	"ServiceAccount": "serviceaccounts", "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
	"ConfigMap": "configmaps", "Deployment": "deployments", "Service": "services",
}

// nodeDNSObjects decodes nodeDNSManifest.
func nodeDNSObjects(image string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(nodeDNSManifest(image)), 4096)
	var out []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
}

// ensureNodeDNS makes the learner's cluster DNS in their API server, or
// puts it back as labctl says (server-side apply, labctl's field manager).
func ensureNodeDNS(ctx context.Context, cfg *rest.Config, image string) error {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	objs, err := nodeDNSObjects(image)
	if err != nil {
		return fmt.Errorf("reading the node's DNS objects: %w", err)
	}
	force := true
	for _, obj := range objs {
		gv, err := schema.ParseGroupVersion(obj.GetAPIVersion())
		if err != nil {
			return err
		}
		res := dc.Resource(gv.WithResource(nodeDNSResources[obj.GetKind()]))
		var ri dynamic.ResourceInterface = res
		if ns := obj.GetNamespace(); ns != "" {
			ri = res.Namespace(ns)
		}
		var body bytes.Buffer
		if err := unstructured.UnstructuredJSONScheme.Encode(obj, &body); err != nil {
			return err
		}
		if _, err := ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body.Bytes(),
			metav1.PatchOptions{FieldManager: "labctl", Force: &force}); err != nil {
			return fmt.Errorf("making the node's DNS (%s %s): %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// waitNodeDNS waits until the learner's cluster DNS answers (its Pod is
// ready).
func waitNodeDNS(ctx context.Context, cs kubernetes.Interface, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		d, err := cs.AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
		if err == nil && dnsReady(d) {
			return nil
		}
		if image, missing := dnsImageMissing(ctx, cs); missing {
			// The Pod never pulls: waiting would not bring the image.
			return fmt.Errorf("the learner's node has no image %s for its cluster DNS (ErrImageNeverPull): a node image "+
				"given with --node-image must hold it, as labctl's own node image does; load it into that image, or leave "+
				"--node-image unset, and run `labctl class up` again", image)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the learner's cluster DNS (kube-system/coredns) is not ready after %s%s; `labctl class up` again waits for it anew",
				limit, dnsPodState(context.WithoutCancel(ctx), cs))
		case <-time.After(time.Second):
		}
	}
}

// dnsPodState says what CoreDNS's Pod is waiting for, for a message: its
// container's waiting reason, or that it runs and is not ready.
func dnsPodState(ctx context.Context, cs kubernetes.Interface) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
	if err != nil || len(pods.Items) == 0 {
		return " (no CoreDNS Pod)"
	}
	p := pods.Items[0]
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			return fmt.Sprintf(" (Pod %s: %s: %s)", p.Name, w.Reason, textsafe.EscapeLine(w.Message))
		}
	}
	return fmt.Sprintf(" (Pod %s: %s, not ready)", p.Name, p.Status.Phase)
}

// dnsImageMissing says whether CoreDNS's Pod waits for an image its node
// does not have and will never pull, and which.
func dnsImageMissing(ctx context.Context, cs kubernetes.Interface) (string, bool) {
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
	if err != nil {
		return "", false
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if w := c.State.Waiting; w != nil && w.Reason == "ErrImageNeverPull" {
				return textsafe.EscapeLine(c.Image), true
			}
		}
	}
	return "", false
}

func dnsReady(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration >= d.Generation && d.Status.ReadyReplicas >= 1 && d.Status.UpdatedReplicas >= 1
}
