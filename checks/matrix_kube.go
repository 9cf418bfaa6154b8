package checks

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/lab"
)

// Prober Pods: their names start with reachPodPrefix, so that a reach
// check never takes one for a Pod of the lab; an annotation says which
// shape each stands for, another seals it (proberSeal). No label tells
// them apart: a policy sees a prober exactly as the lab's statement
// describes the source.
const (
	proberPrefix          = reachPodPrefix + "prober-"
	proberShapeAnnotation = "labctl.dev/prober-shape"
	proberSealAnnotation  = "labctl.dev/prober-seal"
	// proberFieldManager is the field manager of the grader's writes to
	// its probers.
	proberFieldManager = "labctl-prober"
)

// shapeKey names a source's shape: its namespace and its labels, sorted,
// and the ports its prober listens on beyond lab.MatrixProberPort.
func shapeKey(s lab.MatrixSource, ports []int) string {
	key := s.Namespace + "/" + labels.SelectorFromSet(s.Labels).String()
	if len(ports) > 1 {
		var ps []string
		for _, p := range ports {
			ps = append(ps, strconv.Itoa(p))
		}
		key += " ports=" + strings.Join(ps, ",")
	}
	return key
}

// proberSealKey is the key that seals the grader's probers: derived from
// the grader's own credentials, which the learner never holds. nil when
// the configuration holds none: every prober is then made anew each round.
func proberSealKey(cfg *rest.Config) []byte {
	secret := []byte(cfg.BearerToken)
	if len(secret) == 0 && cfg.BearerTokenFile != "" {
		secret, _ = os.ReadFile(cfg.BearerTokenFile)
	}
	if len(secret) == 0 {
		secret = cfg.KeyData
	}
	if len(secret) == 0 && cfg.KeyFile != "" {
		secret, _ = os.ReadFile(cfg.KeyFile)
	}
	if len(secret) == 0 {
		return nil
	}
	sum := sha256.Sum256(append([]byte("labctl prober seal\n"), secret...))
	return sum[:]
}

// proberSeal binds a prober to the Pod the grader made: its UID (which
// the API server chooses), namespace, name, shape and image.
func proberSeal(key []byte, uid, ns, name, shape, image string) string {
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s\n%s\n%s\n%s\n%s", uid, ns, name, shape, image)
	return hex.EncodeToString(mac.Sum(nil))
}

// proberState is what the grader left of a prober, and what must not
// change while a round uses it: who it is, its labels and annotations,
// its container, and every write to it but those to its subresources
// (the kubelet's to its status, the scheduler's binding).
func proberState(pod *unstructured.Unstructured) string {
	var writes []any
	for _, f := range pod.GetManagedFields() {
		if f.Subresource == "" {
			writes = append(writes, f)
		}
	}
	statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	var containers []any
	for _, s := range statuses {
		st, _ := s.(map[string]any)
		containers = append(containers, st["containerID"], st["restartCount"])
	}
	spec, _, _ := unstructured.NestedMap(pod.Object, "spec")
	b, _ := json.Marshal([]any{pod.GetUID(), pod.GetLabels(), pod.GetAnnotations(), spec, writes, containers})
	return string(b)
}

// proberOK says why pod is not a prober the grader left as it made it for
// shape and image, or "" when it is one.
func (k *kubeReader) proberOK(pod *unstructured.Unstructured, s lab.MatrixSource, ports []int, image string) string {
	got := pod.GetLabels()
	if len(got) != len(s.Labels) || !maps.Equal(got, s.Labels) {
		return "its labels were changed"
	}
	if pod.GetDeletionTimestamp() != nil {
		return "it is being deleted"
	}
	seal := pod.GetAnnotations()[proberSealAnnotation]
	want := proberSeal(k.sealKey, string(pod.GetUID()), pod.GetNamespace(), pod.GetName(), shapeKey(s, ports), image)
	if k.sealKey == nil || !hmac.Equal([]byte(seal), []byte(want)) {
		return "labctl did not make it, or made it with other credentials"
	}
	containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	if len(containers) != 1 {
		return "its containers were changed"
	}
	c, _ := containers[0].(map[string]any)
	if c["name"] != "reach" || c["image"] != image {
		return "its container was changed"
	}
	if eph, _, _ := unstructured.NestedSlice(pod.Object, "spec", "ephemeralContainers"); len(eph) > 0 {
		return "a container was added to it"
	}
	for _, f := range pod.GetManagedFields() {
		if f.Subresource == "" && f.Manager != proberFieldManager {
			return "it was changed by " + f.Manager
		}
	}
	statuses, _, _ := unstructured.NestedSlice(pod.Object, "status", "containerStatuses")
	for _, st := range statuses {
		sm, _ := st.(map[string]any)
		if n, _, _ := unstructured.NestedInt64(sm, "restartCount"); n > 0 {
			return "its container restarted"
		}
		if _, ok, _ := unstructured.NestedMap(sm, "state", "terminated"); ok {
			return "its container ended"
		}
	}
	if phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase"); phase == "Failed" || phase == "Succeeded" {
		return "it ended"
	}
	return ""
}

