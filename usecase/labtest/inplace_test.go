package labtest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/mutant"
	"github.com/labctl/labctl/lab"
)

func absent(name, path string) lab.Check {
	no := false
	return lab.Check{Name: name, Points: 1, File: &lab.FileCheck{Path: path, Exists: &no}}
}

// startLab's mistakes each see the step's start or fail: the first makes
// web and /root/a, and the second would pass check web, or fail no-a,
// were either left behind.
func startLab(mistakes ...lab.Mistake) *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "demo"},
		Steps: []lab.Step{{
			ID:     "cluster",
			Checks: []lab.Check{kubeCheck("web", "web"), absent("no-a", "/root/a")},
			Solve:  "apply web",
			Mistakes: append([]lab.Mistake{
				{Name: "web-and-a", Script: "apply web\ntouch /root/a", Fails: []string{"no-a"}},
				{Name: "nothing", Script: "touch /root/b", Fails: []string{"web"}},
			}, mistakes...),
			Alternatives: []lab.Alternative{{Name: "twice", Script: "apply web\napply web"}},
		}},
	}
}

func runOn(t *testing.T, l *lab.Lab, env Environment) *Report {
	t.Helper()
	rep, err := Run(context.Background(), env, Options{Lab: l, Store: progress.NewStore(t.TempDir()), Pause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestCasesUndoneInPlace: each case is undone in place (what it made in
// the namespace deleted, the home put back), no reset runs but the final
// one, and each next case sees the step's start: were web or /root/a left
// behind, mistake nothing would not be caught or would fail no-a.
func TestCasesUndoneInPlace(t *testing.T) {
	env := newUndoingEnv()
	rep := runOn(t, startLab(), env)
	if !rep.Passed {
		t.Fatalf("a lab whose promises hold failed: %v", rep.Failures())
	}
	want := []string{"cluster/before", "cluster/mistake web-and-a", "cluster/undo", "cluster/mistake nothing", "cluster/undo",
		"cluster/alternative", "cluster/undo", "cluster/solve", "cluster/again", "grade", "cluster/final-reset"}
	if got := kinds(rep); !slices.Equal(got, want) {
		t.Errorf("phases:\n got %q\nwant %q", got, want)
	}
	if rep.UndoneInPlace != 3 || rep.Resets != 1 {
		t.Errorf("%d cases undone in place, %d resets; want 3 and 1 (the final one)", rep.UndoneInPlace, rep.Resets)
	}
	// Between the first mistake and the next: its objects written back and
	// its home put back, in either order (they run at once).
	i := slices.Index(env.log, "script apply web")
	j := slices.Index(env.log, "script touch /root/b")
	if i < 0 || j < i {
		t.Fatalf("the mistakes did not run in order: %q", env.log)
	}
	between := slices.Clone(env.log[i+2 : j])
	slices.Sort(between)
	if want := []string{"restore-start cluster", "write-back 1 0 0"}; !slices.Equal(between, want) {
		t.Errorf("after the first mistake: %q, want %q", env.log[i:j], want)
	}
	// The start is kept once: each undo proved it again.
	if n := strings.Count(strings.Join(env.log, "\n"), "keep-start"); n != 1 {
		t.Errorf("kept the step's start %d times, want 1: %q", n, env.log)
	}
}

// TestQuietCaseUndoneInOneLook: the undo of a case that wrote nothing in
// the namespaces ends at its first look that finds the start; that of a
// case that wrote looks until two in a row find it. A quiet case that made
// a cluster object still falls back to a reset (TestUndoInPlaceFallsBackToAReset).
func TestQuietCaseUndoneInOneLook(t *testing.T) {
	defer func(p time.Duration) { undoPause = p }(undoPause)
	undoPause = time.Millisecond
	env := newUndoingEnv()
	if rep := runOn(t, startLab(), env); !rep.Passed || rep.UndoneInPlace != 3 {
		t.Fatalf("a lab whose promises hold: passed %v, %d undone in place: %v", rep.Passed, rep.UndoneInPlace, rep.Failures())
	}
	looks := map[string]int{}
	for _, l := range env.looks {
		looks[l]++
	}
	// The start's look comes before any script; the mistake web-and-a and
	// the alternative (apply web) wrote, then write back and look twice more.
	if want := map[string]int{"": 1, "apply web": 6, "touch /root/b": 1}; !maps.Equal(looks, want) {
		t.Errorf("listings after each case: %v, want %v", looks, want)
	}
}

// TestQuietCase: a case is quiet when the audit log has no write of its
// own and its step's checks only read: a probe writes as itself.
func TestQuietCase(t *testing.T) {
	s := &lab.Step{Checks: []lab.Check{absent("a", "/root/a")}}
	if !quietCase(s, 2, 2) || quietCase(s, 2, 3) {
		t.Errorf("quiet: %v with no write of its own, %v with one", quietCase(s, 2, 2), quietCase(s, 2, 3))
	}
	s.Probe = &lab.Probe{Run: "sync.sh"}
	if quietCase(s, 2, 2) {
		t.Errorf("a case of a step with a probe is quiet")
	}
}

// TestUndoLooksWhileTheChecksRun: the undo's first look at the objects is
// taken as the case's checks run, once per case: each listing waits a
// moment, then notes whether a round is running.
func TestUndoLooksWhileTheChecksRun(t *testing.T) {
	defer func(p time.Duration) { undoPause = p }(undoPause)
	undoPause = time.Millisecond
	env := newUndoingEnv()
	var inRound, during atomic.Int32
	env.roundHook = func() {
		inRound.Add(1)
		time.Sleep(60 * time.Millisecond)
		inRound.Add(-1)
	}
	env.lookHook = func() {
		time.Sleep(20 * time.Millisecond)
		if inRound.Load() > 0 {
			during.Add(1)
		}
	}
	if rep := runOn(t, startLab(), env); !rep.Passed || rep.UndoneInPlace != 3 {
		t.Fatalf("a lab whose promises hold: passed %v, %d undone in place: %v", rep.Passed, rep.UndoneInPlace, rep.Failures())
	}
	if n := during.Load(); n != 3 {
		t.Errorf("%d listings while a round ran, want 3 (one per case)", n)
	}
}

// TestOnlyReads: a step's cases are looked at ahead only when its checks
// and its mistakes' evidence only read, and it has no probe.
func TestOnlyReads(t *testing.T) {
	reads := []lab.Check{absent("a", "/root/a"), kubeCheck("web", "web"),
		{Name: "g", Git: &lab.GitCheck{Repo: "/root/r"}}, {Name: "au", Audit: &lab.AuditCheck{Absent: true}}}
	for _, c := range []struct {
		name string
		step lab.Step
		want bool
	}{
		{"reads", lab.Step{Checks: reads, Mistakes: []lab.Mistake{{Evidence: reads}}}, true},
		{"probe", lab.Step{Checks: reads, Probe: &lab.Probe{Run: "sync.sh"}}, false},
		{"command", lab.Step{Checks: append(slices.Clone(reads), lab.Check{Name: "c", Command: &lab.CommandCheck{}})}, false},
		{"reach in evidence", lab.Step{Checks: reads, Mistakes: []lab.Mistake{{Evidence: []lab.Check{{Name: "r", Reach: &lab.ReachCheck{}}}}}}, false},
		{"access", lab.Step{Checks: []lab.Check{{Name: "x", Access: &lab.AccessCheck{}}}}, false},
	} {
		if got := onlyReads(&c.step); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestUndoInPlaceFallsBackToAReset: a case after which the undo cannot
// prove the step's start (a cluster object made, a command run in a
// container, a file changed outside /root, a Pod of a workload changed for
// good) is followed by the full reset, whose line says why; the next case
// still sees the step's start.
func TestUndoInPlaceFallsBackToAReset(t *testing.T) {
	defer func(p, w time.Duration) { undoPause, undoWait = p, w }(undoPause, undoWait)
	// Long enough for the three looks of a case that wrote on a loaded
	// machine; the changed Pod waits it out once.
	undoPause, undoWait = time.Millisecond, 500*time.Millisecond
	for _, c := range []struct {
		name, script, why string
	}{
		{"cluster-object", "global admin-binding", "Node admin-binding made (a cluster object)"},
		{"exec", "exec web", "the case wrote pods/exec"},
		{"outside-home", "keep /etc/motd", "the sandbox could not be put back"},
		{"derived", "derive web-1", "Pod ns/web-1 changed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newUndoingEnv()
			env.derived["web-1"] = false
			l := startLab()
			s := &l.Steps[0]
			// The case under test runs first, then the two that see the start.
			s.Mistakes = append([]lab.Mistake{{Name: c.name, Script: c.script + "\ntouch /root/a", Fails: []string{"web", "no-a"}}}, s.Mistakes...)
			rep := runOn(t, l, env)
			if !rep.Passed {
				t.Fatalf("a lab whose promises hold failed: %v", rep.Failures())
			}
			var undo, reset *Phase
			for i := range rep.Phases {
				p := &rep.Phases[i]
				if p.Kind == Undo && undo == nil {
					undo = p
				}
				if p.Kind == Reset && reset == nil {
					reset = p
				}
			}
			if reset == nil {
				t.Fatalf("no reset after the case: %q", kinds(rep))
			}
			if !strings.Contains(reset.Note, c.why) || !strings.HasPrefix(reset.Note, "not undone in place: ") {
				t.Errorf("the reset's note is %q, want it to say %q", reset.Note, c.why)
			}
			if c.name == "derived" || c.name == "outside-home" {
				// Judged after the write-back: the undo phase is there, noting.
				if undo == nil || !strings.Contains(undo.Note, c.why) || !undo.Passed {
					t.Errorf("the undo phase %+v does not say %q", undo, c.why)
				}
			}
			if rep.Resets != 2 || rep.UndoneInPlace != 3 {
				t.Errorf("%d resets and %d cases undone in place; want 2 (this case's and the final) and 3", rep.Resets, rep.UndoneInPlace)
			}
			var b strings.Builder
			if err := WriteText(&b, rep); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), c.why) {
				t.Errorf("the text report does not say why the case was not undone in place:\n%s", b.String())
			}
		})
	}
}

// TestNodeLabCasesAreReset: in a lab whose learner is root on the nodes, a
// case may change a node where no object shows it (a kubelet fixed), so
// each case is followed by the full reset, which runs the step's setup
// again; never by an undo in place that would leave the node as the case
// left it.
func TestNodeLabCasesAreReset(t *testing.T) {
	env := newUndoingEnv()
	l := startLab()
	l.Cluster.NodeAccess = true
	rep := runOn(t, l, env)
	if !rep.Passed {
		t.Fatalf("a lab whose promises hold failed: %v", rep.Failures())
	}
	if rep.UndoneInPlace != 0 || rep.Resets != 4 {
		t.Errorf("%d cases undone in place, %d resets; want 0 and 4 (each of the three cases', and the final one)", rep.UndoneInPlace, rep.Resets)
	}
	for _, p := range rep.Phases {
		if p.Kind == Reset && p.Step == "cluster" && !strings.Contains(p.Note, "cluster.nodeAccess") && !strings.Contains(p.Note, "final") && p.Note != "" {
			t.Errorf("a reset's note %q does not say the learner is root on the nodes", p.Note)
		}
	}
}

func obj(kind, ns, name string, extra map[string]any) mutant.Object {
	md := map[string]any{"name": name, "resourceVersion": "1", "uid": "a"}
	if ns != "" {
		md["namespace"] = ns
	}
	o := map[string]any{"apiVersion": "v1", "kind": kind, "metadata": md}
	for k, v := range extra {
		if k == "metadata" {
			for mk, mv := range v.(map[string]any) {
				md[mk] = mv
			}
			continue
		}
		o[k] = v
	}
	return o
}

func TestCompareWorldSetsServerFieldsAside(t *testing.T) {
	start := []mutant.Object{
		obj("ConfigMap", "ns", "a", map[string]any{"data": map[string]any{"k": "v"}}),
		obj("Endpoints", "ns", "web", map[string]any{"subsets": []any{"10.0.0.1"}}),
	}
	now := []mutant.Object{
		obj("ConfigMap", "ns", "a", map[string]any{"data": map[string]any{"k": "v"}, "status": map[string]any{"x": 1},
			"metadata": map[string]any{"resourceVersion": "9", "uid": "b", "managedFields": []any{"m"}, "generation": 3}}),
		obj("Endpoints", "ns", "web", map[string]any{"subsets": []any{"10.0.0.2"}}),
	}
	if d := compareWorld(start, now); len(d) != 0 {
		t.Errorf("what the API server writes counts: %v", d)
	}
	now[0]["data"] = map[string]any{"k": "w"}
	if d := compareWorld(start, now); len(d) != 1 || d[0].what != "changed" {
		t.Errorf("a changed ConfigMap: %v", d)
	}
	now[0]["data"] = map[string]any{"k": "v"}
	now[0]["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-01T00:00:00Z"
	if d := compareWorld(start, now); len(d) != 1 || d[0].what != "being deleted" {
		t.Errorf("a ConfigMap being deleted: %v", d)
	}
}

func TestPlanUndo(t *testing.T) {
	owned := map[string]any{"metadata": map[string]any{"ownerReferences": []any{map[string]any{"kind": "ReplicaSet", "name": "web", "controller": true}}}}
	cm := func(name, v string) mutant.Object {
		return obj("ConfigMap", "ns", name, map[string]any{"data": map[string]any{"k": v}})
	}
	start := []mutant.Object{cm("kept", "1"), cm("changed", "1"), cm("deleted", "1"), obj("Pod", "ns", "web-1", owned), obj("Node", "", "n1", nil)}
	now := []mutant.Object{cm("kept", "1"), cm("changed", "2"), cm("made", "1"), obj("Pod", "ns", "web-1", owned), obj("Pod", "ns", "web-2", owned), obj("Node", "", "n1", nil),
		// The address of a Service the case made: the API server's.
		obj("IPAddress", "", "10.96.0.7", map[string]any{"spec": map[string]any{"parentRef": map[string]any{"resource": "services", "namespace": "ns", "name": "made"}}})}
	p := planUndo(start, now)
	names := func(os []mutant.Object) []string {
		var out []string
		for _, o := range os {
			out = append(out, mutant.Name(o))
		}
		return out
	}
	if p.why != "" || !slices.Equal(names(p.deletes), []string{"made", "web-2"}) ||
		!slices.Equal(names(p.creates), []string{"deleted"}) || !slices.Equal(names(p.replaces), []string{"changed"}) {
		t.Fatalf("plan: deletes %q creates %q replaces %q why %q", names(p.deletes), names(p.creates), names(p.replaces), p.why)
	}
	// Written back as the start had them, without what the server set.
	if r := p.replaces[0]; r["data"].(map[string]any)["k"] != "1" || r["metadata"].(map[string]any)["resourceVersion"] != nil {
		t.Errorf("replace with %v, want the start's data without its resource version", r)
	}
	for _, c := range []struct {
		name string
		now  []mutant.Object
		why  string
	}{
		{"a Pod of a workload replaced", []mutant.Object{cm("kept", "1"), cm("changed", "1"), cm("deleted", "1"), obj("Node", "", "n1", nil)},
			"Pod ns/web-1 is gone"},
		{"a node labelled", []mutant.Object{cm("kept", "1"), cm("changed", "1"), cm("deleted", "1"), obj("Pod", "ns", "web-1", owned),
			obj("Node", "", "n1", map[string]any{"metadata": map[string]any{"labels": map[string]any{"x": "y"}}})}, "Node n1 changed (a cluster object)"},
		{"a Pod with a claim made", append(slices.Clone(start), obj("Pod", "ns", "db", map[string]any{"spec": map[string]any{"volumes": []any{
			map[string]any{"name": "d", "persistentVolumeClaim": map[string]any{"claimName": "data"}}}}})), "Pod ns/db made with a volume that outlives it"},
	} {
		if p := planUndo(start, c.now); !strings.Contains(p.why, c.why) {
			t.Errorf("%s: why %q, want %q", c.name, p.why, c.why)
		}
	}
}

func TestUnrestorableWrites(t *testing.T) {
	if w := unrestorable([]string{"create configmaps ns/a", "patch deployments/scale ns/web", "delete pods ns/x"}); w != "" {
		t.Errorf("writes of objects and a scale: %q", w)
	}
	for _, w := range []string{"create pods/exec ns/web", "update deployments/status ns/web", "create pods/eviction ns/web-1"} {
		if got := unrestorable([]string{"create configmaps ns/a", w}); !strings.Contains(got, strings.Fields(w)[1]) {
			t.Errorf("%s: %q", w, got)
		}
	}
}

// TestUndoInPlaceMovesOnlyTheStepsStart: after a case undone in place, the
// step's start is now and the earlier steps' are as they were: their
// solves are not replayed, so the grade must judge their audit checks
// from their own starts (a full reset replays them, and restarts all).
func TestUndoInPlaceMovesOnlyTheStepsStart(t *testing.T) {
	l := goodLab()
	store := progress.NewStore(t.TempDir())
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0.Add(time.Hour)
	p := progress.New(l.Metadata.Name)
	p.Current = "cluster"
	p.Passed = map[string]time.Time{"files": t0.Add(time.Minute)}
	p.MarkStarted("files", t0)
	p.MarkStarted("cluster", t0.Add(time.Minute))
	if err := store.Replace(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	r := &runner{env: newUndoingEnv(), o: Options{Lab: l, Store: store, Now: func() time.Time { return now }}, rep: &Report{}}
	if err := r.restart(context.Background(), &l.Steps[1]); err != nil {
		t.Fatal(err)
	}
	got, err := store.Load(l.Metadata.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Started["files"].Equal(t0) || !got.Passed["files"].Equal(t0.Add(time.Minute)) || got.Current != "cluster" {
		t.Errorf("the earlier step's start moved: started %v, passed %v, current %q", got.Started["files"], got.Passed["files"], got.Current)
	}
	if !got.Started["cluster"].Equal(now) {
		t.Errorf("the step's start is %v, want %v", got.Started["cluster"], now)
	}
}

// TestAdoptClusterWrites: a cluster object that Kubernetes' own components
// changed since the start moves the start forward; one a case's tool wrote,
// a PersistentVolume, or a change with no newer manager's entry does not.
func TestAdoptClusterWrites(t *testing.T) {
	entry := func(manager, at string) any {
		return map[string]any{"manager": manager, "operation": "Update", "time": at}
	}
	cidr := func(finalizer bool, entries ...any) mutant.Object {
		md := map[string]any{"managedFields": entries}
		if finalizer {
			md["finalizers"] = []any{"networking.k8s.io/service-cidr-finalizer"}
		}
		return obj("ServiceCIDR", "", "kubernetes", map[string]any{"metadata": md})
	}
	start := []mutant.Object{cidr(false, entry("kube-apiserver", "t1"))}
	for _, c := range []struct {
		name  string
		now   mutant.Object
		adopt bool
	}{
		{"the controller manager's finalizer", cidr(true, entry("kube-apiserver", "t1"), entry("kube-controller-manager", "t2")), true},
		{"the API server's newer write", cidr(true, entry("kube-apiserver", "t2")), true},
		{"a controller of the API server's", cidr(true, entry("kube-apiserver", "t1"), entry("kubernetes-service-cidr-controller", "t2")), true},
		{"kubectl's write", cidr(true, entry("kube-apiserver", "t1"), entry("kubectl-edit", "t2")), false},
		{"kubectl's beside the controller's", cidr(true, entry("kube-controller-manager", "t2"), entry("kubectl-patch", "t2")), false},
		{"no newer entry", cidr(true, entry("kube-apiserver", "t1")), false},
		{"a manager named like a prefix", cidr(true, entry("kube-apiserver", "t1"), entry("kube-", "t2")), false},
	} {
		got := adoptClusterWrites(start, []mutant.Object{c.now})
		if adopted := len(compareWorld(got, []mutant.Object{c.now})) == 0; adopted != c.adopt {
			t.Errorf("%s: adopted %v, want %v", c.name, adopted, c.adopt)
		}
	}
	if d := compareWorld(start, []mutant.Object{cidr(true, entry("kube-apiserver", "t1"))}); len(d) != 1 {
		t.Fatalf("the start was changed in place: %v", d)
	}
	pv := func(claim string, at string) mutant.Object {
		return obj("PersistentVolume", "", "pv1", map[string]any{"spec": map[string]any{"claimRef": claim},
			"metadata": map[string]any{"managedFields": []any{entry("kube-controller-manager", at)}}})
	}
	if d := compareWorld(adoptClusterWrites([]mutant.Object{pv("", "t1")}, []mutant.Object{pv("ns/data", "t2")}), []mutant.Object{pv("ns/data", "t2")}); len(d) != 1 {
		t.Errorf("a volume bound by the controllers was adopted: %v", d)
	}
	ns := obj("ConfigMap", "ns", "a", map[string]any{"metadata": map[string]any{"managedFields": []any{entry("kube-controller-manager", "t2")}}, "data": map[string]any{"k": "w"}})
	if d := compareWorld(adoptClusterWrites([]mutant.Object{obj("ConfigMap", "ns", "a", nil)}, []mutant.Object{ns}), []mutant.Object{ns}); len(d) != 1 {
		t.Errorf("an object of the lab's namespaces was adopted: %v", d)
	}
}

// TestAdoptClusterObjectsKubernetesMade: a cluster object the API server
// made joins the start; one a case's tool made, or a volume, does not.
func TestAdoptClusterObjectsKubernetesMade(t *testing.T) {
	made := func(kind, manager string) mutant.Object {
		return obj(kind, "", "x", map[string]any{"metadata": map[string]any{"managedFields": []any{
			map[string]any{"manager": manager, "operation": "Update", "time": "t1"}}}})
	}
	for _, c := range []struct {
		now   mutant.Object
		adopt bool
	}{
		{made("ClusterTrustBundle", "kube-apiserver"), true},
		{made("ClusterRole", "kubectl-client-side-apply"), false},
		{made("PersistentVolume", "kube-controller-manager"), false},
		{obj("ClusterRole", "", "x", nil), false},
	} {
		now := []mutant.Object{c.now}
		if adopted := len(compareWorld(adoptClusterWrites(nil, now), now)) == 0; adopted != c.adopt {
			t.Errorf("%s by %v: adopted %v, want %v", mutant.Kind(c.now), managedFields(c.now), adopted, c.adopt)
		}
	}
}

// TestAdoptReplacements: a Pod of the start that its ReplicaSet, there
// still, replaced with another of the same making joins the start as the
// new one; a Pod a learner wrote, one of another making, one whose owner is
// gone, or a second Pod for one new one does not, and the undo waits for a
// replacement only where one can come.
func TestAdoptReplacements(t *testing.T) {
	rs := obj("ReplicaSet", "ns", "web-1", map[string]any{"metadata": map[string]any{"uid": "rs1"}})
	pod := func(name, image, mount string, managers ...string) mutant.Object {
		var entries []any
		for _, m := range managers {
			entries = append(entries, map[string]any{"manager": m, "operation": "Update", "time": "t1"})
		}
		return obj("Pod", "ns", name, map[string]any{
			"metadata": map[string]any{"uid": "u-" + name, "labels": map[string]any{"app": "web"}, "managedFields": entries,
				"ownerReferences": []any{map[string]any{"kind": "ReplicaSet", "name": "web-1", "uid": "rs1", "controller": true}}},
			"spec": map[string]any{"nodeName": "n1", "volumes": []any{map[string]any{"name": mount}},
				"containers": []any{map[string]any{"name": "web", "image": image, "volumeMounts": []any{map[string]any{"name": mount}}}}}})
	}
	k8s := []string{"kube-controller-manager", "kubelet"}
	for _, c := range []struct {
		name       string
		start, now []mutant.Object
		left       int  // differences left after adopting
		waits      bool // the plan waits for a replacement rather than gives up
	}{
		{"replaced", []mutant.Object{rs, pod("a", "nginx:1", "tok-a", k8s...)}, []mutant.Object{rs, pod("b", "nginx:1", "tok-b", k8s...)}, 0, true},
		{"labelled by hand", []mutant.Object{rs, pod("a", "nginx:1", "tok-a", "kube-controller-manager", "kubectl-label")},
			[]mutant.Object{rs, pod("b", "nginx:1", "tok-b", k8s...)}, 2, false},
		{"another image", []mutant.Object{rs, pod("a", "nginx:1", "tok-a", k8s...)}, []mutant.Object{rs, pod("b", "nginx:2", "tok-b", k8s...)}, 2, true},
		{"owner gone", []mutant.Object{rs, pod("a", "nginx:1", "tok-a", k8s...)}, []mutant.Object{pod("b", "nginx:1", "tok-b", k8s...)}, 3, false},
		{"two for one", []mutant.Object{rs, pod("a", "nginx:1", "tok-a", k8s...), pod("c", "nginx:1", "tok-c", k8s...)},
			[]mutant.Object{rs, pod("b", "nginx:1", "tok-b", k8s...)}, 1, true},
		{"not yet", []mutant.Object{rs, pod("a", "nginx:1", "tok-a", k8s...)}, []mutant.Object{rs}, 1, true},
	} {
		got := adoptReplacements(c.start, c.now)
		if d := compareWorld(got, c.now); len(d) != c.left {
			t.Errorf("%s: %d differences left (%s), want %d", c.name, len(d), describe(d), c.left)
		}
		if p := planUndo(c.start, c.now); (p.why == "") != c.waits {
			t.Errorf("%s: the plan's why is %q; waits for a replacement %v, want %v", c.name, p.why, p.why == "", c.waits)
		}
	}
	start := []mutant.Object{rs, pod("a", "nginx:1", "tok-a", k8s...)}
	adoptReplacements(start, []mutant.Object{rs, pod("b", "nginx:1", "tok-b", k8s...)})
	if mutant.Name(start[1]) != "a" {
		t.Errorf("the start was changed in place")
	}
}

// TestNotSettledNamesWhatDiffered: the reason an undo gave up names what
// differed, and never says "nothing differs" when the last look agreed.
func TestNotSettledNamesWhatDiffered(t *testing.T) {
	if got := notSettled([]difference{{ref: "ConfigMap ns/a", what: "changed"}}); !strings.Contains(got, "ConfigMap ns/a changed") {
		t.Errorf("with a difference: %q", got)
	}
	if got := notSettled(nil); strings.Contains(got, "nothing differs") || !strings.Contains(got, "looks in a row") {
		t.Errorf("after a last look that agreed: %q", got)
	}
}
