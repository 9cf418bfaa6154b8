package checks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/labctl/labctl/lab"
)

// simAgent models the policy agent as kube-router runs it: full syncs one
// at a time, each taking syncTime, with a queue of one request; a request
// made while one waits is dropped. It records when each sync began and
// ended, and when the first request that the check made arrived.
type simAgent struct {
	mu       sync.Mutex
	syncTime time.Duration
	pending  bool
	running  bool
	ended    int
	starts   []time.Time
	firstAsk time.Time
	asks     []time.Time
	reads    int
	stopped  bool // a stopped agent takes requests and never syncs
	execs    [][]string
	code     int
	output   string
}

func (a *simAgent) request() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.running {
		a.pending = true
		return
	}
	a.startLocked()
}

func (a *simAgent) startLocked() {
	if a.stopped {
		a.pending = true
		return
	}
	a.running = true
	a.starts = append(a.starts, time.Now())
	time.AfterFunc(a.syncTime, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.running = false
		a.ended++
		if a.pending {
			a.pending = false
			a.startLocked()
		}
	})
}

func (a *simAgent) Syncs(context.Context) (map[string]float64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads++
	return map[string]float64{"agent-a": float64(a.ended)}, nil
}

func (a *simAgent) AskSync(context.Context, string, *unstructured.Unstructured) error {
	a.mu.Lock()
	if a.firstAsk.IsZero() {
		a.firstAsk = time.Now()
	}
	a.asks = append(a.asks, time.Now())
	a.mu.Unlock()
	a.request()
	return nil
}

func (a *simAgent) Exec(_ context.Context, _, _ string, cmd []string, _ io.Reader, out io.Writer) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.execs = append(a.execs, cmd)
	io.WriteString(out, a.output)
	return a.code, nil
}