// prober is one source's Pod in a round.
type prober struct {
	source lab.MatrixSource
	// ports are the ports it listens on (lab.MatrixCheck.ProberPorts).
	ports []int
	name  string
	// state is proberState when the round began to use it.
	state string
	// ip is its address, where a target that names its source is.
	ip string
}

// ProbeMatrix tries every cell of m: it finds each source's prober,
// remaking one that is not as the grader left it (made by someone else,
// relabelled, changed, ended), waits until they all run and the policy
// agent has synced since, then runs every prober's tries at once. The
// cells tries.Again picks from those answers are then tried once more,
// from the same probers and without a second wait for the agent, which
// has applied the policies already: only those probers run, only those
// cells, and their answers replace the first. A prober that changed while
// the round used it is deleted, to be made anew next round, and the round
// cannot judge.
func (k *kubeReader) ProbeMatrix(ctx context.Context, m *lab.MatrixCheck, image string, tries MatrixTries) ([][]Tried, error) {
	if k.agent == nil {
		return nil, errors.New("a matrix check needs the network policy agent, and the checker has no client for it")
	}
	agents, err := k.agent.Syncs(ctx)
	for callTimedOut(err) && ctx.Err() == nil {
		time.Sleep(reachPollEvery)
		agents, err = k.agent.Syncs(ctx)
	}
	if err != nil {
		return nil, err
	}
	if len(agents) == 0 {
		return nil, errors.New("no network policy agent runs in the cluster: a matrix check needs the networkPolicy add-on")
	}
	// The checks of a round that share a shape share its prober: one at a
	// time looks for it, and makes it when it is missing.
	k.matrixMu.Lock()
	probers, owners, err := k.keepProbers(ctx, m, image)
	k.matrixMu.Unlock()
	if err != nil {
		return nil, err
	}
	for _, p := range probers {
		pod, err := k.proberRunning(ctx, p)
		if err != nil {
			return nil, err
		}
		p.state = proberState(pod)
		p.ip, _, _ = unstructured.NestedString(pod.Object, "status", "podIP")
	}
	var addrs []string
	for _, t := range m.Targets {
		if t.Source == "" {
			addrs = append(addrs, t.To)
			continue
		}
		i := slices.IndexFunc(m.Sources, func(s lab.MatrixSource) bool { return s.Name == t.Source })
		if i < 0 || probers[i].ip == "" {
			return nil, fmt.Errorf("the target %s names a source without a prober's address", t.Name)
		}
		addrs = append(addrs, net.JoinHostPort(probers[i].ip, strconv.Itoa(t.ProberPort())))
	}
	// A source does not try its own prober: a Pod reaches its own
	// address without the network, whatever the policies say.
	every := make([][]int, len(probers))
	for i, p := range probers {
		for j := range addrs {
			if m.Targets[j].Source != p.source.Name {
				every[i] = append(every[i], j)
			}
		}
	}
	// The probers' execs start while the agent syncs, and each waits
	// for the gate before it tries (matrixScript): what the execs take
	// to start is no longer part of the round's time.
	gate := newTryGate()
	var out [][]Tried
	tried := make(chan error, 1)
	go func() {
		var err error
		out, err = k.tryCells(ctx, m, probers, addrs, every, tries.Bound, image, gate)
		tried <- err
	}()
	first := m.Sources[0].Namespace
	werr := k.agentWaiter().wait(ctx, first, owners[first])
	gate.open(werr == nil)
	if err := <-tried; werr != nil || err != nil {
		return nil, cmp.Or(werr, err)
	}
	if tries.Again == nil {
		return out, nil
	}
	again := make([][]int, len(probers))
	n := 0
	for _, c := range tries.Again(out) {
		i, j := c[0], c[1]
		if i < 0 || i >= len(out) || j < 0 || j >= len(addrs) || out[i][j].Self {
			return nil, fmt.Errorf("cell %d, %d of the matrix is not one its probers try", i, j)
		}
		again[i] = append(again[i], j)
		n++
	}
	if n == 0 {
		return out, nil
	}
	second, err := k.tryCells(ctx, m, probers, addrs, again, tries.AgainBound, image, openGate())
	if err != nil {
		return nil, err
	}
	for i, cells := range again {
		for _, j := range cells {
			out[i][j] = second[i][j]
		}
	}
	return out, nil
}

