package checks

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// Reacher tries a reach check's connection from a Pod of its own in the
// cluster, run from image, and says whether it opened; when it did not,
// detail says why (timed out, refused, a name that does not resolve).
type Reacher interface {
	Reach(ctx context.Context, r *lab.ReachCheck, image string) (opened bool, detail string, err error)
}

// reachConnectTimeout bounds each connection a reach check's Pod tries
// (the timeout in reachScript).
const reachConnectTimeout = 3

// reachSettle is how long after it starts a reach check's Pod keeps trying
// while it sees the outcome the check does not expect (reachScript's $3),
// and reachFirstWait how long it waits before its first try ($4), when no
// agent says it has programmed the Pod.
const (
	reachSettle    = 10
	reachFirstWait = 2
)

// reachScript is what a reach check's Pod runs, with the host as $0, the
// port as $1, the outcome the check expects (open or closed) as $2, the
// settle time in seconds as $3 and the wait before the first try as $4.
// It tries until two tries in a row agree. When they agree on the
// expected outcome it answers at once; when they agree on the other one it
// goes on trying until $3 seconds from its start have passed and answers
// with the last try.
//
// A policy agent programs a new Pod's rules a moment after it starts,
// longer under load. When labctl knows the agent (policyAgent), the script
// runs only once the agent has synced since the Pod got its address, with
// no wait and no settle time: its first tries are judged by the rules in
// force. Otherwise it waits a little first and settles for reachSettle
// seconds, so that a right answer is not judged by a Pod whose policies are
// not programmed yet; a wrong one whose tries agree with the expected
// outcome before then is not caught (docs/architecture.md).
const reachScript = `want=$2 settle=$3
sleep "$4"
last=
while :; do
  if timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$0" "$1"; then status=0; now=open; else status=$?; now=closed; fi
  if [ "$now" = "$last" ]; then
    [ "$now" = "$want" ] && break
    [ "$SECONDS" -ge "$settle" ] && break
  fi
  last=$now
  sleep 1
done
exit $status`

// reachTimedOut is timeout(1)'s exit status when the connection did not
// open in time.
const reachTimedOut = 124

// checkReach starts a Pod in the check's namespace, labelled like the
// lab's Pods there that From.Labels select, which opens a TCP connection to
// To: what a NetworkPolicy, a Service and DNS let such a Pod do, seen from
// inside the cluster, never read back from the policies.
//
// pass: the connection opened (allowed: true) or did not (allowed: false).
// fail: otherwise. error: no credentials or image, the Pod could not be
// made or did not run to its end.
func checkReach(ctx context.Context, env Env, r *lab.ReachCheck) error {
	reacher, ok := env.Kube.(Reacher)
	if env.Kube == nil || !ok {
		return errNoCluster
	}
	if env.ReachImage == "" {
		return errors.New("the checker has no image to start a reach check's Pod from")
	}
	opened, detail, err := reacher.Reach(ctx, r, env.ReachImage)
	if err != nil {
		return err
	}
	want := r.Allowed != nil && *r.Allowed
	from := describeFrom(r.From)
	switch {
	case want && !opened:
		return failf(msg.ReachExpectOpen, from, r.To, detail)
	case !want && opened:
		return failf(msg.ReachExpectClosed, from, r.To)
	}
	return nil
}

// describeFrom names a reach check's Pod for messages:
// "a new Pod in shop labelled tier=web".
func describeFrom(f lab.ReachFrom) msg.Text {
	if len(f.Labels) == 0 {
		return msg.T(msg.ReachFrom, f.Namespace)
	}
	return msg.T(msg.ReachFromLabelled, f.Namespace, labels.SelectorFromSet(f.Labels).String())
}