// TestSyncWaiterWaitsForASyncBegunAfterTheAsk: whether a sync runs,
// one waits, or none when the check asks, the wait ends only after a sync
// that began after the agent took the check's request has ended.
func TestSyncWaiterWaitsForASyncBegunAfterTheAsk(t *testing.T) {
	for _, busy := range []string{"idle", "running", "running and one waiting"} {
		t.Run(busy, func(t *testing.T) {
			a := &simAgent{syncTime: 30 * time.Millisecond}
			switch busy {
			case "running":
				a.request()
			case "running and one waiting":
				a.request()
				a.request()
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			if err := newSyncWaiter(a, 5*time.Millisecond, time.Second).wait(ctx, "shop", nil); err != nil {
				t.Fatal(err)
			}
			done := time.Now()
			a.mu.Lock()
			defer a.mu.Unlock()
			var after int
			for i, s := range a.starts {
				if s.After(a.firstAsk) && s.Add(a.syncTime).Before(done) && i < a.ended {
					after++
				}
			}
			if after == 0 {
				t.Errorf("returned with no ended sync begun after the ask (starts %v, ask %v)", a.starts, a.firstAsk)
			}
		})
	}
}

// TestSyncWaiterSharedByARound: the reach checks of a round wait at once
// and at different moments; they share one reading of the counts (no more
// readings than one waiter alone would make in that time), and each still
// waits for a sync that began after a request made after it came.
func TestSyncWaiterSharedByARound(t *testing.T) {
	a := &simAgent{syncTime: 20 * time.Millisecond}
	const every = 5 * time.Millisecond
	s := newSyncWaiter(a, every, time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	type wait struct {
		came, done time.Time
		err        error
	}
	waits := make([]wait, 8)
	began := time.Now()
	var wg sync.WaitGroup
	for i := range waits {
		wg.Go(func() {
			time.Sleep(time.Duration(i) * 7 * time.Millisecond)
			waits[i].came = time.Now()
			waits[i].err = s.wait(ctx, "shop", nil)
			waits[i].done = time.Now()
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	a.mu.Lock()
	defer a.mu.Unlock()
	if most := int(elapsed/every) + 2; a.reads > most {
		t.Errorf("%d readings of the counts in %s, want at most %d: the waiters read them each on their own", a.reads, elapsed, most)
	}
	for i, w := range waits {
		if w.err != nil {
			t.Fatalf("waiter %d: %v", i, w.err)
		}
		var ask time.Time
		for _, at := range a.asks {
			if at.After(w.came) {
				ask = at
				break
			}
		}
		ok := false
		for j, st := range a.starts {
			if !ask.IsZero() && st.After(ask) && j < a.ended && st.Add(a.syncTime).Before(w.done) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("waiter %d (came %s, done %s) returned with no ended sync begun after a request made after it came", i, w.came.Sub(began), w.done.Sub(began))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.waiters) != 0 {
		t.Errorf("%d waiters left", len(s.waiters))
	}
}

// TestSyncWaiterEndsEveryWaitOnAnError: a reading that fails ends every
// wait with its error; the next waiter starts afresh.
func TestSyncWaiterEndsEveryWaitOnAnError(t *testing.T) {
	a := &failingAgent{err: errors.New("looking for the network policy agent: forbidden")}
	s := newSyncWaiter(a, time.Millisecond, time.Second)
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = s.wait(t.Context(), "shop", nil) })
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("waiter %d: %v, want the reading's error", i, err)
		}
	}
}

// hangingAgent is a simAgent that is stopped for its first hangs
// readings: each hangs until its caller gives up on it, as a scrape of a
// stopped kube-router does.
type hangingAgent struct {
	*simAgent
	hangs int
}

func (h *hangingAgent) Syncs(ctx context.Context) (map[string]float64, error) {
	h.mu.Lock()
	hang := h.hangs > 0
	h.hangs--
	h.mu.Unlock()
	if hang {
		<-ctx.Done()
		return nil, fmt.Errorf("reading the network policy agent's syncs on node kind-worker: %w", ctx.Err())
	}
	return h.simAgent.Syncs(ctx)
}

// TestSyncWaiterWaitsOutAnAgentThatAnswersLate: readings that outlast
// their bound (an agent stopped for a while) are no answer: the waits go
// on, and end when the agent has synced, not with the readings' timeout.
func TestSyncWaiterWaitsOutAnAgentThatAnswersLate(t *testing.T) {
	a := &hangingAgent{simAgent: &simAgent{syncTime: 5 * time.Millisecond}, hangs: 3}
	s := newSyncWaiter(a, time.Millisecond, 20*time.Millisecond)
	s.callTimeout = 30 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = s.wait(ctx, "shop", nil) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("waiter %d: %v, want the wait to outlast the late readings", i, err)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ended < agentSyncsNeeded || a.hangs > 0 {
		t.Errorf("%d syncs ended, %d hanging readings left; want %d syncs after all three", a.ended, a.hangs, agentSyncsNeeded)
	}
}

type failingAgent struct{ err error }

func (f *failingAgent) Syncs(context.Context) (map[string]float64, error) { return nil, f.err }
func (f *failingAgent) AskSync(context.Context, string, *unstructured.Unstructured) error {
	return nil
}
func (f *failingAgent) Exec(context.Context, string, string, []string, io.Reader, io.Writer) (int, error) {
	return 0, f.err
}

// TestSyncWaiterStopsAtItsDeadline: an agent that does not sync (it
// is stopped) makes the wait an error that says how far it got, never a
// verdict.
func TestSyncWaiterStopsAtItsDeadline(t *testing.T) {
	a := &simAgent{syncTime: 10 * time.Millisecond, stopped: true}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	err := newSyncWaiter(a, 5*time.Millisecond, 50*time.Millisecond).wait(ctx, "shop", nil)
	if err == nil || !strings.Contains(err.Error(), "did not apply the cluster's policies") || !strings.Contains(err.Error(), "agent-a: 0 of 3 syncs") {
		t.Fatalf("got %v, want the agent named with its progress", err)
	}
}

// countingAgent's counts go back (its Pod was replaced) and a new Pod
// appears: each starts its own count.
type countingAgent struct {
	reads [](map[string]float64)
	n     int
}

func (c *countingAgent) Syncs(context.Context) (map[string]float64, error) {
	r := c.reads[min(c.n, len(c.reads)-1)]
	c.n++
	return r, nil
}
func (c *countingAgent) AskSync(context.Context, string, *unstructured.Unstructured) error {
	return nil
}
func (c *countingAgent) Exec(context.Context, string, string, []string, io.Reader, io.Writer) (int, error) {
	return 0, errors.New("not here")
}

func TestSyncWaiterCountsEachPodFromItsFirstSight(t *testing.T) {
	a := &countingAgent{reads: []map[string]float64{
		{"a": 10},
		{"a": 12},
		{"a": 1, "b": 50}, // a restarted, b is new: both count from here
		{"a": 3, "b": 52},
		{"a": 4, "b": 53},
		{"a": 4, "b": 53},
	}}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := newSyncWaiter(a, time.Millisecond, time.Second).wait(ctx, "shop", nil); err != nil {
		t.Fatal(err)
	}
	if a.n != 5 {
		t.Errorf("returned after %d reads, want 5 (a at 1+3, b at 50+3)", a.n)
	}
}

func TestMetricValue(t *testing.T) {
	body := []byte("# HELP x\n" + policyAgentSyncs + "_extra 7\n" + policyAgentSyncs + " 42\nother 1\n")
	if v, ok := metricValue(body, policyAgentSyncs); !ok || v != 42 {
		t.Errorf("got %v %v, want 42", v, ok)
	}
	if _, ok := metricValue([]byte("nothing 1\n"), policyAgentSyncs); ok {
		t.Error("found a metric that is not there")
	}
}

// TestReachGatedTriesAfterTheAgentSynced: on a cluster whose agent labctl
// knows, the check's Pod only sleeps, and its tries run in it, once the
// agent has synced, with no first wait and no settle time; what they say
// is the verdict.
func TestReachGatedTriesAfterTheAgentSynced(t *testing.T) {
	running := map[string]any{"containerStatuses": []any{map[string]any{"state": map[string]any{"running": map[string]any{}}}}}
	no := false
	c := lab.Check{Reach: &lab.ReachCheck{From: lab.ReachFrom{Namespace: "shop", Labels: map[string]string{"app": "client"}}, To: "db:5432", Allowed: &no},
		Timeout: lab.Duration{Duration: 5 * time.Second}}
	for _, tt := range []struct {
		code int
		want Status
	}{{0, Fail}, {124, Pass}, {1, Pass}} {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			rc := newReachCluster(t, running)
			a := &simAgent{syncTime: 5 * time.Millisecond, code: tt.code, output: "db: connect: Connection refused\n"}
			rc.agent = a
			expect(t, runCheck(t, Env{Root: "/", Kube: rc, ReachImage: "labctl/addons:test"}, c), tt.want, map[Status]string{Fail: "expected a new Pod in shop labelled app=client not to connect to db:5432; it connected"}[tt.want])
			cmd, _, _ := unstructured.NestedSlice(rc.made[0].Object, "spec", "containers")
			if args := cmd[0].(map[string]any)["command"].([]any); len(args) != 2 || args[0] != "sleep" {
				t.Errorf("the gated Pod runs %v, want it to sleep", args)
			}
			if len(a.execs) != 1 || len(a.execs[0]) != 8 || a.execs[0][5] != "closed" || a.execs[0][6] != "0" || a.execs[0][7] != "0" {
				t.Errorf("tries run as %v, want one run expecting closed with no settle and no wait", a.execs)
			}
			if a.ended < agentSyncsNeeded {
				t.Errorf("tried after %d syncs", a.ended)
			}
			if len(rc.deleted) != 1 {
				t.Errorf("deleted %v, want the Pod deleted", rc.deleted)
			}
		})
	}
}