// MatrixTries are the bounds of a matrix's tries, in seconds: Bound that
// of every cell's first; AgainBound that of the second try of the cells
// Again picks (source, target) from the first answers, none when nil.
type MatrixTries struct {
	Bound      int
	Again      func(found [][]Tried) [][2]int
	AgainBound int
}

// tryCells runs, at once, the tries of the probers that cells gives
// targets to (the targets' indexes, by source), each within bound
// seconds once gate opens, and returns each source's row: the cells not
// tried are Self.
func (k *kubeReader) tryCells(ctx context.Context, m *lab.MatrixCheck, probers []*prober, addrs []string, cells [][]int, bound int, image string, gate *tryGate) ([][]Tried, error) {
	out := make([][]Tried, len(probers))
	errs := make([]error, len(probers))
	var wg sync.WaitGroup
	for i, p := range probers {
		row := make([]Tried, len(m.Targets))
		for j := range row {
			row[j] = Tried{Self: true}
		}
		out[i] = row
		if len(cells[i]) == 0 {
			continue
		}
		var mine []string
		for _, j := range cells[i] {
			mine = append(mine, addrs[j])
		}
		cmd, err := matrixCommand(k.proberRound(), mine, bound)
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tried, err := k.runProber(ctx, p, cmd, gate, len(mine), bound, image)
			if err != nil {
				errs[i] = err
				return
			}
			for c, j := range cells[i] {
				row[j] = tried[c]
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// keepProbers finds or makes the prober of each of m's sources, and reads
// the namespaces they run in (their owner).
func (k *kubeReader) keepProbers(ctx context.Context, m *lab.MatrixCheck, image string) ([]*prober, map[string]*unstructured.Unstructured, error) {
	owners := map[string]*unstructured.Unstructured{}
	listed := map[string][]unstructured.Unstructured{}
	for _, s := range m.Sources {
		if owners[s.Namespace] != nil {
			continue
		}
		owner, err := k.client.Resource(namespacesResource).Get(ctx, s.Namespace, metav1.GetOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("reading namespace %s: %w", s.Namespace, err)
		}
		owners[s.Namespace] = owner
		list, err := k.client.Resource(podsResource).Namespace(s.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, nil, fmt.Errorf("looking for the probers in %s: %w", s.Namespace, err)
		}
		listed[s.Namespace] = list.Items
	}
	probers := make([]*prober, len(m.Sources))
	for i, s := range m.Sources {
		ports := m.ProberPorts(s.Name)
		name, err := k.keepProber(ctx, s, ports, image, listed[s.Namespace], owners[s.Namespace])
		if err != nil {
			return nil, nil, err
		}
		probers[i] = &prober{source: s, ports: ports, name: name}
	}
	return probers, owners, nil
}

// keepProber returns the name of s's prober among pods, the namespace's,
// made anew when none is as the grader left it; a Pod that claims the
// shape and is not is deleted.
func (k *kubeReader) keepProber(ctx context.Context, s lab.MatrixSource, ports []int, image string, pods []unstructured.Unstructured, owner *unstructured.Unstructured) (string, error) {
	client := k.client.Resource(podsResource).Namespace(s.Namespace)
	shape := shapeKey(s, ports)
	kept := ""
	for i := range pods {
		pod := &pods[i]
		if !strings.HasPrefix(pod.GetName(), proberPrefix) || pod.GetAnnotations()[proberShapeAnnotation] != shape {
			continue
		}
		if kept == "" && k.proberOK(pod, s, ports, image) == "" {
			kept = pod.GetName()
			continue
		}
		zero := int64(0)
		if err := client.Delete(ctx, pod.GetName(), metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("deleting the prober %s in %s, which is not as labctl left it: %w", pod.GetName(), s.Namespace, err)
		}
	}
	if kept != "" {
		return kept, nil
	}
	made, err := client.Create(ctx, proberPod(s, ports, owner, image), metav1.CreateOptions{FieldManager: proberFieldManager})
	if err != nil {
		return "", fmt.Errorf("starting the prober of %s in %s: %w", s.Name, s.Namespace, err)
	}
	seal := proberSeal(k.sealKey, string(made.GetUID()), s.Namespace, made.GetName(), shape, image)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{proberSealAnnotation: seal}}})
	if _, err := client.Patch(ctx, made.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: proberFieldManager}); err != nil {
		return "", fmt.Errorf("sealing the prober of %s in %s: %w", s.Name, s.Namespace, err)
	}
	return made.GetName(), nil
}

