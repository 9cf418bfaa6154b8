package classroom

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/class"
)

// fakeLab passes the checks whose names are in passing and fails the rest.
type fakeLab struct {
	passing map[string]bool
	broken  error // RunChecks fails with it
	closed  atomic.Bool
	asked   []checks.Round
}

func (l *fakeLab) RunChecks(_ context.Context, r checks.Round) ([]checks.Result, error) {
	cs := r.Checks
	l.asked = append(l.asked, r)
	if l.broken != nil {
		return nil, l.broken
	}
	var rs []checks.Result
	for _, c := range cs {
		st := checks.Fail
		if l.passing[c.Name] {
			st = checks.Pass
		}
		rs = append(rs, checks.Result{Name: c.Name, Status: st, Points: 1})
	}
	return rs, nil
}

func (l *fakeLab) RunScript(context.Context, string, io.Writer, io.Writer) (int, error) {
	return 0, nil
}
func (l *fakeLab) Close() error { l.closed.Store(true); return nil }

// fakeClass is a class of learners with fakeLabs; a learner with a problem
// is not ready.
type fakeClass struct {
	mu       sync.Mutex
	labs     map[string]*fakeLab
	problems map[string]string
	// settling learners' Pods are not ready at the moment: Learners says
	// so, and Connect reaches them (they were ready again within its wait).
	settling map[string]bool
	capacity class.Capacity
	// capacities, when set, are what Capacity answers, one per call.
	capacities []class.Capacity
	failUp     map[string]error
	onUp       func(string)
	running    int
	most       int
	done       []string
	// listed counts the calls of Learners.
	listed int
}

