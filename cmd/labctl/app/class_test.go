package app

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/provision/class"
	"github.com/labctl/labctl/usecase/classroom"
)

// fakeClass is a class cluster as the class commands' unit tests set it:
// learners whose labs are fakeLabs, made ready by Up.
type fakeClass struct {
	mu       sync.Mutex
	cfg      class.Config
	learners map[string]*fakeLearner
	// capacity is what Capacity reports; nil is room for 100 learners.
	capacity *class.Capacity
	// upErr fails Up of a learner; onUp runs at the start of every Up.
	upErr map[string]error
	onUp  func(name string)
	// running and most count the Ups under way, and the most at once.
	running, most int
	calls         []string
	// isolation is what CheckIsolation answers, caveats what Caveats does.
	isolation error
	caveats   []string
	// outdated are the learners Outdated names (those up among them).
	outdated []string
	// renewErr fails Renew of a learner.
	renewErr map[string]error
	// invited is the sandbox the last invite opened (fakeEnv.OpenInvite).
	invited *fakeInvited
}

type fakeLearner struct {
	lab     *fakeLab
	problem string // "" when ready
}

func (c *fakeClass) add(name string, l *fakeLab) {
	if c.learners == nil {
		c.learners = map[string]*fakeLearner{}
	}
	c.learners[name] = &fakeLearner{lab: l}
}

func (c *fakeClass) open(cfg class.Config) (classCluster, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cfg = cfg
	return c, nil
}

func (c *fakeClass) called(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, s)
}

