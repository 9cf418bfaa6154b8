package checks

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/internal/podexec"
)

// The network policy agent of labctl's networkPolicy add-on (kube-router's
// firewall, one Pod per node): where its Pods run, how they are selected,
// and the port its metrics are served on, on each node's address. The
// add-on's manifest must match (provision/kind's tests hold it to these).
const (
	PolicyAgentNamespace   = "labctl-system"
	PolicyAgentSelector    = "app.kubernetes.io/name=labctl-network-policy"
	PolicyAgentMetricsPort = 9245
)

// policyAgentSyncs is the agent's count of its full syncs of the cluster's
// policies into the node's rules: one more each time a sync ends.
const policyAgentSyncs = "kube_router_controller_iptables_sync_time_count"

// agentSyncsNeeded is how many syncs each agent must end, counted from
// just before the check asks for one, before the check's Pod tries: the
// first may have begun before the agent knew the Pod's address, and so
// may the second when the first ended in the moment between the count and
// the agent's receipt of the request; the third began after it.
const agentSyncsNeeded = 3

// agentPollEvery is how often the agents' counts are read: one reading
// for all the reach checks of a round that wait (syncWaiter), each a
// request to the API server per agent Pod and a scrape of its metrics.
const agentPollEvery = 200 * time.Millisecond

// agentAskEvery is how often a sync is asked for again while the counts
// have not moved: a request the agent took while a sync ran is served by
// that one's successor, which is the only one it queues.
const agentAskEvery = time.Second

// agentCallTimeout bounds one read of the counts or one request for a
// sync, so that a call that hangs cannot hold the poll forever. A call
// that runs out of it is no answer, not an error: an agent that is
// stopped or busy answers late (its scrape hangs), and the waiters go on
// waiting until their own deadlines, which then say how far it got.
const agentCallTimeout = 10 * time.Second

// policyAgent is what a reach check needs of the cluster's network policy
// agent, when labctl knows it: how many syncs each of its Pods has ended,
// a way to make every one of them sync again, and a command run in the
// check's Pod once they have.
type policyAgent interface {
	// Syncs reads each running agent Pod's count of ended syncs; an empty
	// map when the cluster runs no agent labctl knows.
	Syncs(ctx context.Context) (map[string]float64, error)
	// AskSync makes every agent sync again soon: it creates and deletes a
	// Pod in ns that never runs, an event every agent answers with a sync.
	AskSync(ctx context.Context, ns string, owner *unstructured.Unstructured) error
	// Exec runs cmd in the check's Pod's container, with in as its stdin
	// when it is not nil, and returns its exit code, with its output in
	// out.
	Exec(ctx context.Context, ns, pod string, cmd []string, in io.Reader, out io.Writer) (int, error)
}

// syncWaiter makes the reach checks of one round that wait at the same
// time share one reading of the agents' counts and one stream of requests
// for syncs: the checks run at once, and each reading their own would
// multiply the requests to the API server and the scrapes of the agents,
// which slow the very syncs they wait for. Each waiter still has its own
// counts, from the first reading begun after it came, so what one waits
// for is what it would wait for alone.
type syncWaiter struct {
	agent           policyAgent
	every, askEvery time.Duration
	// callTimeout bounds each call to the agent (agentCallTimeout).
	callTimeout time.Duration

	mu      sync.Mutex
	waiters map[*syncWait]bool
	polling bool
	// last is the newest reading, for the progress of a waiter that is late;
	// lateErr the error of the readings since, when they ran out of time.
	last    map[string]float64
	lateErr error
}

// syncWait is one check's wait: where a request for a sync may be made,
// its counts from its first reading (nil before), and where the end of
// the wait is sent.
type syncWait struct {
	ns    string
	owner *unstructured.Unstructured
	base  map[string]float64
	done  chan error
}

func newSyncWaiter(a policyAgent, every, askEvery time.Duration) *syncWaiter {
	return &syncWaiter{agent: a, every: every, askEvery: askEvery, callTimeout: agentCallTimeout, waiters: map[*syncWait]bool{}}
}