// proberRunning waits until p's container runs and returns the Pod, as
// the grader left it.
func (k *kubeReader) proberRunning(ctx context.Context, p *prober) (*unstructured.Unstructured, error) {
	pods := k.client.Resource(podsResource).Namespace(p.source.Namespace)
	waiting := "it was not scheduled yet"
	for {
		pod, err := listOne(ctx, pods, p.name)
		switch {
		case err != nil && ctx.Err() == nil && callTimedOut(err):
			waiting = "reading its status took too long: " + err.Error()
		case err != nil && ctx.Err() == nil:
			return nil, fmt.Errorf("reading the prober of %s: %w", p.source.Name, err)
		case err == nil && pod == nil:
			return nil, fmt.Errorf("the prober of %s in %s was deleted; it is made anew at the next check", p.source.Name, p.source.Namespace)
		case err == nil:
			if reachRunning(pod) {
				return pod, nil
			}
			// The kubelet may refuse the Pod outright (a sysctl it does
			// not allow, say): it never runs, so waiting is in vain.
			if phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase"); phase == "Failed" {
				reason, _, _ := unstructured.NestedString(pod.Object, "status", "reason")
				message, _, _ := unstructured.NestedString(pod.Object, "status", "message")
				return nil, fmt.Errorf("the prober of %s in %s could not start: %s; it is made anew at the next check", p.source.Name, p.source.Namespace, strings.TrimSpace(reason+" "+message))
			}
			if why := waitingReason(pod); why != "" {
				waiting = why
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the prober of %s in %s did not start: %s", p.source.Name, p.source.Namespace, waiting)
		case <-time.After(reachPollEvery):
		}
	}
}