func (c *fakeClass) Learners(context.Context) ([]class.LearnerInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []class.LearnerInfo
	for name, l := range c.learners {
		out = append(out, class.LearnerInfo{Name: name, Namespace: c.cfg.Prefix + name, Ready: l.problem == "", Problem: l.problem})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (c *fakeClass) Up(ctx context.Context, name string) error {
	if c.onUp != nil {
		c.onUp(name)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	c.running++
	c.most = max(c.most, c.running)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running--
		c.mu.Unlock()
	}()
	c.called("up " + name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.upErr[name]; err != nil {
		return err
	}
	if l := c.learners[name]; l != nil {
		l.problem = ""
		return nil
	}
	c.add(name, newFakeLab(c.cfg.Lab))
	return nil
}

func (c *fakeClass) Connect(_ context.Context, name string) (liveLab, error) {
	c.called("connect " + name)
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.learners[name]
	switch {
	case l == nil:
		return nil, fmt.Errorf("learner %s: %w", name, class.ErrNoLearner)
	case l.problem != "":
		return nil, &class.NotReadyError{Learner: name, Problem: l.problem}
	}
	return l.lab, nil
}

func (c *fakeClass) Down(_ context.Context, name string) error {
	c.called("down " + name)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.learners, name)
	return nil
}

func (c *fakeClass) Capacity(context.Context) (class.Capacity, error) {
	if c.capacity != nil {
		return *c.capacity, nil
	}
	return class.Capacity{Nodes: 1, FreeMemory: 100 << 30, FreeMilliCPU: 100_000, LearnerMemory: 1 << 30, LearnerMilliCPU: 1000}, nil
}

func (c *fakeClass) Invite(_ context.Context, name string, ttl time.Duration) ([]byte, time.Time, error) {
	c.called(fmt.Sprintf("invite %s %v", name, ttl))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.learners[name] == nil {
		return nil, time.Time{}, fmt.Errorf("learner %s: %w", name, class.ErrNoLearner)
	}
	return []byte("apiVersion: v1\nkind: Config\ncurrent-context: labctl:two-steps:" + name + "\n"), time.Date(2026, 12, 3, 22, 0, 0, 0, time.Local), nil
}

func (c *fakeClass) CheckIsolation(_ context.Context, name string) error {
	c.called("isolation " + name)
	return c.isolation
}

func (c *fakeClass) Caveats(context.Context) []string { return c.caveats }

func (c *fakeClass) Outdated(_ context.Context, names []string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(c.outdated, n) {
			out = append(out, n)
		}
	}
	return out
}

// Renew makes a learner's Pods current: Outdated names it no more.
func (c *fakeClass) Renew(_ context.Context, name string) error {
	c.called("renew " + name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.renewErr[name]; err != nil {
		return err
	}
	c.outdated = slices.DeleteFunc(slices.Clone(c.outdated), func(n string) bool { return n == name })
	return nil
}

func (c *fakeClass) RevokeInvites(_ context.Context, name string) error {
	c.called("revoke " + name)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.learners[name] == nil {
		return fmt.Errorf("learner %s: %w", name, class.ErrNoLearner)
	}
	return nil
}

func (c *fakeClass) Close() error { return nil }

func (c *fakeClass) names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var names []string
	for n := range c.learners {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// classSteps is the two-steps lab with cluster.workloads: declare, which a
// class can run.
const classSteps = "testdata/two-steps-class/lab.yaml"

// classOf is a fake class of the two-steps lab with a learner per name,
// each ready with the steps before step solved.
func classOf(t *testing.T, step string, names ...string) *fakeClass {
	c := &fakeClass{}
	for _, n := range names {
		c.add(n, solved(t, classSteps, step))
	}
	return c
}

func TestClassUpUsage(t *testing.T) {
	isolate(t)
	roster := filepath.Join(t.TempDir(), "roster.txt")
	if err := os.WriteFile(roster, []byte("alice\nBad_Name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want want
	}{
		{[]string{"class", "up"}, usage("say who the learners are: --learners N or --roster FILE", "labctl class up")},
		{[]string{"class", "up", "--learners", "2", "--roster", roster}, usage("--learners and --roster exclude each other", "labctl class up")},
		{[]string{"class", "up", "--learners", "0"}, usage("a class has at least 1 learner", "labctl class up")},
		{[]string{"class", "up", "--learners", "2", "--parallel", "0"}, usage("bring up at least 1 learner at once", "labctl class up")},
		{[]string{"class", "down"}, usage("name the learners to remove, or give --all", "labctl class down")},
		{[]string{"class", "down", "--all", "alice"}, usage("not both", "labctl class down")},
		{[]string{"class", "shell"}, usage("accepts 1 arg(s), received 0", "labctl class shell")},
		{[]string{"class", "bogus"}, usage(`unknown command "bogus" for "labctl class"`, "labctl class")},
		{[]string{"class", "grade", "-o", "yaml"}, usage(`unknown format "yaml": use text, json or junit`, "labctl class grade")},
		{[]string{"class", "up", "--roster", roster}, want{code: 2, noOut: true, noCalls: true,
			errOut: []string{"the roster has 1 problem(s); nothing was created", roster + `:2: learner name "Bad_Name"`}}},
		{[]string{"class", "reset", "Nope"}, want{code: 2, noOut: true, noCalls: true, errOut: []string{`learner name "Nope"`}}},
	} {
		env := &fakeEnv{}
		code, out, errOut := runFake(t, env, append([]string{"--lab", classSteps}, tc.args...)...)
		tc.want.check(t, env, tc.args, code, out, errOut)
	}
}

// A roster's names leave room for the class's prefix however it is set:
// the flag, or LABCTL_CLASS_PREFIX as every other class command reads it.
func TestClassUpRosterUsesTheConfiguredPrefix(t *testing.T) {
	isolate(t)
	name := strings.Repeat("a", 50) // 57 characters under labctl-, 65 under this prefix
	roster := filepath.Join(t.TempDir(), "roster.txt")
	if err := os.WriteFile(roster, []byte(name+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantErr := `with the prefix "instructor-42-" the namespace is longer than 63 characters`
	t.Setenv("LABCTL_CLASS_PREFIX", "instructor-42-")
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "up", "--roster", roster)
	want{code: 2, noOut: true, noCalls: true, errOut: []string{wantErr}}.check(t, env, nil, code, out, errOut)
	t.Setenv("LABCTL_CLASS_PREFIX", "")
	env = &fakeEnv{}
	code, out, errOut = runFake(t, env, "--lab", classSteps, "class", "up", "--roster", roster, "--prefix", "instructor-42-")
	want{code: 2, noOut: true, noCalls: true, errOut: []string{wantErr}}.check(t, env, nil, code, out, errOut)
}

func TestClassUpRefusesALabWhosePodsMustRun(t *testing.T) {
	isolate(t)
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "--lab", twoSteps, "class", "up", "--learners", "2")
	want{code: 2, noOut: true, noCalls: true, errOut: []string{"lab two-steps cannot run as a class: its Pods must run"}}.
		check(t, env, nil, code, out, errOut)
}

func TestClassUp(t *testing.T) {
	isolate(t)
	env := &fakeEnv{class: &fakeClass{}}
	code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "3")
	want{code: 0, noOut: true, errOut: []string{"Bringing up 3 learner(s) of lab two-steps, 4 at a time", "✓ learner-1 ready",
		"✓ learner-3 ready", "Every learner is ready"}}.check(t, env, nil, code, out, errOut)
	if got := env.class.names(); !slices.Equal(got, []string{"learner-1", "learner-2", "learner-3"}) {
		t.Errorf("learners %q", got)
	}
	if env.class.cfg.Prefix != "labctl-" || env.class.cfg.Lab.Metadata.Name != "two-steps" {
		t.Errorf("class opened with %+v", env.class.cfg)
	}
	if strings.Contains(errOut, "--learner-nodes") {
		t.Errorf("a note of the learner nodes without the flag:\n%s", errOut)
	}
	if !slices.Contains(env.class.calls, "isolation learner-1") || strings.Contains(errOut, "WARNING") ||
		!strings.Contains(errOut, "✓ The learners are walled off from each other") {
		t.Errorf("the walls were not tried, or warned of: calls %q\n%s", env.class.calls, errOut)
	}
}

const nodeAdmin = "../../../labs/node-admin/lab.yaml"

// A lab that makes the learner root on their node is refused before
// anything is touched, and the message names what would be needed: the
// consent by name (--node-access-on with --learner-nodes); with both,
// node-admin is refused still, since its checks read the node's files from
// outside it, and the message names the check.
func TestClassUpNodeAccessConsent(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{nil, 2, "lab node-admin cannot run as a class: it makes the learner root on the cluster's nodes (cluster.nodeAccess)"},
		{nil, 2, "labctl class up --learner-nodes --node-access-on KEY=VALUE"},
		{[]string{"--learner-nodes"}, 2, "--node-access-on KEY=VALUE"},
		{[]string{"--node-access-on", "labctl.dev/node-access=yes"}, 2, "--node-access-on needs --learner-nodes"},
		{[]string{"--learner-nodes", "--node-access-on", "yes"}, 2, `--node-access-on "yes": write KEY=VALUE`},
		{[]string{"--learner-nodes", "--node-access-on", "labctl.dev/node-access=yes"}, 2, "its check manifest-on-node reads the file"},
	} {
		env := &fakeEnv{}
		args := append([]string{"--lab", nodeAdmin, "class", "up", "--learners", "1"}, tc.args...)
		code, out, errOut := runFake(t, env, args...)
		want{code: tc.code, noOut: true, noCalls: true, errOut: []string{tc.says}}.check(t, env, args, code, out, errOut)
	}
}

// A node-access lab whose checks judge through the API server is brought
// up with the consent, and its learners' class keeps the label named.
func TestClassUpNodeAccessLabWithConsent(t *testing.T) {
	isolate(t)
	env := &fakeEnv{class: &fakeClass{}}
	code, _, errOut := runFake(t, env, "--lab", "../../../provision/class/testdata/class-node/lab.yaml", "class", "up", "--learners", "1",
		"--learner-nodes", "--node-access-on", "labctl.dev/node-access=yes")
	if code != 0 || env.class.cfg.NodeAccessOn.String() != "labctl.dev/node-access=yes" || !env.class.cfg.LearnerNodes {
		t.Errorf("exit %d, node access on %v:\n%s", code, env.class.cfg.NodeAccessOn, errOut)
	}
}

// --node-access-on with a lab that does not make its learners root on a
// node consents to nothing: class up says so and places them as before.
func TestClassUpSaysNodeAccessOnChangesNothing(t *testing.T) {
	isolate(t)
	env := &fakeEnv{class: &fakeClass{}}
	code, _, errOut := runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "1", "--learner-nodes", "--node-access-on", "pool=root")
	if code != 0 || !strings.Contains(errOut, "lab two-steps does not make its learners root on their node (cluster.nodeAccess), so --node-access-on changes nothing") ||
		!env.class.cfg.NodeAccessOn.IsZero() {
		t.Errorf("exit %d, node access on %v:\n%s", code, env.class.cfg.NodeAccessOn, errOut)
	}
}

// --learner-nodes with a lab that declares its workloads gives no node,
// and class up says so rather than leave the instructor to think it did.
func TestClassUpSaysADeclareLabNeedsNoNode(t *testing.T) {
	isolate(t)
	env := &fakeEnv{class: &fakeClass{}}
	code, _, errOut := runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "1", "--learner-nodes")
	if code != 0 || !strings.Contains(errOut, "lab two-steps declares its workloads (workloads: declare), so its learners need no node: --learner-nodes changes nothing") ||
		env.class.cfg.LearnerNodes {
		t.Errorf("exit %d, learner nodes %t:\n%s", code, env.class.cfg.LearnerNodes, errOut)
	}
}