var (
	podsResource       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// reachPollEvery is how often Reach reads its Pod's status.
const reachPollEvery = 250 * time.Millisecond

// Reach starts the check's Pod, waits for its container to end, reads
// whether the connection opened, and deletes the Pod, whatever happened.
// On a cluster whose policy agent labctl knows, the Pod only waits: its
// tries run in it through the exec API once the agent has synced since
// the Pod got its address (tryAfterSync).
func (k *kubeReader) Reach(ctx context.Context, r *lab.ReachCheck, image string) (bool, string, error) {
	ns := r.From.Namespace
	pods := k.client.Resource(podsResource).Namespace(ns)
	podLabels, err := k.standInLabels(ctx, r.From)
	if err != nil {
		return false, "", err
	}
	owner, err := k.client.Resource(namespacesResource).Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return false, "", fmt.Errorf("reading namespace %s: %w", ns, err)
	}
	host, port, err := lab.SplitReachTarget(r.To)
	if err != nil {
		return false, "", err
	}
	gated := false
	if k.agent != nil {
		agents, err := k.agent.Syncs(ctx)
		for callTimedOut(err) && ctx.Err() == nil {
			// An agent that answers late is still an agent: read again.
			time.Sleep(reachPollEvery)
			agents, err = k.agent.Syncs(ctx)
		}
		if err != nil {
			return false, "", err
		}
		gated = len(agents) > 0
	}
	want := r.Allowed != nil && *r.Allowed
	made, err := pods.Create(ctx, reachPod(ns, podLabels, owner, image, host, port, want, podDeadline(ctx), gated), metav1.CreateOptions{})
	if err != nil {
		return false, "", fmt.Errorf("starting the Pod that tries %s from %s: %w", r.To, ns, err)
	}
	name := made.GetName()
	defer func() {
		// The Pod goes even when the check's own deadline has passed.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		zero := int64(0)
		_ = pods.Delete(dctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	}()
	// Stop polling a little before the check's deadline, so that a Pod
	// that never ran says why.
	wait := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		wait, cancel = context.WithDeadline(ctx, deadline.Add(-cancelGrace))
		defer cancel()
	}
	waiting := "it was not scheduled yet"
	for {
		pod, err := listOne(wait, pods, name)
		switch {
		case err != nil && wait.Err() == nil && callTimedOut(err):
			// A read that ran out of its own time says nothing of the
			// Pod: read again until the check's deadline.
			waiting = "reading its status took too long: " + err.Error()
		case err != nil && wait.Err() == nil:
			return false, "", fmt.Errorf("reading the Pod that tries %s from %s: %w", r.To, ns, err)
		case err == nil && pod == nil:
			return false, "", fmt.Errorf("the Pod that tries %s from %s was deleted before it finished", r.To, ns)
		case err == nil:
			if done, opened, detail := reachOutcome(pod); done {
				if gated {
					return false, "", fmt.Errorf("the Pod that tries %s from %s ended before it tried", r.To, ns)
				}
				return opened, detail, nil
			}
			if gated && reachRunning(pod) {
				return k.tryAfterSync(wait, ns, name, owner, host, port, want)
			}
			if why := waitingReason(pod); why != "" {
				waiting = why
			}
		}
		select {
		case <-wait.Done():
			return false, "", fmt.Errorf("the Pod that tries %s from %s did not finish: %s", r.To, ns, waiting)
		case <-time.After(reachPollEvery):
		}
	}
}

// tryAfterSync waits until the policy agent has synced since the check's
// Pod got its address, then runs the tries in the Pod, with no first wait
// and no settle time.
func (k *kubeReader) tryAfterSync(ctx context.Context, ns, pod string, owner *unstructured.Unstructured, host string, port int, want bool) (bool, string, error) {
	if err := k.agentWaiter().wait(ctx, ns, owner); err != nil {
		return false, "", err
	}
	// Bounded: a chatty try cannot exhaust the checker's memory.
	var out cappedBuffer
	code, err := k.agent.Exec(ctx, ns, pod, reachCommand(host, port, want, 0, 0), nil, &out)
	for callTimedOut(err) && ctx.Err() == nil {
		// The tries only read: an exec that got no answer in time runs
		// them again, judged by the same rules.
		out.Reset()
		time.Sleep(reachPollEvery)
		code, err = k.agent.Exec(ctx, ns, pod, reachCommand(host, port, want, 0, 0), nil, &out)
	}
	if err != nil && ctx.Err() != nil {
		return false, "", fmt.Errorf("the tries of %s:%d in the check's Pod did not end before the check's deadline", host, port)
	}
	if err != nil {
		return false, "", fmt.Errorf("trying %s:%d in the check's Pod: %w", host, port, err)
	}
	opened, detail := tryOutcome(int64(code), out.String())
	return opened, detail, nil
}

