package labtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/internal/mutant"
	"github.com/labctl/labctl/lab"
)

// Snapshotter is an Environment that can list the lab's objects, as its
// admin sees them: every object of the kinds the mutant catalogue knows,
// and ServiceAccounts, in the lab's namespaces, and the cluster's
// ClusterRoles and ClusterRoleBindings. `labctl test --mutate` needs it.
type Snapshotter interface {
	Snapshot(ctx context.Context) ([]map[string]any, error)
}

// Mutants is what --mutate found of one step's solve.
type Mutants struct {
	// Generated counts the mutants made from the solve; Applied those the
	// learner's identity could apply, NotApplicable the others; Killed
	// those after which some check failed; Survivors those after which
	// every check passed, declared right by an alternative or not.
	Generated     int `json:"generated"`
	Applied       int `json:"applied"`
	Killed        int `json:"killed"`
	Survivors     int `json:"survivors"`
	NotApplicable int `json:"notApplicable"`
	// Survived lists the survivors, declared ones with their alternative.
	Survived []Survivor `json:"survived,omitempty"`
	// NotApplied lists the mutants the learner's identity could not apply.
	NotApplied []NotApplied `json:"notApplied,omitempty"`
	// Each is the time of one applied mutant (apply, round, undo), and
	// Round that of one checker round of the step, on average.
	Each  time.Duration `json:"-"`
	Round time.Duration `json:"-"`
}

// Survivor is a mutant after which every check of the step passes.
type Survivor struct {
	ID string `json:"id"`
	// Diff is the mutant's changed lines of YAML ("-" before, "+" after).
	Diff string `json:"diff"`
	// Alternative names the alternative that declares it right; empty for
	// a probable misgrade.
	Alternative string `json:"alternative,omitempty"`
}

// MarshalJSON writes the times as integer milliseconds (eachMs, roundMs).
func (m Mutants) MarshalJSON() ([]byte, error) {
	type plain Mutants
	return json.Marshal(struct {
		plain
		EachMs  int64 `json:"eachMs"`
		RoundMs int64 `json:"roundMs"`
	}{plain(m), m.Each.Milliseconds(), m.Round.Milliseconds()})
}

// NotApplied is a mutant the learner could not apply, and what kubectl
// said.
type NotApplied struct {
	ID  string `json:"id"`
	Why string `json:"why"`
}

// String writes the counts as a status line does.
func (m *Mutants) String() string {
	declared := 0
	for _, s := range m.Survived {
		if s.Alternative != "" {
			declared++
		}
	}
	sv := fmt.Sprintf("%d %s", m.Survivors, plural(m.Survivors, "survivor"))
	if declared > 0 {
		sv += fmt.Sprintf(" (%d declared right)", declared)
	}
	return fmt.Sprintf("%d generated, %d applied, %d killed, %s, %d not applicable", m.Generated, m.Applied, m.Killed, sv, m.NotApplicable)
}

// snapshot lists the lab's objects at the step's start for --mutate; a
// failure to is the mutate phase's, later.
func (r *runner) snapshot(ctx context.Context) ([]mutant.Object, error) {
	sn, ok := r.env.(Snapshotter)
	if !ok {
		return nil, fmt.Errorf("this environment cannot list the lab's objects, so no mutant can be made")
	}
	objs, err := sn.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the lab's objects: %w", err)
	}
	return objs, nil
}