// On a class cluster that ignores NetworkPolicy, class up says so loudly,
// trying the wall of a learner that is up.
func TestClassUpWarnsOfAnOpenNetwork(t *testing.T) {
	isolate(t)
	c := &fakeClass{isolation: fmt.Errorf("%w: from the Pods of learner-2 labctl reached …", class.ErrOpenNetwork),
		upErr: map[string]error{"learner-1": errors.New("no room")}, caveats: []string{"StorageClass standard (rancher.io/local-path) does not enforce a claim's size"}}
	env := &fakeEnv{class: c}
	code, _, errOut := runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "2")
	if code != 2 || !strings.Contains(errOut, "⚠ WARNING: the learners are not walled off from each other. the class cluster does not enforce NetworkPolicy") ||
		!strings.Contains(errOut, "⚠ Not enforced by the class cluster: StorageClass standard (rancher.io/local-path) does not enforce a claim's size.") ||
		!slices.Contains(c.calls, "isolation learner-2") {
		t.Errorf("exit %d, calls %q\n%s", code, c.calls, errOut)
	}
}

// Learners whose Pods run from an earlier labctl's settings are named, with
// how to bring each to these; a learner that failed to come up is not.
func TestClassUpNamesLearnersOnOtherSettings(t *testing.T) {
	isolate(t)
	c := &fakeClass{outdated: []string{"learner-1", "learner-3"}, upErr: map[string]error{"learner-3": errors.New("no room")}}
	env := &fakeEnv{class: c}
	code, _, errOut := runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "3")
	if code != 2 || !strings.Contains(errOut, "Note: learner-1 run(s) Pods made from other settings") ||
		!strings.Contains(errOut, "with --renew-outdated") || strings.Contains(errOut, "learner-3 run(s)") || slices.ContainsFunc(c.calls, func(s string) bool { return strings.HasPrefix(s, "renew") }) {
		t.Errorf("exit %d, calls %q\n%s", code, c.calls, errOut)
	}

	// --renew-outdated renews each learner on other settings before it
	// comes up; one whose renewal fails is named like any learner that
	// did not come up, and the others come up.
	delete(c.upErr, "learner-3")
	c.renewErr = map[string]error{"learner-3": errors.New("waited 2m0s for pod labctl-learner-3/vcp to go")}
	c.calls = nil
	code, _, errOut = runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "3", "--renew-outdated")
	if code != 2 || !strings.Contains(errOut, "Making anew the Pods of learner-1, learner-3, which run from other settings") ||
		!strings.Contains(errOut, "✗ learner-3: waited 2m0s for pod labctl-learner-3/vcp to go") ||
		!slices.Contains(c.calls, "renew learner-1") || slices.Contains(c.calls, "renew learner-2") || !slices.Contains(c.calls, "up learner-1") ||
		!strings.Contains(errOut, "retry them with: labctl --lab "+classSteps+" class up --learners 3 --renew-outdated\n") || strings.Contains(errOut, "Note:") {
		t.Errorf("--renew-outdated: exit %d, calls %q\n%s", code, c.calls, errOut)
	}
	delete(c.renewErr, "learner-3")
	if code, _, errOut = runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "3", "--renew-outdated"); code != 0 ||
		!strings.Contains(errOut, "Making anew the Pods of learner-3,") || strings.Contains(errOut, "Note:") {
		t.Errorf("exit %d, learner-3 renewed:\n%s", code, errOut)
	}
	if code, _, errOut = runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "3", "--renew-outdated"); code != 0 || strings.Contains(errOut, "other settings") {
		t.Errorf("exit %d, no learner on other settings:\n%s", code, errOut)
	}
}

