package checks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/labctl/labctl/lab"
)

// shopMatrix is netpol-shop's question in small: web and a Pod in tools
// may reach web; only web may reach api; nothing else opens.
func shopMatrix() *lab.MatrixCheck {
	return &lab.MatrixCheck{
		Sources: []lab.MatrixSource{
			{Name: "web", Namespace: "shop", Labels: map[string]string{"app": "shop", "tier": "web"}},
			{Name: "report", Namespace: "shop", Labels: map[string]string{"app": "report"}},
			{Name: "debug", Namespace: "tools", Labels: map[string]string{"app": "debug"}},
		},
		Targets: []lab.MatrixTarget{{Name: "web", To: "web.shop:80"}, {Name: "api", To: "api.shop:80"}},
		Open:    []lab.MatrixCells{{From: []string{"*"}, To: []string{"web"}}, {From: []string{"web"}, To: []string{"api"}}},
		Closed:  []lab.MatrixCells{{From: []string{"report"}, To: []string{"web"}}},
		// Unlisted: everything else must not open.
		Unlisted: lab.MatrixClosed,
	}
}

func TestMatrixExpected(t *testing.T) {
	got := shopMatrix().Expected()
	want := [][]bool{{true, true}, {false, false}, {true, false}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("expected = %v, want %v", got, want)
	}
	m := shopMatrix()
	m.Unlisted = lab.MatrixOpen
	m.Open = nil
	if got := fmt.Sprint(m.Expected()); got != "[[true true] [false true] [true true]]" {
		t.Fatalf("open unless listed: %v", got)
	}
}

// TestJudgeMatrixNamesEveryWrongCell: every cell is judged, an untried
// pair cannot hide, and the failure names each wrong cell.
func TestJudgeMatrixNamesEveryWrongCell(t *testing.T) {
	m := shopMatrix()
	right := [][]Tried{{{Opened: true}, {Opened: true}}, {{}, {}}, {{Opened: true}, {}}}
	if err := judgeMatrix(m, right); err != nil {
		t.Fatalf("every cell as expected: %v", err)
	}
	wrong := [][]Tried{{{Opened: true}, {Detail: "no answer within 2s"}}, {{}, {Opened: true}}, {{Opened: true}, {}}}
	err := judgeMatrix(m, wrong)
	var f *failure
	if !errors.As(err, &f) {
		t.Fatalf("two wrong cells: %v, want a failure", err)
	}
	text := err.Error()
	for _, want := range []string{
		"2 of 6 paths",
		"from web (a Pod in shop labelled app=shop,tier=web) to api (api.shop:80): expected open, found closed: no answer within 2s",
		"from report (a Pod in shop labelled app=report) to api (api.shop:80): expected closed, found open",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("message %q does not say %q", text, want)
		}
	}
	if err := judgeMatrix(m, right[:2]); err == nil || errors.As(err, &f) {
		t.Errorf("a missing row: %v, want an error", err)
	}
}