// reachCommand runs reachScript with its arguments.
func reachCommand(host string, port int, want bool, settle, firstWait int) []string {
	expected := "closed"
	if want {
		expected = "open"
	}
	return []string{"bash", "-c", reachScript, host, strconv.Itoa(port), expected, strconv.Itoa(settle), strconv.Itoa(firstWait)}
}

// reachRunning reports whether the Pod's container has started.
func reachRunning(pod *unstructured.Unstructured) bool {
	statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	for _, s := range statuses {
		st, _ := s.(map[string]any)
		if _, ok, _ := unstructured.NestedMap(st, "state", "running"); ok {
			return true
		}
	}
	return false
}

// standInLabels are the labels of the first running Pod in the namespace
// that from's labels select, so that no policy tells the check's Pod from
// the Pod it stands in for; from's own labels when none runs.
func (k *kubeReader) standInLabels(ctx context.Context, from lab.ReachFrom) (map[string]any, error) {
	out := map[string]any{}
	for key, v := range from.Labels {
		out[key] = v
	}
	list, err := k.client.Resource(podsResource).Namespace(from.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(from.Labels).String(),
		FieldSelector: "status.phase=Running",
		Limit:         20,
	})
	if err != nil {
		return nil, fmt.Errorf("looking for the Pods of %s that the check stands in for: %w", from.Namespace, err)
	}
	for _, p := range list.Items {
		if strings.HasPrefix(p.GetName(), reachPodPrefix) {
			continue
		}
		for key, v := range p.GetLabels() {
			out[key] = v
		}
		break
	}
	return out, nil
}

// podDeadline is the check's Pod's activeDeadlineSeconds: the check's own
// time left and a minute more, so that the kubelet stops a Pod that labctl
// could not delete (it died first) without ever stopping one the check still
// waits for.
func podDeadline(ctx context.Context) int64 {
	left := lab.DefaultReachTimeout
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	return int64(max(left, 0)/time.Second) + 60
}

// reachPodPrefix starts the names of reach checks' Pods.
const reachPodPrefix = "labctl-reach-"

// reachPod is the check's Pod: it tries a TCP connection with bash's
// /dev/tcp under timeout(1) (reachScript), as nobody, within the restricted Pod Security
// level; gated, it only sleeps, and the tries run in it later. A readiness
// gate nobody sets keeps it out of every Service's endpoints, and the
// namespace as its controller keeps every ReplicaSet from adopting it.
func reachPod(ns string, podLabels map[string]any, owner *unstructured.Unstructured, image, host string, port int, want bool, deadline int64, gated bool) *unstructured.Unstructured {
	command := []any{"sleep", strconv.FormatInt(deadline, 10)}
	if !gated {
		command = nil
		for _, a := range reachCommand(host, port, want, reachSettle, reachFirstWait) {
			command = append(command, a)
		}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata": map[string]any{
			"generateName": reachPodPrefix,
			"namespace":    ns,
			"labels":       podLabels,
			"annotations":  map[string]any{"labctl.dev/reach": host + ":" + strconv.Itoa(port)},
			"ownerReferences": []any{map[string]any{
				"apiVersion": "v1", "kind": "Namespace", "name": owner.GetName(), "uid": string(owner.GetUID()), "controller": true,
			}},
		},
		"spec": map[string]any{
			"restartPolicy":                 "Never",
			"automountServiceAccountToken":  false,
			"enableServiceLinks":            false,
			"terminationGracePeriodSeconds": int64(0),
			"activeDeadlineSeconds":         deadline,
			"readinessGates":                []any{map[string]any{"conditionType": "labctl.dev/never-ready"}},
			"securityContext": map[string]any{
				"runAsNonRoot": true, "runAsUser": int64(65534), "runAsGroup": int64(65534),
				"seccompProfile": map[string]any{"type": "RuntimeDefault"},
			},
			"containers": []any{map[string]any{
				"name":                     "reach",
				"image":                    image,
				"imagePullPolicy":          "Never",
				"command":                  command,
				"terminationMessagePolicy": "FallbackToLogsOnError",
				"resources": map[string]any{
					"requests": map[string]any{"cpu": "10m", "memory": "16Mi", "ephemeral-storage": "1Mi"},
					"limits":   map[string]any{"cpu": "100m", "memory": "32Mi", "ephemeral-storage": "1Mi"},
				},
				"securityContext": map[string]any{
					"allowPrivilegeEscalation": false,
					"readOnlyRootFilesystem":   true,
					"capabilities":             map[string]any{"drop": []any{"ALL"}},
				},
			}},
		},
	}}
}

