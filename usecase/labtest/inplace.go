package labtest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/mutant"
	"github.com/labctl/labctl/lab"
)

// A case (a mistake, with its way back, or an alternative) is undone in
// place when it can be: the world at the step's start is kept (the
// sandbox, every object of the lab's namespaces and of the cluster), what
// the case changed in the namespaces is written back, and the sandbox's
// /root and /tmp are put back. It counts as undone only when the objects
// then are those of the start again, with what the API server and the
// controllers write aside, and the sandbox could be put back; otherwise,
// and whenever the case did what no write of objects undoes (changed a
// cluster object or a node, ran a command in a container), the full reset
// to the step's start runs as before, and its report line says why.

// InPlaceUndoer is an Environment that can undo a case in place
// (provision's *Live on kind).
type InPlaceUndoer interface {
	// KeepCaseStart keeps the sandbox and where the learner's audit log
	// stands as the step's start under key; false when it cannot.
	KeepCaseStart(ctx context.Context, key string) bool
	// World lists every object of the lab's namespaces and of the
	// cluster, whole, as the admin reads them (labctl's own grants
	// aside).
	World(ctx context.Context) ([]map[string]any, error)
	// WriteObjects deletes, creates, then replaces objects as the admin.
	WriteObjects(ctx context.Context, deletes, creates, replaces []map[string]any) error
	// LearnerWrites lists the learner's writes in the lab's namespaces
	// since KeepCaseStart kept key ("verb resource[/subresource] ns/name").
	LearnerWrites(key string) ([]string, error)
	// RestoreCaseStart puts the sandbox back as kept under key and
	// reports whether it could.
	RestoreCaseStart(ctx context.Context, key string) bool
}

// worldLook is one listing of the lab's objects, taken ahead of the undo.
type worldLook struct {
	objects []mutant.Object
	err     error
}

// lookAhead starts the undo's first look at the lab's objects now, the
// case's last script done, while its checks run, when those only read: the
// step has no probe (which changes the lab and puts it back), and its
// checks and its mistakes' evidence read files, repositories, objects and
// the audit log, nothing that makes objects of its own. The look is what
// the case left; the undo takes it for its first (settle).
func (r *runner) lookAhead(ctx context.Context, s *lab.Step) {
	r.ahead = nil
	u, ok := r.env.(InPlaceUndoer)
	if !ok || r.start == nil || r.start.step != s.ID || r.start.why != "" || !onlyReads(s) {
		return
	}
	ahead := make(chan worldLook, 1)
	go func() {
		objs, err := u.World(ctx)
		ahead <- worldLook{objs, err}
	}()
	r.ahead = ahead
}

// onlyReads says whether step s has no probe, and its checks and its
// mistakes' evidence are all of the kinds that only read.
func onlyReads(s *lab.Step) bool {
	if s.Probe != nil {
		return false
	}
	reads := func(cs []lab.Check) bool {
		for i := range cs {
			c := &cs[i]
			if c.Access != nil || c.Permissions != nil || c.Reach != nil || c.Matrix != nil || c.Command != nil {
				return false
			}
		}
		return true
	}
	if !reads(s.Checks) {
		return false
	}
	for i := range s.Mistakes {
		if !reads(s.Mistakes[i].Evidence) {
			return false
		}
	}
	return true
}

// caseStart is the world at the start of a step, for undoing its cases.
type caseStart struct {
	step    string
	objects []mutant.Object
	// why, when set, says why no case of this start can be undone in
	// place.
	why string
	// writes counts the learner's writes since the start that the cases
	// undone so far made: those after are the current case's.
	writes int
}

// Bounds of the wait for the controllers once the objects are written
// back: looks a pause apart, for at most undoWait, and how many in a row
// must find the start.
var (
	undoPause = 250 * time.Millisecond
	undoWait  = 10 * time.Second
)

const undoAgree = 2

