package checks

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

func TestRunKeepsOrderAndFields(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "/a.txt", "a", 0o644)
	cs := []lab.Check{
		{Name: "one", Description: "a exists", File: &lab.FileCheck{Path: "/a.txt"}, Points: 3},
		{Name: "two", File: &lab.FileCheck{Path: "/b.txt"}, Optional: true},
		{Name: "three"},
		{Name: "four", File: &lab.FileCheck{Path: "/a.txt"}, Git: &lab.GitCheck{Repo: "/"}},
		{Name: "five", File: &lab.FileCheck{Path: "a.txt"}},
		{Name: "six", Service: &lab.ServiceCheck{Node: "control-plane", Unit: "kubelet.service"}},
	}
	rs := Run(context.Background(), Env{Root: root}, cs)
	want := []Result{
		{Name: "one", Description: "a exists", Status: Pass, Points: 3},
		{Name: "two", Status: Fail, Message: "expected /b.txt to exist, found nothing there", Points: 1, Optional: true},
		{Name: "three", Status: Error, Message: `check "three" sets 0 of file, git, kube, access, permissions, reach, matrix, command, audit and service; set exactly one`, Points: 1},
		{Name: "four", Status: Error, Message: `check "four" sets 2 of file, git, kube, access, permissions, reach, matrix, command, audit and service; set exactly one`, Points: 1},
		{Name: "five", Status: Error, Message: `path "a.txt" is not absolute`, Points: 1},
		{Name: "six", Status: Error, Message: `check "six" looks at a service of node control-plane, which only labctl judges, from the host; this checker cannot`, Points: 1},
	}
	if len(rs) != len(want) {
		t.Fatalf("got %d results, want %d", len(rs), len(want))
	}
	for i := range want {
		rs[i].Duration = 0
		if !reflect.DeepEqual(rs[i], want[i]) {
			t.Errorf("result %d:\n got %+v\nwant %+v", i, rs[i], want[i])
		}
	}
	rel := Run(context.Background(), Env{Root: "relative"}, cs[:1])
	expect(t, rel[0], Error, `checker root "relative" is not an absolute path`)
}

// gate is an ObjectReader whose reads block until limit of them are in
// flight at once, recording the most it saw.
type gate struct {
	mu      sync.Mutex
	active  int
	max     int
	limit   int
	release chan struct{}
	once    sync.Once
}

func (g *gate) Get(ctx context.Context, _, _, _, _ string) (map[string]any, error) {
	g.mu.Lock()
	g.active++
	if g.active > g.max {
		g.max = g.active
	}
	if g.active == g.limit {
		g.once.Do(func() { close(g.release) })
	}
	g.mu.Unlock()
	select {
	case <-g.release:
	case <-ctx.Done():
	}
	g.mu.Lock()
	g.active--
	g.mu.Unlock()
	return map[string]any{"metadata": map[string]any{"name": "x"}}, ctx.Err()
}

func TestRunBoundsConcurrency(t *testing.T) {
	g := &gate{limit: maxConcurrent, release: make(chan struct{})}
	cs := make([]lab.Check, 3*maxConcurrent)
	for i := range cs {
		cs[i] = lab.Check{Name: "k", Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "x"}}
	}
	rs := Run(context.Background(), Env{Root: "/", Kube: g}, cs)
	for i, r := range rs {
		if r.Status != Pass {
			t.Fatalf("check %d: %s %s", i, r.Status, r.Message)
		}
	}
	if g.max != maxConcurrent {
		t.Errorf("at most %d checks ran at once, want exactly %d", g.max, maxConcurrent)
	}
}

// stuck never answers and ignores its context, like a call without a
// deadline.
type stuck struct{ unblock chan struct{} }

func (s stuck) Get(context.Context, string, string, string, string) (map[string]any, error) {
	<-s.unblock
	return nil, nil
}

func TestRunStopsWaitingAtTheDeadline(t *testing.T) {
	s := stuck{unblock: make(chan struct{})}
	defer close(s.unblock)
	cs := []lab.Check{
		{Name: "stuck", Timeout: lab.Duration{Duration: 100 * time.Millisecond}, Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "x"}},
		{Name: "fine", File: &lab.FileCheck{Path: "/", Type: "dir"}},
	}
	done := make(chan []Result, 1)
	go func() { done <- Run(context.Background(), Env{Root: "/", Kube: s}, cs) }()
	var rs []Result
	select {
	case rs = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Run waited for a check that ignores its deadline")
	}
	expect(t, rs[0], Error, "timed out after 100ms")
	expect(t, rs[1], Pass, "")
}

// slowCall's reads run out of their own bound at once, long before the
// check's deadline, as a request whose client gives up does.
type slowCall struct{}

func (slowCall) Get(context.Context, string, string, string, string) (map[string]any, error) {
	return nil, fmt.Errorf(`Get "https://10.96.0.1/api/v1/namespaces/x": %w`, context.DeadlineExceeded)
}

// TestRunSaysTimedOutOnlyAtTheChecksDeadline: a call that ran out of its
// own time is the call's error, not "timed out after" the check's timeout,
// which had not passed.
func TestRunSaysTimedOutOnlyAtTheChecksDeadline(t *testing.T) {
	rs := Run(context.Background(), Env{Root: "/", Kube: slowCall{}},
		[]lab.Check{{Name: "slow", Timeout: lab.Duration{Duration: time.Minute}, Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Namespace", Name: "x"}}})
	expect(t, rs[0], Error, `a request got no answer in time: Get "https://10.96.0.1/api/v1/namespaces/x": context deadline exceeded`)
}

func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs := Run(ctx, Env{Root: "/"}, []lab.Check{{Name: "a", File: &lab.FileCheck{Path: "/"}}})
	if rs[0].Status != Error {
		t.Errorf("a check under a canceled context: got %s %q, want error", rs[0].Status, rs[0].Message)
	}
}

func TestResultJSON(t *testing.T) {
	r := Result{Name: "n", Status: Fail, Message: "m", Duration: 1500 * time.Microsecond, Points: 2, Optional: true}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"n","status":"fail","message":"m","durationMs":1,"points":2,"optional":true}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Duration != time.Millisecond || back.Name != "n" || back.Status != Fail {
		t.Errorf("round trip gave %+v", back)
	}
}