// timingOutAgent is a simAgent whose first readings fail at once with a
// call's own timeout (the client's bound on one request, or the API server's
// proxy giving up on an agent that does not answer), as when the agent is
// stopped for a while: the caller's context is still alive.
type timingOutAgent struct {
	*simAgent
	fails, execFails int
	err              error
}

func (a *timingOutAgent) Exec(ctx context.Context, ns, pod string, cmd []string, in io.Reader, out io.Writer) (int, error) {
	a.mu.Lock()
	fail := a.execFails > 0
	a.execFails--
	a.mu.Unlock()
	if fail {
		io.WriteString(out, "half an answer")
		return -1, fmt.Errorf("exec in pod %s/%s: %w", ns, pod, a.err)
	}
	return a.simAgent.Exec(ctx, ns, pod, cmd, in, out)
}

func (a *timingOutAgent) Syncs(ctx context.Context) (map[string]float64, error) {
	a.mu.Lock()
	fail := a.fails > 0
	a.fails--
	a.mu.Unlock()
	if fail {
		return nil, fmt.Errorf("reading the network policy agent's syncs on node kind-worker: %w", a.err)
	}
	return a.simAgent.Syncs(ctx)
}

// TestReachOutlastsCallsThatRunOutOfTime: a reading of the agent or of
// the check's Pod that runs out of its own time, well before the check's
// deadline, is no answer: the check reads again and judges the tries.
// (The check said "timed out after 1m30s" after 28 s.)
func TestReachOutlastsCallsThatRunOutOfTime(t *testing.T) {
	running := map[string]any{"containerStatuses": []any{map[string]any{"state": map[string]any{"running": map[string]any{}}}}}
	no := false
	c := lab.Check{Reach: &lab.ReachCheck{From: lab.ReachFrom{Namespace: "shop", Labels: map[string]string{"app": "client"}}, To: "web:80", Allowed: &no},
		Timeout: lab.Duration{Duration: 20 * time.Second}}
	for name, callErr := range map[string]error{
		"the client's bound": &url.Error{Op: "Get", URL: "https://10.96.0.1/api/v1/namespaces/labctl-system/pods/x/proxy/metrics", Err: context.DeadlineExceeded},
		"the proxy's 503":    apierrors.NewServiceUnavailable("error trying to reach service: dial tcp 172.18.0.3:9245: i/o timeout"),
		"the server's 504":   apierrors.NewTimeoutError("request did not complete within the allotted timeout", 0),
	} {
		t.Run(name, func(t *testing.T) {
			rc := newReachCluster(t, running)
			listFails := 2
			rc.client.(*dynamicfake.FakeDynamicClient).PrependReactor("list", "pods", func(act k8stesting.Action) (bool, runtime.Object, error) {
				ofTheCheck := strings.Contains(act.(k8stesting.ListAction).GetListRestrictions().Fields.String(), "labctl-reach-")
				if ofTheCheck && listFails > 0 {
					listFails--
					return true, nil, callErr
				}
				return false, nil, nil
			})
			// Fails the gate's reading, the wait's first ones and the first execs.
			a := &timingOutAgent{simAgent: &simAgent{syncTime: 5 * time.Millisecond, code: 0}, fails: 3, execFails: 2, err: callErr}
			rc.agent = a
			expect(t, runCheck(t, Env{Root: "/", Kube: rc, ReachImage: "labctl/addons:test"}, c), Fail,
				"expected a new Pod in shop labelled app=client not to connect to web:80; it connected")
			if len(a.execs) != 1 {
				t.Errorf("tries answered %d times, want once, after two execs that got no answer", len(a.execs))
			}
		})
	}
}

// TestSyncWaiterNamesTheLastLateReading: a wait that ends at its deadline
// while the readings run out of time says what the last one said.
func TestSyncWaiterNamesTheLastLateReading(t *testing.T) {
	a := &timingOutAgent{simAgent: &simAgent{syncTime: 5 * time.Millisecond}, fails: 1 << 30, err: apierrors.NewServiceUnavailable("error trying to reach service")}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err := newSyncWaiter(a, 5*time.Millisecond, 50*time.Millisecond).wait(ctx, "shop", nil)
	if err == nil || !strings.Contains(err.Error(), "no agent Pod answered; the last reading: ") || !strings.Contains(err.Error(), "error trying to reach service") {
		t.Fatalf("got %v, want the late reading's error named", err)
	}
}