// keepStart keeps the step's start before its first case, and again after
// each full reset; nil when in-place undo is not possible at all.
func (r *runner) keepStart(ctx context.Context, s *lab.Step) {
	if r.start != nil && r.start.step == s.ID {
		return
	}
	if r.o.Lab.Cluster.NodeAccess {
		// The learner is root on the nodes: a case may change a node (its
		// files, the kubelet) where no object, and no write in the audit
		// log, shows it, and only the step's setup puts it back.
		r.start = &caseStart{step: s.ID, why: "the lab's learner is root on its nodes (cluster.nodeAccess), where a case may change what no object shows"}
		return
	}
	u, ok := r.env.(InPlaceUndoer)
	if !ok {
		r.start = &caseStart{step: s.ID, why: "this environment cannot undo a case in place"}
		return
	}
	began := r.o.Now()
	defer func() { r.rep.UndoTime += r.o.Now().Sub(began) }()
	if !u.KeepCaseStart(ctx, s.ID) {
		r.start = &caseStart{step: s.ID, why: "the sandbox could not be kept at the step's start (a process left running, or no audit log)"}
		return
	}
	objs, err := u.World(ctx)
	if err != nil {
		r.start = &caseStart{step: s.ID, why: "the lab's objects could not be listed at the step's start: " + err.Error()}
		return
	}
	r.start = &caseStart{step: s.ID, objects: objs}
}

// undoCase brings the lab back to the start of step s after script (a
// case): in place when it can prove the start, else by a full reset.
func (r *runner) undoCase(ctx context.Context, s *lab.Step, script string) {
	// A look taken ahead belongs to this case only.
	defer func() { r.ahead = nil }()
	var why string
	if r.start == nil || r.start.step != s.ID {
		why = "the step's start was not kept"
	} else if why = r.start.why; why == "" {
		r.phase(Phase{Step: s.ID, Kind: Undo, Script: script}, fmt.Sprintf("%s: undoing %s in place", r.stepTitle(s), script), func(p *Phase) {
			began := r.o.Now()
			why = r.undoInPlace(ctx, s)
			r.rep.UndoTime += r.o.Now().Sub(began)
			if why == "" {
				r.rep.UndoneInPlace++
				return
			}
			// Not a failure of the lab: the full reset follows.
			p.Note = "could not prove the step's start, so a full reset follows: " + why
		})
		if why == "" {
			return
		}
	}
	r.start = nil
	r.phase(Phase{Step: s.ID, Kind: Reset, Note: "not undone in place: " + why},
		fmt.Sprintf("%s: resetting to its start after %s (not undone in place: %s)", r.stepTitle(s), script, why), func(p *Phase) {
			r.reset(ctx, p, s.ID)
		})
}

// undoInPlace undoes the last case and says why it could not, "" when the
// lab is at the step's start again. The sandbox is put back, and the
// step's start noted, while the objects are written back and settle:
// neither needs the other.
func (r *runner) undoInPlace(ctx context.Context, s *lab.Step) string {
	u := r.env.(InPlaceUndoer)
	writes, err := u.LearnerWrites(s.ID)
	if err != nil {
		return "what the case wrote could not be read: " + err.Error()
	}
	if why := unrestorable(writes); why != "" {
		return why
	}
	back := make(chan string, 1)
	go func() {
		switch {
		case !u.RestoreCaseStart(ctx, s.ID):
			back <- "the sandbox could not be put back in place (a process left running, or a file changed outside /root and /tmp)"
		default:
			// Where the step's repositories are is read from /root, put
			// back now; the objects are no part of it.
			if err := r.restart(ctx, s); err != nil {
				back <- "the step's start could not be noted in the progress: " + err.Error()
				return
			}
			back <- ""
		}
	}()
	quiet := quietCase(s, r.start.writes, len(writes))
	r.start.writes = len(writes)
	why := r.settle(ctx, u, quiet)
	if sandbox := <-back; why == "" {
		why = sandbox
	}
	return why
}