func TestParseProberOutput(t *testing.T) {
	got, err := parseProberOutput("cell 1 closed 124 \ncell 0 open\ncell 2 closed 1 prober: connect: Connection refused\ndone\n", 3, matrixConnectTimeout)
	if err != nil {
		t.Fatal(err)
	}
	want := []Tried{{Opened: true}, {Detail: "no answer within 2s", TimedOut: true}, {Detail: "connection refused"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for name, out := range map[string]string{
		"a cell missing":      "cell 0 open\ndone\n",
		"a cell twice":        "cell 0 open\ncell 0 closed 124 \ndone\n",
		"no done":             "cell 0 open\ncell 1 open\n",
		"after done":          "cell 0 open\ncell 1 open\ndone\ncell 1 open\n",
		"a cell not asked":    "cell 0 open\ncell 1 open\ncell 2 open\ndone\n",
		"a stranger":          "stranger 42\ncell 0 open\ncell 1 open\ndone\n",
		"another line":        "cell 0 open\nhello\ncell 1 open\ndone\n",
		"open with more":      "cell 0 open 0\ncell 1 open\ndone\n",
		"closed without code": "cell 0 closed\ncell 1 open\ndone\n",
	} {
		if _, err := parseProberOutput(out, 2, matrixConnectTimeout); err == nil {
			t.Errorf("%s: parsed %q", name, out)
		}
	}
	if _, err := parseProberOutput("stranger 42\ncell 0 open\ndone\n", 1, matrixConnectTimeout); !errors.Is(err, errStranger) {
		t.Errorf("a stranger: %v, want errStranger", err)
	}
}

// TestMatrixScriptTriesEveryTargetAtOnce runs the prober's script with
// bash on the loopback: an open port, a refused one and one that never
// answers (a listener whose backlog is full is not at hand; an address
// that drops SYNs stands in) and a name that does not resolve each get
// their line, in about one timeout.
func TestMatrixScriptTriesEveryTargetAtOnce(t *testing.T) {
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("no timeout(1)")
	}
	open := flippingPort(t, true, 0)
	closed := flippingPort(t, false, 0)
	// A name that does not resolve: bash says so on the line before its
	// last, which the cell's detail keeps.
	targets := []string{"127.0.0.1:" + open, "127.0.0.1:" + closed, "127.0.0.1:" + open, "name.invalid:80"}
	cmd, err := matrixCommand("r1", targets, matrixConnectTimeout)
	if err != nil {
		t.Fatal(err)
	}
	run := exec.Command(cmd[0], cmd[1:]...)
	run.Stdin = strings.NewReader("go\n")
	out, err := run.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Outside a container every process of the machine is a stranger:
	// judge the cells alone.
	var cells []string
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "stranger ") {
			cells = append(cells, l)
		}
	}
	got, err := parseProberOutput(strings.Join(cells, "\n"), len(targets), matrixConnectTimeout)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !got[0].Opened || got[1].Opened || got[1].Detail != "connection refused" || !got[2].Opened ||
		got[3].Opened || !strings.HasPrefix(got[3].Detail, "the name does not resolve") {
		t.Fatalf("got %+v\n%s", got, out)
	}
}

// matrixAgent is a policy agent whose syncs end at once, and whose exec
// answers by Pod through answer once its stdin says go, as matrixScript
// does; it notes the syncs ended when each exec began (began) and when
// its stdin said go (went).
type matrixAgent struct {
	*simAgent
	answer func(pod string) string
	mu     sync.Mutex
	cmds   [][]string
	lines  []string
	began  []int
	went   []int
}

func (a *matrixAgent) Exec(_ context.Context, _, pod string, cmd []string, in io.Reader, out io.Writer) (int, error) {
	a.mu.Lock()
	a.cmds = append(a.cmds, cmd)
	a.began = append(a.began, a.syncsEnded())
	a.mu.Unlock()
	line, _ := bufio.NewReader(in).ReadString('\n')
	a.mu.Lock()
	a.lines = append(a.lines, line)
	a.mu.Unlock()
	if line != "go\n" {
		return 0, nil
	}
	a.mu.Lock()
	a.went = append(a.went, a.syncsEnded())
	a.mu.Unlock()
	io.WriteString(out, a.answer(pod))
	return 0, nil
}

func (a *matrixAgent) syncsEnded() int {
	a.simAgent.mu.Lock()
	defer a.simAgent.mu.Unlock()
	return a.ended
}

// matrixCluster is a fake cluster with the namespaces shop and tools, a
// running Pod of the lab (api, labelled app=shop,tier=api,role=api as a
// learner relabelled it) and whatever Pods a test adds; a Pod the grader
// makes gets a name and a UID, and runs at once.
type matrixCluster struct {
	*kubeReader
	dyn   *dynamicfake.FakeDynamicClient
	agent *matrixAgent
	made  int
}

func newMatrixCluster(t *testing.T, pods ...*unstructured.Unstructured) *matrixCluster {
	t.Helper()
	objs := []runtime.Object{}
	for _, ns := range []string{"shop", "tools"} {
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns, "uid": ns + "-uid"},
		}})
	}
	objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "api-1", "namespace": "shop", "labels": map[string]any{"app": "shop", "tier": "api", "role": "api"}},
		"status":   map[string]any{"phase": "Running"},
	}})
	for _, p := range pods {
		objs = append(objs, p)
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{podsResource: "PodList", namespacesResource: "NamespaceList"}, objs...)
	mc := &matrixCluster{kubeReader: newKubeReader(meta.ToRESTMapperWithContext(meta.NewDefaultRESTMapper(nil)), dyn), dyn: dyn}
	mc.sealKey = []byte("test key")
	mc.agent = &matrixAgent{simAgent: &simAgent{syncTime: time.Millisecond}, answer: func(string) string { return "cell 0 open\ndone\n" }}
	mc.kubeReader.agent = mc.agent
	dyn.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured).DeepCopy()
		if pod.GetName() == "" {
			mc.made++
			pod.SetName(pod.GetGenerateName() + strconv.Itoa(mc.made))
		}
		pod.SetUID(types.UID("uid-" + pod.GetName()))
		pod.Object["status"] = runningStatus()
		err := dyn.Tracker().Create(podsResource, pod, pod.GetNamespace())
		return true, pod, err
	})
	return mc
}