func (c *fakeClass) Learners(context.Context) ([]class.LearnerInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listed++
	var out []class.LearnerInfo
	for name := range c.labs {
		p := c.problems[name]
		if c.settling[name] {
			p = "pod vcp is not ready"
		}
		out = append(out, class.LearnerInfo{Name: name, Namespace: "p-" + name, Ready: p == "", Problem: p, Settling: c.settling[name]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (c *fakeClass) Connect(_ context.Context, name string) (*fakeLab, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.labs[name]
	switch {
	case l == nil:
		return nil, fmt.Errorf("learner %s: %w", name, class.ErrNoLearner)
	case c.problems[name] != "":
		return nil, &class.NotReadyError{Learner: name, Problem: c.problems[name]}
	}
	return l, nil
}

func (c *fakeClass) Capacity(context.Context) (class.Capacity, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.capacities) > 0 {
		c.capacity, c.capacities = c.capacities[0], c.capacities[1:]
	}
	return c.capacity, nil
}

func (c *fakeClass) Up(ctx context.Context, name string) error {
	if c.onUp != nil {
		c.onUp(name)
	}
	c.enter(+1)
	defer c.enter(-1)
	c.mu.Lock()
	c.done = append(c.done, name)
	c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.failUp[name]
}

// enter counts the Ups under way, and the most at once.
func (c *fakeClass) enter(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running += n
	c.most = max(c.most, c.running)
}

func (c *fakeClass) Down(_ context.Context, name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = append(c.done, name)
	return c.failUp[name]
}

func TestForEachBoundsConcurrency(t *testing.T) {
	var running, most, calls atomic.Int32
	var mu sync.Mutex
	seen := map[int]bool{}
	ForEach(20, 3, func(i int) {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		calls.Add(1)
		mu.Lock()
		seen[i] = true
		mu.Unlock()
		running.Add(-1)
	})
	if calls.Load() != 20 || len(seen) != 20 || most.Load() > 3 {
		t.Errorf("%d calls of %d items, at most %d at once (limit 3)", calls.Load(), len(seen), most.Load())
	}
	ForEach(2, 0, func(int) { calls.Add(1) }) // a limit below 1 is 1
	if calls.Load() != 22 {
		t.Errorf("limit 0: %d calls", calls.Load())
	}
}

func TestUpAll(t *testing.T) {
	c := &fakeClass{failUp: map[string]error{"b": errors.New("ImagePullBackOff")}}
	var outcomes []Outcome
	run := UpAll(context.Background(), c, []string{"a", "b", "c", "d"}, 2, func(o Outcome) { outcomes = append(outcomes, o) })
	if run.Done != 3 || !slices.Equal(run.Failed, []string{"b"}) || len(outcomes) != 4 || c.most > 2 {
		t.Errorf("run %+v, %d outcomes, %d at once", run, len(outcomes), c.most)
	}
	if last := outcomes[len(outcomes)-1]; last.Done != 3 {
		t.Errorf("the last outcome counts %d done", last.Done)
	}

	// Once interrupted, no other learner starts; the one under way is
	// neither done nor failed.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c = &fakeClass{onUp: func(name string) {
		if name == "b" {
			cancel()
		}
	}}
	outcomes = nil
	run = UpAll(ctx, c, []string{"a", "b", "c"}, 1, func(o Outcome) { outcomes = append(outcomes, o) })
	if run.Done != 1 || len(run.Failed) != 0 || !slices.Equal(c.done, []string{"a", "b"}) || !outcomes[1].Interrupted {
		t.Errorf("interrupted: run %+v, ran %q, outcomes %+v", run, c.done, outcomes)
	}
}

func TestDownAll(t *testing.T) {
	c := &fakeClass{failUp: map[string]error{"b": errors.New("forbidden")}}
	n := 0
	run := DownAll(context.Background(), c, []string{"a", "b", "c"}, func(Outcome) { n++ })
	if run.Done != 2 || !slices.Equal(run.Failed, []string{"b"}) || n != 3 || len(c.done) != 3 {
		t.Errorf("run %+v, %d outcomes, removed %q", run, n, c.done)
	}
}

func TestCheckRoom(t *testing.T) {
	c := &fakeClass{labs: map[string]*fakeLab{"learner-1": {}}, problems: map[string]string{"learner-1": "Pending"},
		capacity: class.Capacity{Nodes: 2, FreeMemory: 3 << 30, FreeMilliCPU: 8000, LearnerMemory: 1 << 30, LearnerMilliCPU: 500}}
	ctx := context.Background()
	// learner-1 exists (not ready): only the 3 others need room.
	if err := CheckRoom(ctx, c, Numbered(4), nil); err != nil {
		t.Errorf("room for 3, 3 missing: %v", err)
	}
	err := CheckRoom(ctx, c, Numbered(5), nil)
	var room *RoomError
	if !errors.As(err, &room) || room.Missing != 4 {
		t.Fatalf("room for 3, 4 missing: %v", err)
	}
	for _, s := range []string{"room for 3 more learner(s), not the 4 not yet up", "3.0 GiB of memory and 8 CPU are free on 2 node(s)",
		"each learner asks for 1.0 GiB and 0.5 CPU", "Bring up fewer learners"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %q:\n%v", s, err)
		}
	}
	// Nothing missing: capacity is not even read.
	c.capacity = class.Capacity{}
	if err := CheckRoom(ctx, c, []string{"learner-1"}, nil); err != nil {
		t.Errorf("nothing missing: %v", err)
	}

	c.capacity = class.Capacity{Arch: "amd64", OtherArch: map[string]int{"arm64": 3, "s390x": 1}, LearnerMemory: 1 << 30, LearnerMilliCPU: 500}
	err = CheckRoom(ctx, c, Numbered(2), nil)
	for _, s := range []string{"no Ready node that can run this labctl's checker, built for amd64: it has 3 node(s) of arm64, 1 node(s) of s390x",
		"GOARCH=arm64 go build", "or add amd64 nodes"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %q:\n%v", s, err)
		}
	}
	c.capacity = class.Capacity{Nodes: 1, FreeMemory: 512 << 20, FreeMilliCPU: 250, Arch: "amd64", OtherArch: map[string]int{"arm64": 2},
		LearnerMemory: 1 << 30, LearnerMilliCPU: 500}
	err = CheckRoom(ctx, c, Numbered(2), nil)
	for _, s := range []string{"room for 0 more learner(s)", "512 MiB of memory and 0.25 CPU", "Not counted: 2 node(s) of arm64"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %q:\n%v", s, err)
		}
	}
}

// A node just made is not Ready for a minute: CheckRoom waits for it,
// saying so once, and names it when it waited in vain.
func TestCheckRoomWaitsForNodes(t *testing.T) {
	NodeWait, nodePoll = time.Second, time.Millisecond
	t.Cleanup(func() { NodeWait, nodePoll = 2*time.Minute, 2*time.Second })
	notReady := class.Capacity{NotReady: []string{"kind-control-plane"}, LearnerMemory: 1 << 30, LearnerMilliCPU: 500}
	ready := class.Capacity{Nodes: 1, FreeMemory: 8 << 30, FreeMilliCPU: 4000, LearnerMemory: 1 << 30, LearnerMilliCPU: 500}
	c := &fakeClass{capacities: []class.Capacity{notReady, notReady, ready}}
	var told [][]string
	if err := CheckRoom(context.Background(), c, Numbered(2), func(n []string) { told = append(told, n) }); err != nil {
		t.Errorf("a node that becomes Ready: %v", err)
	}
	if len(told) != 1 || !slices.Equal(told[0], []string{"kind-control-plane"}) {
		t.Errorf("told %q, want the node once", told)
	}
	c = &fakeClass{capacity: notReady}
	err := CheckRoom(context.Background(), c, Numbered(2), nil)
	if err == nil || !strings.Contains(err.Error(), "Not Ready yet after 1s: node(s) kind-control-plane") ||
		!strings.Contains(err.Error(), "run class up again") {
		t.Errorf("a node never Ready: %v", err)
	}
}