// settle writes back what differs from the start's objects, and looks
// again, for at most undoWait, until undoAgree looks in a row find
// them: each look deletes, once, what the start lacks (what the case made,
// and what the controllers made of it, a Pod of a Deployment it made), and
// writes again what it had and differs, which the controllers may have
// changed since (a write lost to a conflict). After a quiet case (one
// the audit log has no write of in the lab's namespaces, with checks that
// only read: quietCase) the first look is enough when it finds the start: nothing was written for the
// controllers to answer, by the case or by the undo, and what the case
// wrote outside the namespaces is there to be seen in that look.
func (r *runner) settle(ctx context.Context, u InPlaceUndoer, quiet bool) string {
	deleted := map[string]bool{}
	agree := 0
	var last []difference
	deadline := r.o.Now().Add(undoWait)
	for look := 0; look == 0 || r.o.Now().Before(deadline); look++ {
		if look > 0 {
			t := time.NewTimer(undoPause)
			select {
			case <-ctx.Done():
				t.Stop()
				return "interrupted"
			case <-t.C:
			}
		}
		var now []mutant.Object
		var err error
		if look == 0 && r.ahead != nil {
			l := <-r.ahead
			now, err = l.objects, l.err
		} else {
			now, err = u.World(ctx)
		}
		if err != nil {
			return "the lab's objects could not be listed: " + err.Error()
		}
		r.start.objects = adoptReplacements(adoptClusterWrites(r.start.objects, now), now)
		if last = compareWorld(r.start.objects, now); len(last) == 0 {
			if agree++; agree >= undoAgree || quiet && look == 0 {
				return ""
			}
			continue
		}
		agree = 0
		plan := planUndo(r.start.objects, now)
		if plan.why != "" {
			return plan.why
		}
		var gone []map[string]any
		for _, o := range plan.deletes {
			if k := mutant.Key(o); !deleted[k] {
				deleted[k] = true
				gone = append(gone, o)
			}
		}
		if len(gone)+len(plan.creates)+len(plan.replaces) > 0 {
			if err := u.WriteObjects(ctx, gone, plan.creates, plan.replaces); err != nil {
				return err.Error()
			}
		}
	}
	return notSettled(last)
}

// notSettled says why the undo gave up when its time ran out: what the
// last look found differing, or, when that look found the start, that no
// two looks in a row did (the objects came and went: a control plane
// restarting, a controller undoing the undo).
func notSettled(last []difference) string {
	if len(last) == 0 {
		return fmt.Sprintf("the lab's objects did not stay those of the step's start for %d looks in a row within %s after the undo", undoAgree, undoWait)
	}
	return fmt.Sprintf("the lab's objects were not those of the step's start %s after the undo: %s", undoWait, describe(last))
}

// quietCase says whether the case of step s wrote nothing in the lab's
// namespaces (of the learner's writes since the step's start, the audit
// log has writes, and had seen before the case), and its checks wrote
// nothing either: they only read (a probe writes as itself, which the log
// leaves out).
func quietCase(s *lab.Step, seen, writes int) bool {
	return writes == seen && onlyReads(s)
}

// restart notes in the test's progress that step s starts now, as
// stepStarted does when the step becomes current: its audit checks judge
// what follows the undo, and its checks that count commits count from
// where its repositories are. The earlier steps keep their starts: their
// solves are not replayed, and the grade judges each step's checks (a
// scale recorded in its step) from its own start.
func (r *runner) restart(ctx context.Context, s *lab.Step) error {
	now := r.o.Now()
	if err := r.o.Store.Update(ctx, r.o.Lab.Metadata.Name, func(p *progress.Progress) error {
		p.MarkStarted(s.ID, now)
		p.UpdatedAt = now.UTC()
		return nil
	}); err != nil {
		return err
	}
	return grading.NoteStart(ctx, r.env, r.o.Store, r.o.Lab, s)
}

// unrestorable says which of the learner's writes no write of objects
// undoes, "" when none: a command run in a container, a status or a
// binding written. A scale is a write of the spec, which the undo restores.
func unrestorable(writes []string) string {
	for _, w := range writes {
		f := strings.Fields(w)
		if len(f) < 2 {
			continue
		}
		_, sub, ok := strings.Cut(f[1], "/")
		if ok && sub != "scale" {
			return fmt.Sprintf("the case wrote %s (%s), which no write of objects undoes", f[1], w)
		}
	}
	return ""
}

// undoPlan is what brings the lab's objects back to a step's start, or why
// nothing can.
type undoPlan struct {
	deletes, creates, replaces []mutant.Object
	why                        string
}