// syncMarkerPod is a Pod that a scheduling gate keeps from ever being
// scheduled, made and deleted at once to make the policy agents sync
// (kubePolicyAgent.AskSync). It has no labels: no policy selects it, and
// it never has an address.
func syncMarkerPod(ns string, owner *unstructured.Unstructured) *corev1.Pod {
	no, yes := false, true
	nobody := int64(65534)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: reachPodPrefix + "sync-",
			Namespace:    ns,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Namespace", Name: owner.GetName(), UID: owner.GetUID(), Controller: &yes,
			}},
		},
		Spec: corev1.PodSpec{
			SchedulingGates:              []corev1.PodSchedulingGate{{Name: "labctl.dev/never"}},
			AutomountServiceAccountToken: &no,
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: &yes, RunAsUser: &nobody, RunAsGroup: &nobody,
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Containers: []corev1.Container{{
				Name: "never", Image: "labctl.invalid/never", Command: []string{"false"},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("1Mi"), corev1.ResourceEphemeralStorage: resource.MustParse("1Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("1Mi"), corev1.ResourceEphemeralStorage: resource.MustParse("1Mi")},
				},
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: &no, ReadOnlyRootFilesystem: &yes,
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
		},
	}
}

// listOne reads one Pod by name through a list (the grader may list Pods,
// never get one by a name it cannot know ahead); nil when it is gone.
func listOne(ctx context.Context, pods interface {
	List(context.Context, metav1.ListOptions) (*unstructured.UnstructuredList, error)
}, name string) (*unstructured.Unstructured, error) {
	list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		if list.Items[i].GetName() == name {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// reachOutcome reads whether the Pod's container has ended and, if so,
// whether the connection opened and, when it did not, why.
func reachOutcome(pod *unstructured.Unstructured) (done, opened bool, detail string) {
	statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	for _, s := range statuses {
		st, _ := s.(map[string]any)
		term, ok, _ := unstructured.NestedMap(st, "state", "terminated")
		if !ok {
			continue
		}
		code, _, _ := unstructured.NestedInt64(term, "exitCode")
		text, _, _ := unstructured.NestedString(term, "message")
		opened, detail := tryOutcome(code, text)
		return true, opened, detail
	}
	return false, false, ""
}

// tryOutcome reads the tries' exit code and output: whether the
// connection opened and, when it did not, why.
func tryOutcome(code int64, output string) (opened bool, detail string) {
	switch code {
	case 0:
		return true, ""
	case reachTimedOut:
		return false, fmt.Sprintf("no answer within %ds", reachConnectTimeout)
	}
	return false, reachDetail(output)
}

// waitingReason is why the Pod's container does not run yet, if it says.
func waitingReason(pod *unstructured.Unstructured) string {
	statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	for _, s := range statuses {
		st, _ := s.(map[string]any)
		reason, _, _ := unstructured.NestedString(st, "state", "waiting", "reason")
		message, _, _ := unstructured.NestedString(st, "state", "waiting", "message")
		if reason != "" {
			return strings.TrimSpace(reason + " " + message)
		}
	}
	conds, _, _ := unstructured.NestedSlice(pod.Object, "status", "conditions")
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] == "PodScheduled" && cm["status"] == "False" {
			m, _ := cm["message"].(string)
			return "not scheduled: " + m
		}
	}
	return ""
}

// reachDetail says why the last try did not connect, from the tail of the
// Pod's output (bash's messages, prefixed with the host it ran as).
func reachDetail(text string) string {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	tail := strings.Join(lines[max(0, len(lines)-2):], "\n")
	for _, known := range []struct{ says, detail string }{
		{"Name or service not known", "the name does not resolve"},
		{"Temporary failure in name resolution", "the name does not resolve (no answer from DNS)"},
		{"Connection refused", "connection refused"},
		{"No route to host", "no route to host"},
		{"Network is unreachable", "network unreachable"},
	} {
		if strings.Contains(tail, known.says) {
			return known.detail
		}
	}
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 200 {
		l = l[:200] + "…"
	}
	if l == "" {
		return "the connection did not open"
	}
	return l
}