func runningStatus() map[string]any {
	return map[string]any{"phase": "Running", "podIP": "10.244.1.7", "containerStatuses": []any{map[string]any{
		"name": "reach", "containerID": "containerd://1", "restartCount": int64(0), "state": map[string]any{"running": map[string]any{}},
	}}}
}

// pods lists the Pods of ns named like probers, by name.
func (mc *matrixCluster) probers(t *testing.T, ns string) map[string]*unstructured.Unstructured {
	t.Helper()
	list, err := mc.dyn.Resource(podsResource).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		if strings.HasPrefix(list.Items[i].GetName(), proberPrefix) {
			out[list.Items[i].GetName()] = &list.Items[i]
		}
	}
	return out
}

// oneSource is a matrix of one source, api's shape, and one target.
func oneSource() *lab.MatrixCheck {
	return &lab.MatrixCheck{
		Sources:  []lab.MatrixSource{{Name: "api", Namespace: "shop", Labels: map[string]string{"app": "shop", "tier": "api"}}},
		Targets:  []lab.MatrixTarget{{Name: "db", To: "db.shop:5432"}},
		Open:     []lab.MatrixCells{{From: []string{"api"}, To: []string{"db"}}},
		Unlisted: lab.MatrixClosed,
	}
}

// TestProberHasTheLabStatedLabels: a prober carries exactly the labels the
// lab states for its source, never those of a running Pod it would stand
// for (which the learner may have relabelled), and is kept for the next
// round.
func TestProberHasTheLabStatedLabels(t *testing.T) {
	mc := newMatrixCluster(t)
	ctx := context.Background()
	got, err := mc.ProbeMatrix(ctx, oneSource(), "addons:1", MatrixTries{Bound: matrixConnectTimeout})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0][0].Opened {
		t.Fatalf("got %+v", got)
	}
	ps := mc.probers(t, "shop")
	if len(ps) != 1 {
		t.Fatalf("probers %v, want one", slicesKeys(ps))
	}
	for _, p := range ps {
		if !maps.Equal(p.GetLabels(), map[string]string{"app": "shop", "tier": "api"}) {
			t.Fatalf("prober labels %v, want exactly app=shop,tier=api", p.GetLabels())
		}
	}
	if _, err := mc.ProbeMatrix(ctx, oneSource(), "addons:1", MatrixTries{Bound: matrixConnectTimeout}); err != nil {
		t.Fatal(err)
	}
	if mc.made != 1 {
		t.Fatalf("%d probers made over two rounds, want the first kept", mc.made)
	}
}

func slicesKeys(m map[string]*unstructured.Unstructured) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestProberNotAsLeftIsRemade: a prober relabelled, one changed by
// another field manager, and one made by someone else with a copied seal
// are deleted and a prober is made anew; its tries are the new one's.
func TestProberNotAsLeftIsRemade(t *testing.T) {
	for name, change := range map[string]func(p *unstructured.Unstructured){
		"relabelled": func(p *unstructured.Unstructured) {
			p.SetLabels(map[string]string{"app": "shop", "tier": "api", "role": "api"})
		},
		"changed by kubectl": func(p *unstructured.Unstructured) {
			p.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate}})
		},
		"made by someone else": func(p *unstructured.Unstructured) { p.SetUID("learner-uid") },
		"another image": func(p *unstructured.Unstructured) {
			p.Object["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "evil:1"
		},
	} {
		t.Run(name, func(t *testing.T) {
			mc := newMatrixCluster(t)
			ctx := context.Background()
			if _, err := mc.ProbeMatrix(ctx, oneSource(), "addons:1", MatrixTries{Bound: matrixConnectTimeout}); err != nil {
				t.Fatal(err)
			}
			var old *unstructured.Unstructured
			for _, p := range mc.probers(t, "shop") {
				old = p
			}
			change(old)
			if err := mc.dyn.Tracker().Update(podsResource, old, "shop"); err != nil {
				t.Fatal(err)
			}
			var tried []string
			mc.agent.answer = func(pod string) string {
				tried = append(tried, pod)
				return "cell 0 open\ndone\n"
			}
			if _, err := mc.ProbeMatrix(ctx, oneSource(), "addons:1", MatrixTries{Bound: matrixConnectTimeout}); err != nil {
				t.Fatal(err)
			}
			ps := mc.probers(t, "shop")
			if _, still := ps[old.GetName()]; still || len(ps) != 1 {
				t.Fatalf("probers %v: the changed %s is still there, or not one prober", slicesKeys(ps), old.GetName())
			}
			if len(tried) != 1 || tried[0] == old.GetName() {
				t.Fatalf("tried from %v, want the new prober", tried)
			}
		})
	}
}