// planUndo compares now with start and says what to write back: delete
// what the start lacks, create what it had and is gone, replace what
// changed, each as the start had it. Objects the controllers derive (those
// with a controlling owner, Endpoints, EndpointSlices) are never written
// but deleted when the start lacks them: their owners make them again; so
// are the API server's records of the Services' addresses. It cannot when
// another cluster object differs (the undo writes only in the lab's
// namespaces), or a derived object of the start is gone (its owner makes
// another under another name; a Service's Endpoints come back under its
// name).
func planUndo(start, now []mutant.Object) undoPlan {
	var p undoPlan
	before := index(start)
	after := index(now)
	uids := uidsOf(now)
	for _, d := range compareWorld(start, now) {
		s, n := before[d.key], after[d.key]
		o := n
		if o == nil {
			o = s
		}
		switch {
		case s == nil && mutant.Kind(n) == "Pod" && keepsData(n):
			return undoPlan{why: fmt.Sprintf("%s %s with a volume that outlives it (a claim or a node's path), which may hold what it wrote", mutant.Ref(n), d.what)}
		case addressOf(o):
			// The API server's own, made and removed with its Service.
		case mutant.Namespace(o) == "":
			return undoPlan{why: fmt.Sprintf("%s %s (a cluster object), which the undo does not write", mutant.Ref(o), d.what)}
		case s == nil:
			p.deletes = append(p.deletes, n)
		case derived(s) && n == nil && mutant.Kind(s) != "Endpoints" && !replaceable(s, uids):
			return undoPlan{why: fmt.Sprintf("%s is gone, and its owner makes another under another name", mutant.Ref(s))}
		case derived(s) && n == nil:
			// Its owner, there still, makes another in its place, which a
			// later look adopts (adoptReplacements).
		case derived(s):
			// Its owner, written back, brings it back.
		case n == nil:
			p.creates = append(p.creates, mutant.Clean(s))
		default:
			p.replaces = append(p.replaces, mutant.Clean(s))
		}
	}
	return p
}

// difference is one way the lab's objects differ from a step's start.
type difference struct {
	key, ref, what string
}

// compareWorld lists how now differs from start, by object identity, in
// the order of identities: an object made, gone, going (being deleted) or
// changed. What the API server and the controllers write (status, resource
// version, uid, generation, managed fields, times, a Deployment's revision)
// is set aside, and so is all but the presence of Endpoints and
// EndpointSlices, which follow from their Service and its Pods.
func compareWorld(start, now []mutant.Object) []difference {
	before := index(start)
	after := index(now)
	keys := make([]string, 0, len(before)+len(after))
	for k := range before {
		keys = append(keys, k)
	}
	for k := range after {
		if before[k] == nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []difference
	for _, k := range keys {
		s, n := before[k], after[k]
		ref := func(what string) difference {
			if n != nil {
				return difference{k, mutant.Ref(n), what}
			}
			return difference{k, mutant.Ref(s), what}
		}
		switch {
		case s == nil:
			out = append(out, ref("made"))
		case n == nil:
			out = append(out, ref("gone"))
		case going(n) && !going(s):
			out = append(out, ref("being deleted"))
		case endpoints(s):
		case !mutant.Equal(mutant.Clean(s), mutant.Clean(n)):
			out = append(out, ref("changed"))
		}
	}
	return out
}

// describe names the first few differences.
func describe(ds []difference) string {
	const most = 5
	var parts []string
	for i, d := range ds {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(ds)-most))
			break
		}
		parts = append(parts, d.ref+" "+d.what)
	}
	if len(parts) == 0 {
		return "nothing differs"
	}
	return strings.Join(parts, ", ")
}

func index(objs []mutant.Object) map[string]mutant.Object {
	m := make(map[string]mutant.Object, len(objs))
	for _, o := range objs {
		m[mutant.Key(o)] = o
	}
	return m
}