// One learner failing stops no other; the command says which failed and
// how to retry, and exits 2. At most --parallel learners come up at once.
func TestClassUpOneLearnerFails(t *testing.T) {
	isolate(t)
	c := &fakeClass{upErr: map[string]error{"learner-2": errors.New("sandbox Pod: ImagePullBackOff")}}
	env := &fakeEnv{class: c}
	code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "6", "--parallel", "2")
	want{code: 2, noOut: true, errOut: []string{"✗ learner-2: sandbox Pod: ImagePullBackOff", "1 of 6 learner(s) are not ready: learner-2",
		"retry them with: labctl --lab " + classSteps + " class up --learners 6 --parallel 2"}}.check(t, env, nil, code, out, errOut)
	if got := c.names(); len(got) != 5 || slices.Contains(got, "learner-2") {
		t.Errorf("learners up: %q", got)
	}
	if c.most > 2 {
		t.Errorf("%d learners came up at once with --parallel 2", c.most)
	}
	// Running it again retries: the learner that failed comes up.
	delete(c.upErr, "learner-2")
	code, _, errOut = runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "6", "--parallel", "2")
	if code != 0 || len(c.names()) != 6 {
		t.Errorf("retry: exit %d, learners %q\n%s", code, c.names(), errOut)
	}
}

func TestClassUpInterrupted(t *testing.T) {
	isolate(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &fakeClass{onUp: func(name string) {
		if name == "learner-2" {
			cancel()
		}
	}}
	var out, errOut bytes.Buffer
	code := run(ctx, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut},
		[]string{"--lab", classSteps, "class", "up", "--learners", "5", "--parallel", "1"}, &fakeEnv{class: c})
	if code != 130 || !strings.Contains(errOut.String(), "class up was interrupted with 1 of 5 learner(s) ready; they stay up") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut.String())
	}
	if got := c.names(); !slices.Equal(got, []string{"learner-1"}) {
		t.Errorf("learners %q: the one up before Ctrl-C must stay, no other may start", got)
	}
}