// TestProberTamperedDuringTheRoundCannotPass: a process left in the
// prober, or a relabelling while it tries, makes the round an error (never
// a pass) and deletes the prober.
func TestProberTamperedDuringTheRoundCannotPass(t *testing.T) {
	for name, tamper := range map[string]func(mc *matrixCluster, pod string) string{
		"a process left by kubectl exec": func(_ *matrixCluster, _ string) string {
			return "stranger 17\ncell 0 open\ndone\n"
		},
		"relabelled while it tries": func(mc *matrixCluster, pod string) string {
			obj, err := mc.dyn.Tracker().Get(podsResource, "shop", pod)
			if err != nil {
				panic(err)
			}
			p := obj.(*unstructured.Unstructured)
			p.SetLabels(map[string]string{"app": "shop", "tier": "web"})
			if err := mc.dyn.Tracker().Update(podsResource, p, "shop"); err != nil {
				panic(err)
			}
			return "cell 0 open\ndone\n"
		},
	} {
		t.Run(name, func(t *testing.T) {
			mc := newMatrixCluster(t)
			mc.agent.answer = func(pod string) string { return tamper(mc, pod) }
			_, err := mc.ProbeMatrix(context.Background(), oneSource(), "addons:1", MatrixTries{Bound: matrixConnectTimeout})
			if err == nil || !strings.Contains(err.Error(), "not as labctl left it") {
				t.Fatalf("err = %v, want the prober not as labctl left it", err)
			}
			if ps := mc.probers(t, "shop"); len(ps) != 0 {
				t.Fatalf("probers %v left, want the tampered one deleted", slicesKeys(ps))
			}
		})
	}
}

// TestMatrixNeedsTheAgent: without a policy agent the check cannot judge
// (nothing says the policies are in force), and says why.
func TestMatrixNeedsTheAgent(t *testing.T) {
	mc := newMatrixCluster(t)
	mc.kubeReader.agent = noAgent{}
	_, err := mc.ProbeMatrix(context.Background(), oneSource(), "addons:1", MatrixTries{Bound: matrixConnectTimeout})
	if err == nil || !strings.Contains(err.Error(), "networkPolicy add-on") {
		t.Fatalf("err = %v", err)
	}
}

type noAgent struct{}

func (noAgent) Syncs(context.Context) (map[string]float64, error) { return map[string]float64{}, nil }
func (noAgent) AskSync(context.Context, string, *unstructured.Unstructured) error {
	return nil
}
func (noAgent) Exec(context.Context, string, string, []string, io.Reader, io.Writer) (int, error) {
	return 0, nil
}

// TestMatrixTargetASourcesProber: a target that names a source is that
// source's prober, on its port; the others are tried as the lab wrote
// them.
func TestMatrixTargetASourcesProber(t *testing.T) {
	mc := newMatrixCluster(t)
	m := &lab.MatrixCheck{
		Sources:  []lab.MatrixSource{{Name: "bare", Namespace: "shop"}, {Name: "web", Namespace: "shop", Labels: map[string]string{"tier": "web"}}},
		Targets:  []lab.MatrixTarget{{Name: "db", To: "db.shop:5432"}, {Name: "new-pod", Source: "bare"}},
		Unlisted: lab.MatrixClosed,
	}
	mc.agent.answer = func(pod string) string {
		ps := mc.probers(t, "shop")
		if len(ps[pod].GetLabels()) == 0 {
			// bare does not try its own prober.
			return "cell 0 closed 124 \ndone\n"
		}
		return "cell 0 closed 124 \ncell 1 open\ndone\n"
	}
	got, err := mc.ProbeMatrix(context.Background(), m, "addons:1", MatrixTries{Bound: matrixConnectTimeout})
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, c := range mc.agent.cmds {
		args = append(args, strings.Join(c[7:], " "))
	}
	slices.Sort(args)
	if want := []string{"db.shop 5432", "db.shop 5432 10.244.1.7 8080"}; !slices.Equal(args, want) {
		t.Fatalf("tried %q, want %q: db from both, the prober of bare on 8080 from web only", args, want)
	}
	if !got[0][1].Self || got[1][1].Self {
		t.Fatalf("got %+v: want bare's own cell untried, web's tried", got)
	}
	err = judgeMatrix(m, got)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 paths") || !strings.Contains(err.Error(), "to new-pod (the prober of bare, port 8080): expected closed, found open") {
		t.Fatalf("judged %v", err)
	}
}