// wait returns once every agent Pod that runs has ended agentSyncsNeeded
// syncs since the first reading of the counts begun after the call (each
// Pod that was not counted then, or whose count went back, starts its own
// count), a sync having been asked for after that reading; or with an
// error when ctx ends first, or when reading or asking fails (a call
// that only outlasts callTimeout is no answer: the wait goes on). A sync is
// asked for in ns (or in the namespace of another check waiting then).
func (s *syncWaiter) wait(ctx context.Context, ns string, owner *unstructured.Unstructured) error {
	w := &syncWait{ns: ns, owner: owner, done: make(chan error, 1)}
	s.mu.Lock()
	s.waiters[w] = true
	if !s.polling {
		s.polling = true
		go s.poll()
	}
	s.mu.Unlock()
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case err := <-w.done: // ended in the same moment
			return err
		default:
		}
		delete(s.waiters, w)
		progress := "no agent Pod answered"
		if w.base != nil {
			progress = syncProgress(w.base, s.last)
		}
		if s.lateErr != nil {
			progress += "; the last reading: " + s.lateErr.Error()
		}
		return agentLate(progress)
	}
}

// poll reads the counts while any check waits: it gives each new waiter
// its counts and then asks for a sync, asks again whenever a count moves
// and at least every askEvery, and ends the waits whose syncs have ended.
func (s *syncWaiter) poll() {
	var asked time.Time
	for first := true; ; first = false {
		if !first {
			time.Sleep(s.every)
		}
		s.mu.Lock()
		if len(s.waiters) == 0 {
			s.polling = false
			s.mu.Unlock()
			return
		}
		// Only the waiters here before the reading begins take their
		// counts from it.
		var fresh []*syncWait
		for w := range s.waiters {
			if w.base == nil {
				fresh = append(fresh, w)
			}
		}
		s.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), s.callTimeout)
		now, err := s.agent.Syncs(ctx)
		late := ctx.Err() != nil || callTimedOut(err)
		cancel()
		s.mu.Lock()
		if err != nil {
			if !late {
				s.endAllLocked(err)
			} else {
				s.lateErr = err
			}
			// A reading that outlasted its bound gives no counts, so the
			// waiters that came for it wait for the next one.
			s.mu.Unlock()
			continue
		}
		s.lateErr = nil
		moved := false
		for pod, n := range now {
			if n != s.last[pod] {
				moved = true
			}
		}
		s.last = now
		for _, w := range fresh {
			w.base = maps.Clone(now)
		}
		for w := range s.waiters {
			if w.base != nil && synced(w.base, now) {
				w.done <- nil
				delete(s.waiters, w)
			}
		}
		ask := len(s.waiters) > 0 && (len(fresh) > 0 || moved || time.Since(asked) >= s.askEvery)
		var at *syncWait
		for w := range s.waiters {
			at = w
			break
		}
		s.mu.Unlock()
		if !ask {
			continue
		}
		ctx, cancel = context.WithTimeout(context.Background(), s.callTimeout)
		err = s.agent.AskSync(ctx, at.ns, at.owner)
		late = ctx.Err() != nil || callTimedOut(err)
		cancel()
		asked = time.Now()
		if late {
			// The request may not have reached the agent: ask again after
			// the next reading.
			asked = time.Time{}
		}
		if err != nil && !late {
			s.mu.Lock()
			s.endAllLocked(err)
			s.mu.Unlock()
		}
	}
}

// callTimedOut says whether err is one call's running out of time rather
// than an answer: the request's own bound (the client's), or the API
// server's, or its proxy's to an agent that does not answer yet. Such a
// call is no answer, as one that outlasts callTimeout is.
func callTimedOut(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsServiceUnavailable(err)
}

// endAllLocked ends every wait with err.
func (s *syncWaiter) endAllLocked(err error) {
	for w := range s.waiters {
		w.done <- err
		delete(s.waiters, w)
	}
}