// mutate makes the mutants of the step's solve from the objects it made or
// changed since start, applies each in place as the learner would, runs
// the step's checks once, and undoes it. A mutant every check lets pass is
// a survivor: a failure unless an alternative declares it right. Declared
// mutants that no longer survive are failures too. Once every mutant is
// undone, the checks must pass again.
func (r *runner) mutate(ctx context.Context, s *lab.Step, start []mutant.Object, startErr error) {
	var ms Mutants
	title := r.stepTitle(s) + ": every mutant of the solve fails a check"
	r.phase(Phase{Step: s.ID, Kind: Mutate, Mutants: &ms}, title, func(p *Phase) {
		if startErr != nil {
			p.fail(s.ID, "", "", startErr.Error())
			return
		}
		end, err := r.snapshot(ctx)
		if err != nil {
			p.fail(s.ID, "", "", err.Error())
			return
		}
		declared := map[string]string{}
		for _, a := range s.Alternatives {
			if a.Mutant != "" {
				declared[a.Mutant] = a.Name
			}
		}
		all := mutant.Generate(start, end, r.o.Lab.Cluster.Namespaces)
		ms.Generated = len(all)
		outcome := map[string]string{}
		var spent, rounds time.Duration
		for _, m := range all {
			if r.stopped {
				return
			}
			began := r.o.Now()
			what, round := r.oneMutant(ctx, p, s, m, declared, &ms)
			outcome[m.ID] = what
			if what != "not applicable" {
				spent += r.o.Now().Sub(began)
				rounds += round
			}
		}
		if ms.Applied > 0 {
			ms.Each, ms.Round = spent/time.Duration(ms.Applied), rounds/time.Duration(ms.Applied)
		}
		if r.stopped {
			return
		}
		r.stillPasses(ctx, p, s)
		names := make([]string, 0, len(declared))
		for id := range declared {
			names = append(names, id)
		}
		sort.Strings(names)
		for _, id := range names {
			alt := ScriptAlternative + " " + declared[id]
			switch what := outcome[id]; what {
			case "survivor":
			case "":
				p.fail(s.ID, alt, "", fmt.Sprintf("declares mutant %q right, but --mutate no longer makes it from the solve; remove the alternative", id))
			default:
				p.fail(s.ID, alt, "", fmt.Sprintf("declares mutant %q right, but it is %s now, no longer a right answer every check passes; remove the alternative", id, what))
			}
		}
	})
	ok := r.rep.Phases[len(r.rep.Phases)-1].Passed
	r.o.Status.Start(fmt.Sprintf("%s: mutants: %s", r.stepTitle(s), ms.String()))
	r.o.Status.End(ok)
}

// oneMutant applies m, runs the round, undoes m, and says what m was:
// "killed", "survivor" or "not applicable"; round is the time of its
// checker round.
func (r *runner) oneMutant(ctx context.Context, p *Phase, s *lab.Step, m mutant.Mutant, declared map[string]string, ms *Mutants) (what string, round time.Duration) {
	script := "mutant " + m.ID
	edits := writes(m.Edits)
	done, why := r.apply(ctx, edits)
	if done < len(edits) {
		// What was applied of it is taken back before the next.
		if !r.undo(ctx, p, s, script, edits[:done]) {
			return "not applicable", 0
		}
		ms.NotApplicable++
		ms.NotApplied = append(ms.NotApplied, NotApplied{ID: m.ID, Why: why})
		return "not applicable", 0
	}
	ms.Applied++
	began := r.o.Now()
	passed, judged, ok := r.round(ctx, p, s, script)
	round = r.o.Now().Sub(began)
	if ok && (passed || !judged) {
		// A moment later, in case what the mutant changed took time to
		// take effect (a network policy, a rollout), or a check could not
		// judge it. A check that still cannot counts it killed.
		if !r.sleep(ctx, p, s, script) {
			return "", round
		}
		passed, _, ok = r.round(ctx, p, s, script)
	}
	if !ok {
		return "", round
	}
	what = "killed"
	if passed {
		what = "survivor"
		sv := Survivor{ID: m.ID, Diff: mutant.Diff(m), Alternative: declared[m.ID]}
		ms.Survivors++
		ms.Survived = append(ms.Survived, sv)
		if sv.Alternative == "" {
			p.fail(s.ID, script, "", "every check passes after this mutant, a probable misgrade: add a check it fails, "+
				"or, if it is right, declare it an alternative (mutant, with why):\n"+sv.Diff)
		}
	} else {
		ms.Killed++
	}
	if !r.undo(ctx, p, s, script, edits) {
		return "", round
	}
	return what, round
}

// writes splits each edit that recreates an object into its delete and
// its create, so that a create the API refuses after the delete went
// through is undone like any write that was applied.
func writes(edits []mutant.Edit) []mutant.Edit {
	var out []mutant.Edit
	for _, e := range edits {
		if e.Recreate && e.From != nil && e.To != nil {
			out = append(out, mutant.Edit{From: e.From}, mutant.Edit{To: e.To})
			continue
		}
		out = append(out, e)
	}
	return out
}

// round runs the step's checks once and says whether every one passed and
// whether every one could judge; a round that cannot run stops the test.
func (r *runner) round(ctx context.Context, p *Phase, s *lab.Step, script string) (passed, judged, ok bool) {
	rs, err := runStep(ctx, r.env, s, r.mutateWindows(s), r.o.Now)
	if err != nil {
		p.fail(s.ID, script, "", err.Error())
		r.stopped = true
		return false, false, false
	}
	for _, res := range rs {
		if res.Status == checks.Error {
			return false, false, true
		}
	}
	return checks.StepPassed(rs), true, true
}