// TestMatrixTargetAProbersOtherPort: a target that names a source and a
// port tries that port of its prober, which listens on it and on 8080.
func TestMatrixTargetAProbersOtherPort(t *testing.T) {
	mc := newMatrixCluster(t)
	m := &lab.MatrixCheck{
		Sources:  []lab.MatrixSource{{Name: "db", Namespace: "shop", Labels: map[string]string{"tier": "db"}}, {Name: "api", Namespace: "shop", Labels: map[string]string{"tier": "api"}}},
		Targets:  []lab.MatrixTarget{{Name: "db-8080", Source: "db"}, {Name: "db-5432", Source: "db", Port: 5432}},
		Unlisted: lab.MatrixClosed,
	}
	mc.agent.answer = func(pod string) string {
		if mc.probers(t, "shop")[pod].GetLabels()["tier"] == "db" {
			return "done\n"
		}
		return "cell 0 closed 124 \ncell 1 open\ndone\n"
	}
	got, err := mc.ProbeMatrix(context.Background(), m, "addons:1", MatrixTries{Bound: matrixConnectTimeout})
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, c := range mc.agent.cmds {
		if tail := strings.Join(c[7:], " "); tail != "" {
			args = append(args, tail)
		}
	}
	if len(args) != 1 || !strings.HasSuffix(args[0], " 8080 10.244.1.7 5432") {
		t.Fatalf("tried %q, want db's prober on 8080 and 5432 from api", args)
	}
	for _, p := range mc.probers(t, "shop") {
		cmd, _, _ := unstructured.NestedSlice(p.Object, "spec", "containers")
		c := cmd[0].(map[string]any)
		ports := fmt.Sprint(c["command"].([]any)[5:])
		want := "[8080]"
		if p.GetLabels()["tier"] == "db" {
			want = "[5432 8080]"
		}
		if ports != want {
			t.Errorf("the prober labelled %v listens on %s, want %s", p.GetLabels(), ports, want)
		}
	}
	err = judgeMatrix(m, got)
	if err == nil || !strings.Contains(err.Error(), "to db-5432 (the prober of db, port 5432): expected closed, found open") {
		t.Fatalf("judged %v", err)
	}
}

// TestProberBelowPort1024: a prober that listens on a port below 1024
// (DNS's 53) lets nobody bind from that port up in its own network
// namespace, a sysctl the kubelet and Pod Security allow, and still runs
// as nobody with no capability; a prober on high ports alone sets none,
// so its Pod is as before.
func TestProberBelowPort1024(t *testing.T) {
	mc := newMatrixCluster(t)
	m := &lab.MatrixCheck{
		Sources: []lab.MatrixSource{
			{Name: "dns-like", Namespace: "tools", Labels: map[string]string{"k8s-app": "kube-dns"}},
			{Name: "api", Namespace: "shop", Labels: map[string]string{"tier": "api"}},
		},
		Targets:  []lab.MatrixTarget{{Name: "dns-like-53", Source: "dns-like", Port: 53}, {Name: "dns-like-5353", Source: "dns-like", Port: 5353}},
		Unlisted: lab.MatrixClosed,
	}
	mc.agent.answer = func(pod string) string {
		if _, ok := mc.probers(t, "tools")[pod]; ok {
			return "done\n"
		}
		return "cell 0 closed 124 \ncell 1 closed 124 \ndone\n"
	}
	if _, err := mc.ProbeMatrix(context.Background(), m, "addons:1", MatrixTries{Bound: matrixConnectTimeout}); err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]string{"tools": `[map[name:net.ipv4.ip_unprivileged_port_start value:53]]`, "shop": "[]"} {
		ps := mc.probers(t, ns)
		if len(ps) != 1 {
			t.Fatalf("probers in %s: %v, want one", ns, slicesKeys(ps))
		}
		for _, p := range ps {
			sysctls, _, _ := unstructured.NestedSlice(p.Object, "spec", "securityContext", "sysctls")
			if got := fmt.Sprint(sysctls); got != want {
				t.Errorf("the prober in %s sets sysctls %s, want %s", ns, got, want)
			}
			sc, _, _ := unstructured.NestedMap(p.Object, "spec", "securityContext")
			if sc["runAsUser"] != int64(65534) || sc["runAsNonRoot"] != true {
				t.Errorf("the prober in %s runs as %v, want nobody", ns, sc)
			}
			cs, _, _ := unstructured.NestedSlice(p.Object, "spec", "containers")
			c := cs[0].(map[string]any)
			if got := fmt.Sprint(c["securityContext"].(map[string]any)["capabilities"]); got != "map[drop:[ALL]]" {
				t.Errorf("the prober in %s has capabilities %s, want all dropped", ns, got)
			}
			if ns == "tools" {
				if got := fmt.Sprint(c["command"].([]any)[5:]); got != "[53 5353 8080]" {
					t.Errorf("the prober like DNS listens on %s, want [53 5353 8080]", got)
				}
			}
		}
	}
}