func TestNumbered(t *testing.T) {
	if got := Numbered(3); !slices.Equal(got, []string{"learner-1", "learner-2", "learner-3"}) {
		t.Errorf("Numbered(3) = %q", got)
	}
}

func TestParseRoster(t *testing.T) {
	good := "# class of June\nalice\n\n  bob  # the tall one\ncarol-2\n"
	names, err := ParseRoster(strings.NewReader(good), "r.txt", "")
	if err != nil || !slices.Equal(names, []string{"alice", "bob", "carol-2"}) {
		t.Errorf("good roster: %q, %v", names, err)
	}
	bad := "alice\nBob\nalice\n-x\n" + strings.Repeat("a", 60) + "\n"
	_, err = ParseRoster(strings.NewReader(bad), "r.txt", "")
	if err == nil {
		t.Fatal("a roster with bad names was accepted")
	}
	for _, s := range []string{"4 problem(s); nothing was created", `r.txt:2: learner name "Bob"`, `r.txt:3: learner "alice" is already on line 1`,
		`r.txt:4: learner name "-x"`, "r.txt:5: ", "longer than 63 characters"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
	if _, err := ParseRoster(strings.NewReader("# nobody\n\n"), "r.txt", ""); err == nil || !strings.Contains(err.Error(), "names no learner") {
		t.Errorf("empty roster: %v", err)
	}
}

// session is a class of alice (both checks pass), bob (one) and carol
// (not ready) on a lab of two steps.
func session(t *testing.T) (*Session[*fakeLab], *fakeClass) {
	t.Helper()
	c := &fakeClass{
		labs: map[string]*fakeLab{
			"alice": {passing: map[string]bool{"one": true, "two": true}},
			"bob":   {passing: map[string]bool{"one": true}},
			"carol": {},
		},
		problems: map[string]string{"carol": "sandbox Pod: Pending"},
	}
	dir := t.TempDir()
	l := &lab.Lab{Metadata: lab.Metadata{Name: "two"}, Steps: []lab.Step{
		{ID: "first", Checks: []lab.Check{{Name: "one", Points: 1}}},
		{ID: "second", Checks: []lab.Check{{Name: "two", Points: 1}}},
	}}
	return &Session[*fakeLab]{Class: c, Prefix: "p-", Lab: l, Digest: "sha256:0", Catalog: msg.New(msg.English),
		Store: func(learner string) (*progress.Store, error) { return progress.NewStore(dir + "/" + learner), nil }}, c
}

func TestExplain(t *testing.T) {
	s, c := session(t)
	ctx := context.Background()
	_, err := s.Connect(ctx, "dave")
	var none *NoLearnerError
	if !errors.As(err, &none) || !errors.Is(err, class.ErrNoLearner) ||
		err.Error() != "the class has no learner dave (namespace p-dave): `labctl class status` lists the learners" {
		t.Errorf("no learner: %v", err)
	}
	_, err = s.Connect(ctx, "carol")
	var notReady *NotReadyError
	if !errors.As(err, &notReady) || !errors.Is(err, provision.ErrNotUp) ||
		err.Error() != "learner carol: sandbox Pod: Pending: the learner's lab is not ready: `labctl class up` repairs it" {
		t.Errorf("not ready: %v", err)
	}
	// The problem is the one Connect found: the class's learners are not
	// listed again to find it (the list may say otherwise by now).
	listed := c.listed
	c.problems["carol"] = "vcp Pod: CrashLoopBackOff"
	err = s.Explain("carol", &class.NotReadyError{Learner: "carol", Problem: "sandbox Pod: Pending"})
	if err.Error() != "learner carol: sandbox Pod: Pending: the learner's lab is not ready: `labctl class up` repairs it" || c.listed != listed {
		t.Errorf("not ready: %v, the learners listed %d more time(s)", err, c.listed-listed)
	}
	// A bare ErrNotUp: the message says what it knows.
	err = Explain("p-", "erin", fmt.Errorf("learner erin: gone: %w", provision.ErrNotUp))
	if err.Error() != "learner erin: the learner's lab is not ready: `labctl class up` repairs it" {
		t.Errorf("not ready, no problem: %v", err)
	}
	other := errors.New("connection refused")
	if err := s.Explain("alice", other); err != other {
		t.Errorf("another error: %v", err)
	}
}

// The status's round gives the audit checks the windows of the learner's
// progress, read from the learner's store.
func TestStatusGivesTheAuditWindowsOfTheLearnersProgress(t *testing.T) {
	s, c := session(t)
	audit := lab.Check{Name: "scaled", Points: 1, Audit: &lab.AuditCheck{AuditSelector: lab.AuditSelector{Resource: "deployments", Subresource: "scale"}}}
	s.Lab.Steps[1].Checks = append(s.Lab.Steps[1].Checks, audit)
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	store, _ := s.Store("bob")
	p := progress.New(s.Lab.Metadata.Name)
	if err := p.StartAt(s.Lab, "second", t0); err != nil {
		t.Fatal(err)
	}
	if err := store.Save(p); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	bob, alice := c.labs["bob"].asked, c.labs["alice"].asked
	if len(bob) != 1 || !reflect.DeepEqual(bob[0].Since, []time.Time{{}, {}, t0}) {
		t.Errorf("bob's round %+v, want the window of step second", bob)
	}
	if len(alice) != 1 || alice[0].Since != nil {
		t.Errorf("alice's round %+v, want the whole log (no progress)", alice)
	}
}

func TestStatus(t *testing.T) {
	s, c := session(t)
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Lab != "two" || st.Prefix != "p-" || len(st.Learners) != 3 || st.Ready() {
		t.Fatalf("status %+v", st)
	}
	a, b, cl := st.Learners[0], st.Learners[1], st.Learners[2]
	if a.Name != "alice" || a.Step != "" || *a.Score != 2 || *a.MaxScore != 2 || a.Steps != 2 {
		t.Errorf("alice %+v", a)
	}
	if b.Step != "second" || b.StepNumber != 2 || *b.Score != 1 {
		t.Errorf("bob %+v", b)
	}
	if cl.Ready || cl.Problem != "sandbox Pod: Pending" || cl.Score != nil {
		t.Errorf("carol %+v", cl)
	}
	if !c.labs["alice"].closed.Load() {
		t.Error("alice's lab was not closed")
	}
	var out strings.Builder
	if err := WriteStatus(&out, st); err != nil {
		t.Fatal(err)
	}
	want := "LEARNER  STEP        SCORE  STATE\n" +
		"alice    all passed  2/2    ready\n" +
		"bob      2/2 second  1/2    ready\n" +
		"carol    -           -      sandbox Pod: Pending\n"
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
	c.labs["bob"].broken = errors.New("exec: EOF")
	delete(c.labs, "carol")
	st, _ = s.Status(context.Background())
	if !st.Ready() || !strings.HasPrefix(st.Learners[1].Problem, "the checks could not run: ") {
		t.Errorf("bob's checks fail to run: %+v", st.Learners[1])
	}
	out.Reset()
	if err := WriteStatus(&out, &Status{}); err != nil || out.Len() != 0 || (&Status{}).Ready() {
		t.Errorf("an empty class: %q, %v", out.String(), err)
	}
}

func TestGrade(t *testing.T) {
	s, c := session(t)
	rep, err := s.Grade(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lab != "two" || len(rep.Learners) != 3 {
		t.Fatalf("report %+v", rep)
	}
	a, b, cl := rep.Learners[0], rep.Learners[1], rep.Learners[2]
	if a.Report == nil || !a.Report.Passed || b.Report == nil || b.Report.Score != 1 || cl.Report != nil ||
		cl.Error != "the learner's lab is not ready: sandbox Pod: Pending" {
		t.Errorf("grades: %+v / %+v / %+v", a, b, cl)
	}
	if rep.Verdict() != checks.Errored || rep.Total() != "3 learner(s): 1 passed, 1 failed, 1 could not be graded" {
		t.Errorf("verdict %v, total %q", rep.Verdict(), rep.Total())
	}
	// Each grade is in the learner's history.
	store, _ := s.Store("alice")
	p, err := store.Load("two")
	if err != nil || len(p.Grades) != 1 {
		t.Errorf("alice's history: %+v, %v", p, err)
	}

	for name := range c.labs {
		delete(c.labs, name)
	}
	var empty *EmptyError
	if _, err := s.Grade(context.Background()); !errors.As(err, &empty) ||
		err.Error() != "the class has no learner on this cluster (prefix p-): `labctl class up` makes them" {
		t.Errorf("an empty class: %v", err)
	}
}

// A learner whose running Pods are not ready at the moment is still
// connected to (Connect waits a little for them), then graded and shown
// ready; one whose Pods do not run is not.
func TestGradeAndStatusConnectToASettlingLearner(t *testing.T) {
	s, c := session(t)
	c.settling = map[string]bool{"alice": true}
	st, err := s.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if a := st.Learners[0]; !a.Ready || a.Problem != "" || a.Score == nil || *a.Score != 2 {
		t.Errorf("alice, settling: %+v", a)
	}
	if cl := st.Learners[2]; cl.Ready || cl.Score != nil {
		t.Errorf("carol, pending: %+v", cl)
	}
	rep, err := s.Grade(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if a := rep.Learners[0]; a.Report == nil || !a.Report.Passed || a.Error != "" {
		t.Errorf("alice's grade, settling: %+v", a)
	}
}