func TestClassUpRefusesWithoutRoom(t *testing.T) {
	isolate(t)
	room := class.Capacity{Nodes: 2, FreeMemory: 3 << 30, FreeMilliCPU: 8000, LearnerMemory: 1 << 30, LearnerMilliCPU: 500}
	c := classOf(t, "hello", "learner-1")
	c.capacity = &room
	env := &fakeEnv{class: c}
	code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "5")
	want{code: 2, noOut: true, errOut: []string{"room for 3 more learner(s), not the 4 not yet up",
		"3.0 GiB of memory and 8 CPU are free on 2 node(s)", "each learner asks for 1.0 GiB and 0.5 CPU",
		"Bring up fewer learners"}}.check(t, env, nil, code, out, errOut)
	if len(c.calls) != 0 {
		t.Errorf("a refused class up touched learners: %v", c.calls)
	}
	// The learners already up need no room.
	code, _, errOut = runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "4")
	if code != 0 {
		t.Errorf("up of 3 more with room for 3: exit %d\n%s", code, errOut)
	}
}

// A cluster whose nodes cannot run this labctl's checker is refused with
// what to do; nodes of another architecture beside usable ones are named.
func TestClassUpRefusesNodesOfAnotherArch(t *testing.T) {
	isolate(t)
	none := class.Capacity{Arch: "amd64", OtherArch: map[string]int{"arm64": 3}, LearnerMemory: 1 << 30, LearnerMilliCPU: 500}
	c := classOf(t, "hello")
	c.capacity = &none
	env := &fakeEnv{class: c}
	code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "1")
	want{code: 2, noOut: true, errOut: []string{"no Ready node that can run this labctl's checker, built for amd64: it has 3 node(s) of arm64",
		"LABCTL_CHECKER_BINARY", "GOARCH=arm64 go build"}}.check(t, env, nil, code, out, errOut)
	if len(c.calls) != 0 {
		t.Errorf("a refused class up touched learners: %v", c.calls)
	}
	some := class.Capacity{Nodes: 1, FreeMemory: 1 << 30, FreeMilliCPU: 500, Arch: "amd64", OtherArch: map[string]int{"arm64": 2},
		LearnerMemory: 1 << 30, LearnerMilliCPU: 500}
	c.capacity = &some
	code, out, errOut = runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "2")
	want{code: 2, noOut: true, errOut: []string{"room for 1 more learner(s)", "Not counted: 2 node(s) of arm64"}}.check(t, env, nil, code, out, errOut)
}

func TestClassStatus(t *testing.T) {
	isolate(t)
	c := classOf(t, "goodbye", "alice", "bob")
	c.add("carol", solved(t, classSteps, "hello"))
	c.learners["carol"].problem = "sandbox Pod: Pending (Insufficient memory)"
	env := &fakeEnv{class: c}
	code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "status")
	want{code: 3, out: []string{"LEARNER", "alice    2/2 goodbye  1/2    ready\n", "carol    -            -      sandbox Pod: Pending (Insufficient memory)\n"}}.
		check(t, env, nil, code, out, errOut)
	if slices.Contains(c.calls, "connect carol") {
		t.Errorf("status connected to a learner that is not ready: %v", c.calls)
	}

	delete(c.learners, "carol")
	code, out, _ = runFake(t, env, "--lab", classSteps, "class", "status", "-o", "json")
	var s classroom.Status
	decode(t, out, &s)
	if code != 0 || s.Lab != "two-steps" || s.Prefix != "labctl-" || len(s.Learners) != 2 {
		t.Fatalf("status -o json: exit %d, %+v", code, s)
	}
	a := s.Learners[0]
	if a.Name != "alice" || a.Namespace != "labctl-alice" || !a.Ready || a.Step != "goodbye" || a.StepNumber != 2 || a.Steps != 2 ||
		a.Score == nil || *a.Score != 1 || *a.MaxScore != 2 {
		t.Errorf("alice: %+v", a)
	}
	// Status records nothing.
	if _, err := os.Stat(filepath.Join(os.Getenv("LABCTL_STATE_DIR"), "two-steps", "class")); err == nil {
		t.Error("class status wrote state")
	}

	code, out, errOut = runFake(t, &fakeEnv{class: &fakeClass{}}, "--lab", classSteps, "class", "status")
	want{code: 3, noOut: true, errOut: []string{"the class has no learner on this cluster (prefix labctl-)"}}.check(t, nil, nil, code, out, errOut)
}