// TestProberRefusedByTheKubelet: a prober the kubelet refuses (a sysctl
// its node does not allow) makes the check say at once that it could not
// run, and why, rather than wait out the check's time.
func TestProberRefusedByTheKubelet(t *testing.T) {
	mc := newMatrixCluster(t)
	mc.dyn.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*unstructured.Unstructured).DeepCopy()
		mc.made++
		pod.SetName(pod.GetGenerateName() + strconv.Itoa(mc.made))
		pod.SetUID(types.UID("uid-" + pod.GetName()))
		pod.Object["status"] = map[string]any{"phase": "Failed", "reason": "SysctlForbidden", "message": "Pod forbidden sysctl: \"net.ipv4.ip_unprivileged_port_start\" not allowlisted"}
		return true, pod, mc.dyn.Tracker().Create(podsResource, pod, pod.GetNamespace())
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err := mc.ProbeMatrix(ctx, oneSource(), "addons:1", MatrixTries{Bound: matrixConnectTimeout})
	if err == nil || !strings.Contains(err.Error(), "could not start: SysctlForbidden Pod forbidden sysctl") {
		t.Fatalf("err = %v, want the kubelet's refusal", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v, want an answer without waiting out the check's time", d)
	}
}

// TestProberListens runs the prober's own program with perl: it accepts
// connections on every port it is given, again and again.
func TestProberListens(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skip("no perl")
	}
	var ports []string
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
		l.Close()
	}
	cmd := exec.Command("perl", append([]string{"-MIO::Socket::INET", "-MIO::Select", "-e", proberListen}, ports...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(5 * time.Second)
	for n := 0; n < 6; {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+ports[n%2], time.Second)
		if err == nil {
			c.Close()
			n++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("the prober does not accept on %s: %v", ports[n%2], err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMatrixScriptNamesStrangers runs the prober's script in a PID
// namespace of its own, as in a container: a process left there without
// the round's secret is a stranger, the script's own tries are not.
func TestMatrixScriptNamesStrangers(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare")
	}
	if err := exec.Command("unshare", "-pf", "--mount-proc", "true").Run(); err != nil {
		t.Skipf("no PID namespace here (%v)", err)
	}
	open := flippingPort(t, true, 0)
	cmd, err := matrixCommand("r1", []string{"127.0.0.1:" + open, "127.0.0.1:" + open}, matrixConnectTimeout)
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(cmd))
	for i, a := range cmd {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	quoted = append(quoted, "<<< go")
	for name, pid1 := range map[string]string{
		"alone":          "sleep 30 & " + strings.Join(quoted, " ") + "; kill %1",
		"with a process": "sleep 30 & (exec -a lingering sleep 30) & sleep 0.2; " + strings.Join(quoted, " ") + "; kill %1 %2",
		// Another check's tries, whose exec has not become their shell yet.
		"with tries starting": "sleep 30 & (sleep 0.3; exec env LABCTL_PROBER_ROUND=r1 sleep 30) & sleep 0.1; " + strings.Join(quoted, " ") + "; kill %1 %2",
	} {
		t.Run(name, func(t *testing.T) {
			// PID 1 is a shell that leaves sleep 30 as its own child: the
			// Pod's own process stands for PID 1 alone, so the first
			// sleep is a stranger too; count them.
			out, err := exec.Command("unshare", "-pf", "--mount-proc", "bash", "-c", pid1).Output()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			strangers := strings.Count(string(out), "stranger ")
			want := 2 // the first sleep, before and after
			if name == "with a process" {
				want = 4
			}
			if strangers != want {
				t.Fatalf("%d stranger lines, want %d:\n%s", strangers, want, out)
			}
			var cells []string
			for _, l := range strings.Split(string(out), "\n") {
				if !strings.HasPrefix(l, "stranger ") {
					cells = append(cells, l)
				}
			}
			if _, err := parseProberOutput(strings.Join(cells, "\n"), 2, matrixConnectTimeout); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
		})
	}
}

// TestMatrixSlowOpenCellTriedAgain: a cell expected open that got no
// answer within its bound (a machine under heavy load) is tried once
// more, with a longer bound, before it fails; a cell expected closed that
// opened, or one expected open that was refused, fails at once; a cell
// expected closed that got no answer is closed, as expected.
func TestMatrixSlowOpenCellTriedAgain(t *testing.T) {
	m := oneSource()
	m.Targets = append(m.Targets, lab.MatrixTarget{Name: "cache", To: "cache.shop:6379"})
	for _, c := range []struct {
		name    string
		answers []string
		tries   int
		fails   string
	}{
		{"open after a second try", []string{"cell 0 closed 124 \ncell 1 closed 124 \ndone\n", "cell 0 open\ndone\n"}, 2, ""},
		{"no answer twice", []string{"cell 0 closed 124 \ncell 1 closed 124 \ndone\n", "cell 0 closed 124 \ndone\n"}, 2, "to db (db.shop:5432): expected open, found closed: no answer within 6s"},
		{"a closed cell open", []string{"cell 0 closed 124 \ncell 1 open\ndone\n", "cell 0 open\ncell 1 closed 124 \ndone\n"}, 1, "to cache (cache.shop:6379): expected closed, found open"},
		{"an open cell refused", []string{"cell 0 closed 1 prober: connect: Connection refused\ncell 1 closed 124 \ndone\n", "cell 0 open\ncell 1 closed 124 \ndone\n"}, 1, "expected open, found closed: connection refused"},
		{"a closed cell without answer", []string{"cell 0 open\ncell 1 closed 124 \ndone\n"}, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			mc := newMatrixCluster(t)
			tries := 0
			mc.agent.answer = func(string) string {
				a := c.answers[min(tries, len(c.answers)-1)]
				tries++
				return a
			}
			err := checkMatrix(context.Background(), Env{Kube: mc.kubeReader, ReachImage: "addons:1"}, m)
			if tries != c.tries {
				t.Errorf("tried %d times, want %d", tries, c.tries)
			}
			if tries == 2 {
				if script := strings.Join(mc.agent.cmds[1], " "); !strings.Contains(script, fmt.Sprintf("timeout %d ", matrixRetryTimeout)) {
					t.Errorf("the second try is not bound to %ds: %s", matrixRetryTimeout, script)
				}
			}
			switch {
			case c.fails == "" && err != nil:
				t.Errorf("failed: %v", err)
			case c.fails != "" && (err == nil || !strings.Contains(err.Error(), c.fails)):
				t.Errorf("judged %v, want a failure saying %q", err, c.fails)
			}
		})
	}
}

// TestMatrixSecondTryOnlyTheSlowCells: the second try runs only in the
// probers of the cells expected open that got no answer, tries only those
// cells, and does not wait for the agent again: its syncs before the first
// tries already applied the policies, and the second try costs no more
// than its own bound.
func TestMatrixSecondTryOnlyTheSlowCells(t *testing.T) {
	m := oneSource()
	m.Sources = append(m.Sources, lab.MatrixSource{Name: "debug", Namespace: "tools", Labels: map[string]string{"app": "debug"}})
	m.Targets = append(m.Targets, lab.MatrixTarget{Name: "cache", To: "cache.shop:6379"})
	m.Open = []lab.MatrixCells{{From: []string{"api", "debug"}, To: []string{"db"}}}
	mc := newMatrixCluster(t)
	var asks []int
	mc.agent.answer = func(pod string) string {
		mc.agent.simAgent.mu.Lock()
		asks = append(asks, len(mc.agent.simAgent.asks))
		mc.agent.simAgent.mu.Unlock()
		if len(asks) > 2 {
			return "cell 0 open\ndone\n"
		}
		if mc.probers(t, "shop")[pod] != nil {
			// api's prober: db got no answer, cache none as expected.
			return "cell 0 closed 124 \ncell 1 closed 124 \ndone\n"
		}
		return "cell 0 open\ncell 1 closed 124 \ndone\n"
	}
	if err := checkMatrix(context.Background(), Env{Kube: mc.kubeReader, ReachImage: "addons:1"}, m); err != nil {
		t.Fatalf("db opened at the second try: %v", err)
	}
	if len(mc.agent.cmds) != 3 {
		t.Fatalf("%d execs in the probers, want 3: both probers, then api's alone", len(mc.agent.cmds))
	}
	second := mc.agent.cmds[2]
	if i := slices.Index(second, "prober"); i < 0 || !slices.Equal(second[i+1:], []string{"db.shop", "5432"}) {
		t.Errorf("the second try's targets are %q, want db.shop 5432 alone", second)
	}
	if !strings.Contains(strings.Join(second, " "), fmt.Sprintf("timeout %d ", matrixRetryTimeout)) {
		t.Errorf("the second try is not bound to %ds", matrixRetryTimeout)
	}
	if asks[2] != asks[0] {
		t.Errorf("the agent was asked for %d syncs before the first tries and %d before the second, want no more", asks[0], asks[2])
	}
}

// TestMatrixScriptWaitsForGo: the prober's script tries nothing until its
// stdin says go, and ends without a try on any other line or none.
func TestMatrixScriptWaitsForGo(t *testing.T) {
	if _, err := exec.LookPath("timeout"); err != nil {
		t.Skip("no timeout(1)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var mu sync.Mutex
	accepted := 0
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			accepted++
			mu.Unlock()
			c.Close()
		}
	}()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return accepted
	}
	cmd, err := matrixCommand("r1", []string{l.Addr().String()}, matrixConnectTimeout)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"", "stop\n", "go\n"} {
		run := exec.Command(cmd[0], cmd[1:]...)
		stdin, err := run.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		run.Stdout = &out
		if err := run.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		if n := count(); n != 0 {
			t.Fatalf("%d connections before the script's stdin said anything", n)
		}
		io.WriteString(stdin, line)
		stdin.Close()
		if err := run.Wait(); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		var cells []string
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.HasPrefix(l, "cell ") {
				cells = append(cells, l)
			}
		}
		switch {
		case line == "go\n" && (count() != 1 || len(cells) != 1 || cells[0] != "cell 0 open"):
			t.Fatalf("after go: %d connections, output %q; want one, and the cell open", count(), out.String())
		case line != "go\n" && (count() != 0 || len(cells) != 0):
			t.Fatalf("after %q: %d connections, output %q; want none", line, count(), out.String())
		}
	}
}