// runProber runs the tries in p's Pod, then reads the Pod again: one that
// is no longer as the round found it (relabelled, changed, a process in it
// that labctl did not start) is deleted and the round cannot judge.
func (k *kubeReader) runProber(ctx context.Context, p *prober, cmd []string, gate *tryGate, n, bound int, image string) ([]Tried, error) {
	var out cappedBuffer
	_, err := k.agent.Exec(ctx, p.source.Namespace, p.name, cmd, gate.stdin(), &out)
	for callTimedOut(err) && ctx.Err() == nil {
		out.Reset()
		time.Sleep(reachPollEvery)
		_, err = k.agent.Exec(ctx, p.source.Namespace, p.name, cmd, gate.stdin(), &out)
	}
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("the tries of the prober of %s did not end before the check's deadline", p.source.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("trying the targets from the prober of %s: %w", p.source.Name, err)
	}
	tried, perr := parseProberOutput(out.String(), n, bound)
	pods := k.client.Resource(podsResource).Namespace(p.source.Namespace)
	pod, err := listOne(ctx, pods, p.name)
	if err != nil {
		return nil, fmt.Errorf("reading the prober of %s after its tries: %w", p.source.Name, err)
	}
	why := ""
	switch {
	case pod == nil:
		why = "it was deleted"
	case errors.Is(perr, errStranger):
		why = "a process that labctl did not start runs in it (kubectl exec)"
	case proberState(pod) != p.state:
		why = "it was changed while it tried"
	default:
		why = k.proberOK(pod, p.source, p.ports, image)
	}
	if why != "" {
		if pod != nil {
			zero := int64(0)
			_ = pods.Delete(context.WithoutCancel(ctx), p.name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
		return nil, fmt.Errorf("the prober of %s in %s is not as labctl left it (%s): it is made anew at the next check", p.source.Name, p.source.Namespace, why)
	}
	if perr != nil {
		return nil, fmt.Errorf("the prober of %s: %w", p.source.Name, perr)
	}
	return tried, nil
}

// tryGate holds a round's tries until the policy agent has synced: the
// probers' execs start before, and each script reads its stdin for the
// line "go" (matrixScript), which comes only once the gate opens to
// tries; "stop" ends the script without a try.
type tryGate struct {
	opened chan struct{}
	ok     bool
}

func newTryGate() *tryGate { return &tryGate{opened: make(chan struct{})} }

// openGate is a gate open to tries from the start.
func openGate() *tryGate {
	g := newTryGate()
	g.open(true)
	return g
}

// open lets the scripts try when ok, and ends them when not; once only.
func (g *tryGate) open(ok bool) {
	g.ok = ok
	close(g.opened)
}

// stdin is one exec's stdin: its line once the gate opens, then its end.
func (g *tryGate) stdin() io.Reader { return &gateReader{g: g} }

type gateReader struct {
	g    *tryGate
	done bool
}

func (r *gateReader) Read(p []byte) (int, error) {
	if r.done {
		return 0, io.EOF
	}
	<-r.g.opened
	r.done = true
	if !r.g.ok {
		return copy(p, "stop\n"), nil
	}
	return copy(p, "go\n"), nil
}

// proberListen is a prober's own program: it accepts every connection on
// the ports given and closes it at once, so that a target naming its
// source opens exactly when the network lets it.
const proberListen = `my $sel = IO::Select->new; for my $p (@ARGV) { $sel->add(IO::Socket::INET->new(Listen => 64, LocalPort => $p, Proto => "tcp", ReuseAddr => 1) || die "listening on $p: $!\n") } while (1) { for my $s ($sel->can_read) { my $c = $s->accept or next; close $c } }`

// proberPod is s's prober: a Pod with exactly s's labels that listens on
// ports (proberListen), below 1024 too; the grader runs its tries in it
// through the exec API. Like a
// reach check's Pod (reachPod) it runs as nobody within the restricted
// Pod Security level, is never Ready (no Service sends it traffic) and has
// the namespace as its controller (no ReplicaSet adopts it).
func proberPod(s lab.MatrixSource, ports []int, owner *unstructured.Unstructured, image string) *unstructured.Unstructured {
	podLabels := map[string]any{}
	for key, v := range s.Labels {
		podLabels[key] = v
	}
	pod := reachPod(s.Namespace, podLabels, owner, image, "", 0, false, 0, true)
	meta := pod.Object["metadata"].(map[string]any)
	meta["generateName"] = proberPrefix
	meta["annotations"] = map[string]any{proberShapeAnnotation: shapeKey(s, ports)}
	spec := pod.Object["spec"].(map[string]any)
	delete(spec, "activeDeadlineSeconds")
	c := spec["containers"].([]any)[0].(map[string]any)
	command := []any{"perl", "-MIO::Socket::INET", "-MIO::Select", "-e", proberListen}
	var declared []any
	for _, p := range ports {
		command = append(command, strconv.Itoa(p))
		name := "probe"
		if p != lab.MatrixProberPort {
			name = "probe-" + strconv.Itoa(p)
		}
		declared = append(declared, map[string]any{"name": name, "containerPort": int64(p), "protocol": "TCP"})
	}
	c["command"] = command
	c["ports"] = declared
	// A port below 1024 needs no capability once the Pod's own network
	// namespace lets nobody bind it: a safe sysctl, which the kubelet and
	// every Pod Security level allow.
	if low := slices.Min(ports); low < 1024 {
		sc := spec["securityContext"].(map[string]any)
		sc["sysctls"] = []any{map[string]any{"name": unprivilegedPortStart, "value": strconv.Itoa(low)}}
	}
	return pod
}

// unprivilegedPortStart is the sysctl of the lowest port a process without
// CAP_NET_BIND_SERVICE may listen on, namespaced per Pod.
const unprivilegedPortStart = "net.ipv4.ip_unprivileged_port_start"

// proberRound is the round's secret, which its tries carry
// (matrixScript): random, made at its first use.
func (k *kubeReader) proberRound() string {
	k.roundOnce.Do(func() {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		k.round = hex.EncodeToString(b)
	})
	return k.round
}