func (r *runner) sleep(ctx context.Context, p *Phase, s *lab.Step, script string) bool {
	t := time.NewTimer(r.o.Pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		p.fail(s.ID, script, "", "interrupted: "+ctx.Err().Error())
		r.stopped = true
		return false
	case <-t.C:
		return true
	}
}

// apply runs the edits as the learner, in order, and returns how many it
// ran; when one fails, why says how (the end of kubectl's output).
func (r *runner) apply(ctx context.Context, edits []mutant.Edit) (done int, why string) {
	for i, e := range edits {
		if ok, out := r.kubectl(ctx, e, false); !ok {
			return i, out
		}
	}
	return len(edits), ""
}

// undo takes edits back, the last first, restoring each object exactly as
// it was saved; when one cannot be, the environment is in no known state
// and the test stops.
func (r *runner) undo(ctx context.Context, p *Phase, s *lab.Step, script string, edits []mutant.Edit) bool {
	m := mutant.Mutant{Edits: edits}
	for _, e := range m.Undo() {
		if ok, out := r.kubectl(ctx, e, true); !ok {
			p.fail(s.ID, script, "", "undoing it failed, so the lab is not back at the solve's end; stopping: "+out)
			r.stopped = true
			return false
		}
	}
	now := r.o.Now()
	for _, c := range s.Checks {
		if c.Audit != nil && c.Audit.Absent {
			if r.undone == nil {
				r.undone = map[*lab.AuditCheck]time.Time{}
			}
			r.undone[c.Audit] = now
		}
	}
	return true
}

// mutateWindows are the audit windows of the step's checks in the mutate
// phase (afterMutants).
func (r *runner) mutateWindows(s *lab.Step) checks.Windows {
	return r.afterMutants(s.Checks)
}

// afterMutants are the windows of the checks cs, in which a check that asks
// for an absence (nothing deleted, no Pod labelled by hand) judges only
// what happened since the last mutant of its step was undone: the API
// server keeps the record of an undone mutant's write, and it is no part
// of the next mutant's wrong answer, nor of the solve's (which passed it
// before the mutants), nor of the final grade's.
func (r *runner) afterMutants(cs []lab.Check) checks.Windows {
	w := grading.Windows(r.o.Lab, r.progress(), cs)
	if len(r.undone) == 0 {
		return w
	}
	since := make([]time.Time, len(cs))
	copy(since, w.Since)
	for i, c := range cs {
		if at, ok := r.undone[c.Audit]; ok && c.Audit != nil && since[i].Before(at) {
			since[i] = at
		}
	}
	w.Since = since
	return w
}

// stillPasses runs the step's checks after every mutant was undone: they
// must pass as they did after the solve, a few tries a pause apart.
func (r *runner) stillPasses(ctx context.Context, p *Phase, s *lab.Step) {
	const tries = 3
	for i := 0; i < tries; i++ {
		rs, err := runStep(ctx, r.env, s, r.mutateWindows(s), r.o.Now)
		if err != nil {
			p.fail(s.ID, "", "", err.Error())
			r.stopped = true
			return
		}
		if checks.StepPassed(rs) {
			return
		}
		if i == tries-1 {
			for _, f := range notPassing(s.ID, "", rs) {
				f.Message = "after every mutant was undone, the check does not pass as after the solve, so undoing them failed; stopping: " + f.Message
				p.Failures = append(p.Failures, f)
			}
			r.stopped = true
			return
		}
		if !r.sleep(ctx, p, s, "") {
			return
		}
	}
}

// rolledOut are the kinds whose change rolls Pods out: the mutant waits
// for it, as a learner would, before the round.
var rolledOut = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true}