// TestMatrixExecsStartWhileTheAgentSyncs: the probers' execs begin before
// the policy agent has ended its syncs, and their scripts are told to try
// only after it has; when the agent never syncs, they are told to stop and
// the round says why it could not judge.
func TestMatrixExecsStartWhileTheAgentSyncs(t *testing.T) {
	mc := newMatrixCluster(t)
	mc.agent.simAgent.syncTime = 50 * time.Millisecond
	got, err := mc.ProbeMatrix(context.Background(), oneSource(), "addons:1", MatrixTries{Bound: matrixConnectTimeout})
	if err != nil {
		t.Fatal(err)
	}
	if !got[0][0].Opened {
		t.Fatalf("got %+v", got)
	}
	if len(mc.agent.began) != 1 || mc.agent.began[0] >= agentSyncsNeeded {
		t.Errorf("the exec began after %v syncs, want it begun before the %d the round waits for", mc.agent.began, agentSyncsNeeded)
	}
	if len(mc.agent.went) != 1 || mc.agent.went[0] < agentSyncsNeeded {
		t.Errorf("the script was told to try after %v syncs, want %d", mc.agent.went, agentSyncsNeeded)
	}

	stopped := newMatrixCluster(t)
	stopped.agent.simAgent.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = stopped.ProbeMatrix(ctx, oneSource(), "addons:1", MatrixTries{Bound: matrixConnectTimeout})
	if err == nil || !strings.Contains(err.Error(), "did not apply the cluster's policies") {
		t.Fatalf("an agent that never syncs: %v, want the agent's lateness", err)
	}
	if !slices.Equal(stopped.agent.lines, []string{"stop\n"}) || len(stopped.agent.went) != 0 {
		t.Fatalf("the script was told %q, want stop alone", stopped.agent.lines)
	}
}