// derived says whether the controllers make o: it has a controlling owner,
// or it is a Service's endpoints.
func derived(o mutant.Object) bool {
	if endpoints(o) {
		return true
	}
	md, _ := o["metadata"].(map[string]any)
	refs, _ := md["ownerReferences"].([]any)
	for _, r := range refs {
		if ref, _ := r.(map[string]any); ref != nil && ref["controller"] == true {
			return true
		}
	}
	return false
}

// keepsData says whether Pod o mounts a volume that outlives it.
func keepsData(o mutant.Object) bool {
	spec, _ := o["spec"].(map[string]any)
	vols, _ := spec["volumes"].([]any)
	for _, v := range vols {
		if m, _ := v.(map[string]any); m != nil && (m["persistentVolumeClaim"] != nil || m["hostPath"] != nil || m["ephemeral"] != nil) {
			return true
		}
	}
	return false
}

// addressOf says whether o is the API server's record of a Service's
// address (an IPAddress with a Service for parent): it comes and goes
// with its Service, under the name of the address, which a Service
// written back keeps.
func addressOf(o mutant.Object) bool {
	spec, _ := o["spec"].(map[string]any)
	parent, _ := spec["parentRef"].(map[string]any)
	return mutant.Kind(o) == "IPAddress" && parent["resource"] == "services"
}

func endpoints(o mutant.Object) bool {
	k := mutant.Kind(o)
	return k == "Endpoints" || k == "EndpointSlice"
}

func going(o mutant.Object) bool {
	md, _ := o["metadata"].(map[string]any)
	return md["deletionTimestamp"] != nil
}

// adoptReplacements moves the start forward where an object of the start
// that a controller made (a Pod of a ReplicaSet) is gone and its owner,
// there still (the same uid), made another in its place: the new one joins
// the start instead. Both must have been written by Kubernetes alone (a
// Pod a learner labelled or patched is no one's to replace) and carry the
// same labels, annotations and containers (mounts aside: a Pod's token
// volume has a name of its own); each gone object is paired with one new
// object at most. The owner itself is compared with the start as ever.
func adoptReplacements(start, now []mutant.Object) []mutant.Object {
	before, after := index(start), index(now)
	uids := uidsOf(now)
	made := map[string][]mutant.Object{}
	for _, n := range now {
		if before[mutant.Key(n)] != nil || going(n) || !writtenByKubernetes(n) {
			continue
		}
		if o := controller(n); o != "" {
			made[mutant.Kind(n)+" "+o] = append(made[mutant.Kind(n)+" "+o], n)
		}
	}
	var out []mutant.Object
	for i, s := range start {
		if after[mutant.Key(s)] != nil || !replaceable(s, uids) {
			continue
		}
		k := mutant.Kind(s) + " " + controller(s)
		j := slices.IndexFunc(made[k], func(n mutant.Object) bool { return sameMaking(s, n) })
		if j < 0 {
			continue
		}
		if out == nil {
			out = slices.Clone(start)
		}
		out[i] = made[k][j]
		made[k] = slices.Delete(made[k], j, j+1)
	}
	if out == nil {
		return start
	}
	return out
}

// replaceable says whether s, made by a controller and written by
// Kubernetes alone, has its controller among the objects of uids.
func replaceable(s mutant.Object, uids map[string]bool) bool {
	o := controller(s)
	return o != "" && uids[o] && writtenByKubernetes(s)
}

// controller is the uid of o's controlling owner, "" when none.
func controller(o mutant.Object) string {
	md, _ := o["metadata"].(map[string]any)
	refs, _ := md["ownerReferences"].([]any)
	for _, r := range refs {
		if ref, _ := r.(map[string]any); ref != nil && ref["controller"] == true {
			uid, _ := ref["uid"].(string)
			return uid
		}
	}
	return ""
}

func uidsOf(objs []mutant.Object) map[string]bool {
	m := make(map[string]bool, len(objs))
	for _, o := range objs {
		md, _ := o["metadata"].(map[string]any)
		if uid, _ := md["uid"].(string); uid != "" {
			m[uid] = true
		}
	}
	return m
}

// writtenByKubernetes says whether every field manager of o is one of
// Kubernetes' own, and there is one.
func writtenByKubernetes(o mutant.Object) bool {
	es := managedFields(o)
	for _, e := range es {
		if !kubernetesManager(e.manager) {
			return false
		}
	}
	return len(es) > 0
}