// kubectl runs one edit in the sandbox as the learner would, the object
// in a heredoc (or kubectl label for Pods), and reports whether it
// succeeded, with the end of its output when not. back says that the edit
// takes a mutant back: Pods to relabel may be gone then (their workload
// replaced them, without the mutant's labels), which is no failure.
func (r *runner) kubectl(ctx context.Context, e mutant.Edit, back bool) (bool, string) {
	var b strings.Builder
	b.WriteString("set -e\n")
	doc := func(verb string, o mutant.Object) {
		j, _ := json.Marshal(o)
		fmt.Fprintf(&b, "kubectl %s -f - <<'LABCTL_MUTANT'\n%s\nLABCTL_MUTANT\n", verb, j)
	}
	switch {
	case e.Label != nil:
		relabel(&b, e.Label, back)
	case e.From == nil:
		doc("create", e.To)
	case e.To == nil:
		doc("delete --wait=true", e.From)
	default:
		doc("replace", e.To)
	}
	// A lab whose checks only read what the API server stores (workloads:
	// declare) has no rollout worth waiting for.
	if o := e.To; o != nil && rolledOut[mutant.Kind(o)] && r.o.Lab.Cluster.Workloads != "declare" {
		fmt.Fprintf(&b, "kubectl -n %s rollout status --timeout=30s %s/%s >/dev/null 2>&1 || true\n",
			mutant.Namespace(o), strings.ToLower(mutant.Kind(o)), mutant.Name(o))
	}
	var buf bytes.Buffer
	code, err := 0, error(nil)
	// kubectl replace sends the version it read, so that a controller's
	// write in between (a Deployment's status) is a conflict: try again.
	for try := 0; try < 3; try++ {
		buf.Reset()
		w := io.Writer(&buf)
		if r.o.ScriptOutput != nil {
			w = io.MultiWriter(&buf, r.o.ScriptOutput)
		}
		code, err = r.env.RunScript(ctx, b.String(), w, w)
		if err != nil || code == 0 || !strings.Contains(buf.String(), "(Conflict)") {
			break
		}
	}
	if err != nil {
		return false, err.Error()
	}
	if code != 0 {
		out := strings.TrimSpace(buf.String())
		if i := strings.LastIndex(out, "\n"); i >= 0 {
			out = out[i+1:]
		}
		return false, out
	}
	return true, ""
}

// relabel writes the script that labels the Pods l selects as the learner
// would, kubectl label --overwrite; with none to label, it fails unless
// back.
func relabel(b *strings.Builder, l *mutant.Relabel, back bool) {
	sel := shellQuote(l.SelectorString())
	fmt.Fprintf(b, "pods=$(kubectl -n %s get pods -l %s -o name)\n", shellQuote(l.Namespace), sel)
	if back {
		b.WriteString("[ -n \"$pods\" ] || exit 0\n")
	} else {
		fmt.Fprintf(b, "[ -n \"$pods\" ] || { echo %s >&2; exit 1; }\n",
			shellQuote(fmt.Sprintf("no Pod of namespace %s has the labels %s to label", l.Namespace, l.SelectorString())))
	}
	args := l.Args()
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	fmt.Fprintf(b, "kubectl -n %s label --overwrite $pods %s\n", shellQuote(l.Namespace), strings.Join(args, " "))
}

// shellQuote quotes s for sh, in single quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// DraftSnapshotter is an Environment that lists the lab's objects as
// Snapshotter does and those of the other kinds a solve makes (Pods,
// Secrets, claims, Jobs, …): `labctl test --draft` needs it.
type DraftSnapshotter interface {
	DraftSnapshot(ctx context.Context) ([]map[string]any, error)
}

// placeholdersOnly says whether every check of s is a placeholder: the
// steps --draft drafts checks for.
func placeholdersOnly(s *lab.Step) bool {
	for _, c := range s.Checks {
		if !lab.PlaceholderCheck(c) {
			return false
		}
	}
	return len(s.Checks) > 0
}

// draftSnapshot lists the lab's objects for --draft; a failure to is a
// failed phase of the step, and nil.
func (r *runner) draftSnapshot(ctx context.Context, s *lab.Step) []map[string]any {
	sn, ok := r.env.(DraftSnapshotter)
	var objs []map[string]any
	var err error
	if !ok {
		err = fmt.Errorf("this environment cannot list the lab's objects, so no check can be drafted")
	} else if objs, err = sn.DraftSnapshot(ctx); err != nil {
		err = fmt.Errorf("listing the lab's objects: %w", err)
	}
	if err != nil {
		r.phase(Phase{Step: s.ID, Kind: Solve, Script: ScriptSolve}, r.stepTitle(s)+": the lab's objects are listed for the drafts", func(p *Phase) {
			p.fail(s.ID, "", "", err.Error())
		})
		return nil
	}
	if objs == nil {
		objs = []map[string]any{}
	}
	return objs
}