// synced says whether every Pod in now has ended agentSyncsNeeded syncs
// since base; a Pod new to base, or whose count went back, is counted from
// now on (base is updated).
func synced(base, now map[string]float64) bool {
	done := true
	for pod, n := range now {
		b, ok := base[pod]
		if !ok || n < b {
			base[pod], b = n, n
		}
		if n < b+agentSyncsNeeded {
			done = false
		}
	}
	return done
}

// agentLate is the error of a check whose agents did not sync in time.
func agentLate(progress string) error {
	return fmt.Errorf("the network policy agent did not apply the cluster's policies after the check's Pod started (%s)", progress)
}

// syncProgress says how far each agent Pod got, in the order of their
// names: "labctl-network-policy-x7k2p: 1 of 3 syncs".
func syncProgress(base, last map[string]float64) string {
	var parts []string
	for _, pod := range slices.Sorted(maps.Keys(last)) {
		parts = append(parts, fmt.Sprintf("%s: %d of %d syncs", pod, int(last[pod]-base[pod]), agentSyncsNeeded))
	}
	if len(parts) == 0 {
		return "no agent Pod answered"
	}
	return strings.Join(parts, ", ")
}

// kubePolicyAgent is policyAgent through the API server: the agent's Pods
// listed in PolicyAgentNamespace, their metrics read through the API
// server's proxy, the command run through the exec API.
type kubePolicyAgent struct {
	cfg *rest.Config
	cs  kubernetes.Interface
}

// newKubePolicyAgent reads through hc; cfg is for the exec API, which makes
// a connection of its own.
func newKubePolicyAgent(cfg *rest.Config, hc *http.Client) (*kubePolicyAgent, error) {
	cs, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("creating the client of the network policy agent: %w", err)
	}
	return &kubePolicyAgent{cfg: cfg, cs: cs}, nil
}

// Syncs reads every running agent Pod's count. A cluster without the
// add-on, or a grader not allowed to look (one granted by an older labctl),
// has no agent.
func (a *kubePolicyAgent) Syncs(ctx context.Context) (map[string]float64, error) {
	pods, err := a.cs.CoreV1().Pods(PolicyAgentNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: PolicyAgentSelector, FieldSelector: "status.phase=Running",
	})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return map[string]float64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("looking for the network policy agent: %w", err)
	}
	out := map[string]float64{}
	for _, p := range pods.Items {
		body, err := a.cs.CoreV1().Pods(PolicyAgentNamespace).
			ProxyGet("http", p.Name, strconv.Itoa(PolicyAgentMetricsPort), "metrics", nil).DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the network policy agent's syncs on node %s: %w", p.Spec.NodeName, err)
		}
		n, ok := metricValue(body, policyAgentSyncs)
		if !ok {
			return nil, fmt.Errorf("the network policy agent on node %s does not count its syncs (%s)", p.Spec.NodeName, policyAgentSyncs)
		}
		out[p.Name] = n
	}
	return out, nil
}

// metricValue finds name's value in a Prometheus text exposition.
func metricValue(body []byte, name string) (float64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name+" ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return v, err == nil
	}
	return 0, false
}

// AskSync creates and deletes a Pod that a scheduling gate keeps from
// ever being scheduled, in ns: every agent syncs on a Pod's deletion, and
// the deletion comes after the check's Pod got its address in the stream
// of Pod events every agent reads.
func (a *kubePolicyAgent) AskSync(ctx context.Context, ns string, owner *unstructured.Unstructured) error {
	pods := a.cs.CoreV1().Pods(ns)
	made, err := pods.Create(ctx, syncMarkerPod(ns, owner), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("asking the network policy agent to sync (a Pod in %s): %w", ns, err)
	}
	zero := int64(0)
	if err := pods.Delete(ctx, made.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("asking the network policy agent to sync (a Pod in %s): %w", ns, err)
	}
	return nil
}

// Exec runs cmd in the check's Pod's "reach" container.
func (a *kubePolicyAgent) Exec(ctx context.Context, ns, pod string, cmd []string, in io.Reader, out io.Writer) (int, error) {
	return podexec.Exec{Namespace: ns, Pod: pod, Container: "reach", Cmd: cmd, Stdin: in, Stdout: out, Stderr: out}.Run(ctx, a.cfg, a.cs)
}