// sameMaking says whether a and b carry the same labels, annotations and
// containers, their mounts and volumes aside: two Pods their owner made
// from one template.
func sameMaking(a, b mutant.Object) bool {
	part := func(o mutant.Object) map[string]any {
		md, _ := o["metadata"].(map[string]any)
		spec, _ := mutant.Copy(o)["spec"].(map[string]any)
		out := map[string]any{"labels": md["labels"], "annotations": md["annotations"]}
		for _, k := range []string{"containers", "initContainers"} {
			cs, _ := spec[k].([]any)
			for _, c := range cs {
				if m, _ := c.(map[string]any); m != nil {
					delete(m, "volumeMounts")
				}
			}
			out[k] = spec[k]
		}
		return out
	}
	return mutant.Equal(part(a), part(b))
}

// kubernetesManagers are the field managers of Kubernetes' own components
// (the API server, its built-in controllers, the node agents), by name or
// by a name's beginning.
var kubernetesManagers = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy",
	"kubernetes-", "api-priority-and-fairness-"}

// adoptClusterWrites moves the start forward where Kubernetes itself
// made or changed a cluster object since: a fresh cluster's API server and
// controllers finish their first writes some seconds after it answers (a
// ClusterTrustBundle of its serving certificates, a taint lifted from a
// node, the default ServiceCIDR's finalizer). Such an object joins the
// start as it is now when every field manager whose entry is new or newer
// is Kubernetes' own. A case that makes or changes a cluster object writes
// with its own tool's manager (kubectl's, helm's) and still sends the test
// to a full reset; so does a PersistentVolume, which the controllers make,
// bind and release after the lab's claims, which a case makes.
func adoptClusterWrites(start, now []mutant.Object) []mutant.Object {
	before := index(start)
	var out []mutant.Object
	for _, n := range now {
		if mutant.Namespace(n) != "" || mutant.Kind(n) == "PersistentVolume" || addressOf(n) {
			continue
		}
		s := before[mutant.Key(n)]
		// The managers first: most looks find no newer entry, and no copy is made.
		if !byKubernetesOnly(s, n) || s != nil && mutant.Equal(mutant.Clean(s), mutant.Clean(n)) {
			continue
		}
		if out == nil {
			out = slices.Clone(start)
		}
		if s == nil {
			out = append(out, n)
			continue
		}
		out[slices.IndexFunc(out, func(o mutant.Object) bool { return mutant.Key(o) == mutant.Key(n) })] = n
	}
	if out == nil {
		return start
	}
	return out
}

// byKubernetesOnly says whether n differs from s (nil: n is new) by
// Kubernetes' own writes: at least one field manager's entry is new or
// newer, and each such is one of kubernetesManagers.
func byKubernetesOnly(s, n mutant.Object) bool {
	seen := map[string]string{}
	for _, e := range managedFields(s) {
		seen[e.id] = e.time
	}
	changed := false
	for _, e := range managedFields(n) {
		if t, ok := seen[e.id]; ok && t == e.time {
			continue
		}
		changed = true
		if !kubernetesManager(e.manager) {
			return false
		}
	}
	return changed
}

// kubernetesManager says whether manager is one of kubernetesManagers.
func kubernetesManager(manager string) bool {
	return slices.ContainsFunc(kubernetesManagers, func(k string) bool {
		return manager == k || (strings.HasSuffix(k, "-") && strings.HasPrefix(manager, k))
	})
}

type managedEntry struct{ id, manager, time string }

func managedFields(o mutant.Object) []managedEntry {
	md, _ := o["metadata"].(map[string]any)
	list, _ := md["managedFields"].([]any)
	var out []managedEntry
	for _, x := range list {
		m, _ := x.(map[string]any)
		manager, _ := m["manager"].(string)
		op, _ := m["operation"].(string)
		sub, _ := m["subresource"].(string)
		t, _ := m["time"].(string)
		out = append(out, managedEntry{manager + " " + op + " " + sub, manager, t})
	}
	return out
}