func TestClassGrade(t *testing.T) {
	isolate(t)
	c := classOf(t, "hello", "alice", "bob")
	c.learners["alice"].lab.ran["echo hello > /root/hello.txt"] = true
	c.learners["alice"].lab.ran["echo bye > /root/bye.txt"] = true
	env := &fakeEnv{class: c}

	code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "grade")
	want{code: 1, out: []string{"LEARNER  SCORE  CHECKS  FIRST FAILING\n", "alice    2/2    2/2     -\n", "bob      0/2    0/2     hello: hello-file\n",
		"2 learner(s): 1 passed, 1 failed\n"}}.check(t, env, nil, code, out, errOut)
	// Each grade is in the learner's own history.
	for _, name := range []string{"alice", "bob"} {
		if _, err := os.Stat(filepath.Join(os.Getenv("LABCTL_STATE_DIR"), "two-steps", "class", name, "progress.json")); err != nil {
			t.Errorf("%s's grade was not recorded: %v", name, err)
		}
	}

	code, out, _ = runFake(t, env, "--lab", classSteps, "class", "grade", "-o", "json")
	var rep struct {
		Lab      string `json:"lab"`
		Learners []struct {
			Name   string         `json:"name"`
			Report *report.Report `json:"report"`
			Error  string         `json:"error"`
		} `json:"learners"`
	}
	decode(t, out, &rep)
	if code != 1 || rep.Lab != "two-steps" || len(rep.Learners) != 2 || rep.Learners[0].Name != "alice" || !rep.Learners[0].Report.Passed ||
		rep.Learners[1].Report.Score != 0 || rep.Learners[1].Report.MaxScore != 2 || rep.Learners[1].Error != "" {
		t.Errorf("class grade -o json: exit %d, %+v", code, rep)
	}

	// A learner who cannot be graded makes it exit 2, and says so in each format.
	c.add("carol", solved(t, classSteps, "hello"))
	c.learners["carol"].problem = "control plane Pod: CrashLoopBackOff"
	file := filepath.Join(t.TempDir(), "class.xml")
	code, out, errOut = runFake(t, env, "--lab", classSteps, "class", "grade", "-o", "junit", "--output-file", file)
	want{code: 2, noOut: true, errOut: []string{file, "3 learner(s): 1 passed, 1 failed, 1 could not be graded"}}.check(t, env, nil, code, out, errOut)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc report.JUnitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if len(doc.Suites) != 3 || doc.Tests != 5 || doc.Failures != 2 || doc.Errors != 1 {
		t.Fatalf("junit: %d suites, %d tests, %d failures, %d errors\n%s", len(doc.Suites), doc.Tests, doc.Failures, doc.Errors, b)
	}
	for i, name := range []string{"alice", "bob", "carol"} {
		if s := doc.Suites[i]; s.Name != name {
			t.Errorf("suite %d is %q, want %q", i, s.Name, name)
		}
	}
	if cs := doc.Suites[1].Cases; len(cs) != 2 || cs[0].Classname != "bob.hello" || cs[0].Failure == nil {
		t.Errorf("bob's cases: %+v", cs)
	}
	if e := doc.Suites[2].Cases[0].Error; e == nil || !strings.Contains(e.Message, "CrashLoopBackOff") {
		t.Errorf("carol's suite: %+v", doc.Suites[2])
	}

	code, out, _ = runFake(t, env, "--lab", classSteps, "class", "grade")
	want{code: 2, out: []string{"carol    -      -       not graded: the learner's lab is not ready: control plane Pod: CrashLoopBackOff"}}.
		check(t, env, nil, code, out, "")

	// Everyone passes: exit 0.
	delete(c.learners, "carol")
	delete(c.learners, "bob")
	if code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "grade"); code != 0 {
		t.Errorf("every learner passes: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runFake(t, &fakeEnv{class: &fakeClass{}}, "--lab", classSteps, "class", "grade"); code != 2 ||
		!strings.Contains(errOut, "the class has no learner") {
		t.Errorf("empty class: exit %d, %s", code, errOut)
	}
}

func TestClassReset(t *testing.T) {
	isolate(t)
	c := classOf(t, "goodbye", "alice")
	env := &fakeEnv{class: c}
	code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "reset", "alice")
	backups := filepath.Join(os.Getenv("LABCTL_STATE_DIR"), "two-steps", "class", "alice", "backups")
	want{code: 0, out: []string{backups, ".tar", "1/2"}}.check(t, env, nil, code, out, errOut)
	if len(c.learners["alice"].lab.ran) != 0 {
		t.Errorf("alice's sandbox was not recreated: %v", c.learners["alice"].lab.ran)
	}
	code, out, errOut = runFake(t, env, "--lab", classSteps, "class", "reset", "bob")
	want{code: 2, noOut: true, errOut: []string{"the class has no learner bob (namespace labctl-bob)"}}.check(t, env, nil, code, out, errOut)

	c.learners["alice"].problem = "sandbox Pod: Pending"
	code, _, errOut = runFake(t, env, "--lab", classSteps, "class", "reset", "alice")
	if code != 2 || !strings.Contains(errOut, "learner alice: sandbox Pod: Pending: the learner's lab is not ready: `labctl class up` repairs it") ||
		strings.Contains(errOut, "run `labctl up`") {
		t.Errorf("reset of a learner not ready: exit %d, %s", code, errOut)
	}
}

// A /root too big to save is refused naming its largest file: a name the
// learner chose, which reaches the instructor's terminal escaped, on one
// line.
func TestClassResetRefusalEscapesTheFileName(t *testing.T) {
	isolate(t)
	c := classOf(t, "goodbye", "alice")
	var home bytes.Buffer
	tw := tar.NewWriter(&home)
	name := "root/\x1b[2J\x1b]52;c;cHduZWQ=\x07disk\r\nlabctl: /root saved"
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 3 << 30}); err != nil {
		t.Fatal(err)
	}
	c.learners["alice"].lab.home = home.Bytes()
	code, _, errOut := runFake(t, &fakeEnv{class: c}, "--lab", classSteps, "class", "reset", "alice")
	if code == 0 || !strings.Contains(errOut, "nothing was reset") {
		t.Fatalf("reset of a 3 GiB /root: exit %d, %s", code, errOut)
	}
	if strings.ContainsAny(errOut, "\x1b\x07\r") || strings.Contains(errOut, "\nlabctl: /root saved") {
		t.Errorf("the refusal reaches the terminal raw: %q", errOut)
	}
	if !strings.Contains(errOut, `/root/\x1b[2J\x1b]52;c;cHduZWQ=\x07disk\x0d\x0alabctl: /root saved`) {
		t.Errorf("the refusal does not name the file escaped: %q", errOut)
	}
}

func TestClassDown(t *testing.T) {
	isolate(t)
	c := classOf(t, "", "alice", "bob", "carol")
	env := &fakeEnv{class: c}
	code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "down", "bob")
	want{code: 0, noOut: true, errOut: []string{"✓ bob removed"}}.check(t, env, nil, code, out, errOut)
	if got := c.names(); !slices.Equal(got, []string{"alice", "carol"}) {
		t.Errorf("after down bob: %q", got)
	}
	code, out, errOut = runFake(t, env, "--lab", classSteps, "class", "down", "--all")
	want{code: 0, noOut: true, errOut: []string{"Removing 2 learner(s)", "✓ alice removed", "✓ carol removed"}}.check(t, env, nil, code, out, errOut)
	if len(c.names()) != 0 {
		t.Errorf("after down --all: %q", c.names())
	}
}

func TestClassInvite(t *testing.T) {
	isolate(t)
	env := &fakeEnv{class: classOf(t, "", "alice")}
	labFile, err := filepath.Abs(classSteps)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	code, out, errOut := runFake(t, env, "--lab", labFile, "class", "invite", "alice")
	want{code: 0, out: []string{"labctl shell --invite alice.kubeconfig\n"}, errOut: []string{"mode 0600"}}.check(t, env, nil, code, out, errOut)
	info, err := os.Stat("alice.kubeconfig")
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("invite file: %v, %v", info, err)
	}
	if err := os.WriteFile("alice.kubeconfig", []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runFake(t, env, "--lab", labFile, "class", "invite", "alice")
	want{code: 2, noOut: true, errOut: []string{"alice.kubeconfig exists: give another --output-file, or --force"}}.check(t, env, nil, code, out, errOut)
	if b, _ := os.ReadFile("alice.kubeconfig"); string(b) != "mine" {
		t.Errorf("the invite overwrote an existing file: %q", b)
	}
	code, _, _ = runFake(t, env, "--lab", labFile, "class", "invite", "alice", "--force")
	if b, _ := os.ReadFile("alice.kubeconfig"); code != 0 || !strings.Contains(string(b), "labctl:two-steps:alice") {
		t.Errorf("invite --force: exit %d, file %q", code, b)
	}
	file := filepath.Join(t.TempDir(), "for alice")
	code, out, _ = runFake(t, env, "--lab", labFile, "class", "invite", "alice", "--output-file", file)
	if code != 0 || out != "labctl shell --invite '"+file+"'\n" {
		t.Errorf("invite --output-file: exit %d, %q", code, out)
	}
	code, _, errOut = runFake(t, env, "--lab", labFile, "class", "invite", "bob")
	if _, err := os.Stat("bob.kubeconfig"); code != 2 || !strings.Contains(errOut, "the class has no learner bob") || err == nil {
		t.Errorf("invite of no learner: exit %d, %s, file %v", code, errOut, err)
	}
	// An invite expires: 12 hours unless --expires, which is bounded, and
	// the instructor is told when.
	c := env.class
	if !slices.Contains(c.calls, "invite alice 12h0m0s") {
		t.Errorf("the default invite's life: calls %q", c.calls)
	}
	code, _, errOut = runFake(t, env, "--lab", labFile, "class", "invite", "alice", "--force", "--expires", "90m")
	if code != 0 || !slices.Contains(c.calls, "invite alice 1h30m0s") || !strings.Contains(errOut, "good until 2026-12-03 22:00") {
		t.Errorf("invite --expires 90m: exit %d, %s, calls %q", code, errOut, c.calls)
	}
	for _, bad := range []string{"1m", "200h"} {
		code, _, errOut = runFake(t, env, "--lab", labFile, "class", "invite", "alice", "--force", "--expires", bad)
		if code != 2 || !strings.Contains(errOut, "an invite lasts from 10m to 168h") {
			t.Errorf("invite --expires %s: exit %d, %s", bad, code, errOut)
		}
	}
	// --revoke ends the learner's invites and writes no file.
	t.Chdir(t.TempDir())
	code, out, errOut = runFake(t, env, "--lab", labFile, "class", "invite", "alice", "--revoke")
	want{code: 0, noOut: true, errOut: []string{"Every invite of alice ends now"}}.check(t, env, nil, code, out, errOut)
	if _, err := os.Stat("alice.kubeconfig"); !slices.Contains(c.calls, "revoke alice") || err == nil {
		t.Errorf("invite --revoke: calls %q, file %v", c.calls, err)
	}
	code, _, errOut = runFake(t, env, "--lab", labFile, "class", "invite", "alice", "--revoke", "--expires", "1h")
	if code != 2 || !strings.Contains(errOut, "none of the others can be") && !strings.Contains(errOut, "[expires revoke]") {
		t.Errorf("invite --revoke --expires: exit %d, %s", code, errOut)
	}
}

// The class flags come from flags, LABCTL_CLASS_* and the config file's
// class: section, in that order.
func TestClassConfig(t *testing.T) {
	isolate(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("class:\n  prefix: june-\n  context: from-file\n  storage-class: fast\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LABCTL_CONFIG", cfg)
	t.Setenv("LABCTL_CLASS_CONTEXT", "from-env")
	t.Setenv("LABCTL_CLASS_SANDBOX_IMAGE", "registry.example/sandbox:1")
	c := &fakeClass{}
	runFake(t, &fakeEnv{class: c}, "--lab", classSteps, "class", "status", "--kubeconfig", "/etc/class.conf")
	got := c.cfg
	if got.Prefix != "june-" || got.Context != "from-env" || got.StorageClass != "fast" || got.SandboxImage != "registry.example/sandbox:1" ||
		got.Kubeconfig != "/etc/class.conf" {
		t.Errorf("class config %+v", got)
	}
	runFake(t, &fakeEnv{class: c}, "--lab", classSteps, "class", "status", "--context", "from-flag")
	if c.cfg.Context != "from-flag" {
		t.Errorf("--context: %q", c.cfg.Context)
	}
}

func TestClassShellNeedsATerminalBeforeTouchingAnything(t *testing.T) {
	isolate(t)
	env := &fakeEnv{}
	code, out, errOut := runFake(t, env, "--lab", classSteps, "class", "shell", "alice")
	want{code: 2, noOut: true, errOut: []string{"labctl shell needs a terminal; use labctl exec for scripts"}, noCalls: true}.
		check(t, env, nil, code, out, errOut)
}

// class status runs no probe, nor the checks that judge one; class grade
// runs them.
func TestClassStatusRunsNoProbe(t *testing.T) {
	isolate(t)
	c := &fakeClass{}
	c.add("alice", solved(t, probeClass, ""))
	c.learners["alice"].lab.ran["echo hello > /root/hello.txt"] = true
	c.learners["alice"].lab.ran["echo bye > /root/bye.txt"] = true
	env := &fakeEnv{class: c}
	code, out, errOut := runFake(t, env, "--lab", probeClass, "class", "status", "-o", "json")
	var s classroom.Status
	decode(t, out, &s)
	if code != 0 || len(s.Learners) != 1 {
		t.Fatalf("exit %d, %+v\n%s", code, s, errOut)
	}
	if a := s.Learners[0]; a.Problem != "" || a.Step != "" || a.Score == nil || *a.Score != 3 || *a.MaxScore != 3 {
		t.Errorf("alice: %+v", a)
	}
	if c.learners["alice"].lab.ran["/root/sync.sh"] {
		t.Error("class status ran a probe")
	}
	code, _, errOut = runFake(t, env, "--lab", probeClass, "class", "grade")
	if !c.learners["alice"].lab.ran["/root/sync.sh"] {
		t.Errorf("class grade ran no probe: exit %d\n%s", code, errOut)
	}
	dir, err := class.StateDir("two-steps", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "progress.json")); err != nil {
		t.Errorf("the grade is not in class.StateDir: %v", err)
	}
}

// The retry line of a class up that failed keeps its switches: a run lab's
// retry without --learner-nodes would be refused.
func TestClassUpRetryKeepsSwitches(t *testing.T) {
	isolate(t)
	env := &fakeEnv{class: &fakeClass{upErr: map[string]error{"learner-1": errors.New("no room")}}}
	_, _, errOut := runFake(t, env, "--lab", classSteps, "class", "up", "--learners", "1", "--learner-nodes", "--renew-outdated=false")
	if want := "retry them with: labctl --lab " + classSteps + " class up --learners 1 --learner-nodes --renew-outdated=false\n"; !strings.Contains(errOut, want) {
		t.Errorf("want %q in:\n%s", want, errOut)
	}
}
