package labtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/mutant"
	"github.com/labctl/labctl/lab"
)

// objEnv is a fakeEnv whose namespaces hold real objects, written as the
// mutate phase writes them: kubectl create, replace and delete with the
// object in a heredoc. A solve writes "object <json>" lines. A kube check
// passes when its object exists and, with a field, when the JSON of the
// object's top-level field Path matches Field.Matches.
type objEnv struct {
	*fakeEnv
	objs map[string]mutant.Object
	// denied are namespaces the learner may not write to.
	denied map[string]bool
	// writes counts the kubectl writes; from failFrom on (when not zero)
	// every one fails, as an undo that cannot be done.
	writes, failFrom int
	// lying makes every kubectl write report success and do nothing.
	lying bool
	// kubectl keeps every kubectl script run.
	kubectl []string
	// made counts the Services made.
	made int
	// conflicts is how many kubectl writes fail with a conflict, as when
	// a controller wrote the object in between, before the next succeed.
	conflicts int
	// errorAt makes the round after that many kubectl writes say, once,
	// that its checks could not judge.
	errorAt int
	// pods are the labels of each running Pod of namespace ns, by name,
	// which kubectl label changes; labelled is when it last did.
	pods     map[string]map[string]string
	labelled time.Time
}

func newObjEnv() *objEnv {
	return &objEnv{fakeEnv: newFakeEnv(), objs: map[string]mutant.Object{}, denied: map[string]bool{}}
}

func (e *objEnv) Snapshot(context.Context) ([]map[string]any, error) {
	keys := make([]string, 0, len(e.objs))
	for k := range e.objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]map[string]any, len(keys))
	for i, k := range keys {
		// As the API gives them: with the server's metadata.
		o := mutant.Copy(e.objs[k])
		o["metadata"].(map[string]any)["resourceVersion"] = fmt.Sprint(i + 1)
		out[i] = o
	}
	return out, nil
}

func (e *objEnv) ResetNamespaces(ctx context.Context) error {
	e.objs = map[string]mutant.Object{}
	return e.fakeEnv.ResetNamespaces(ctx)
}

var heredoc = regexp.MustCompile(`(?m)^kubectl ([a-z =-]+?) -f - <<'LABCTL_MUTANT'\n(.*)\nLABCTL_MUTANT$`)

func (e *objEnv) RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	if strings.HasPrefix(script, "object ") {
		for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
			var o mutant.Object
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "object ")), &o); err != nil {
				return 2, nil
			}
			if mutant.Kind(o) == "Service" {
				// Each Service made gets an address of its own.
				e.made++
				spec, _ := o["spec"].(map[string]any)
				if spec == nil {
					spec = map[string]any{}
					o["spec"] = spec
				}
				spec["clusterIP"] = fmt.Sprintf("10.0.0.%d", e.made)
			}
			e.objs[mutant.Key(o)] = o
		}
		return 0, nil
	}
	if m := podsLabelled.FindStringSubmatch(script); m != nil {
		e.kubectl = append(e.kubectl, script)
		return e.label(m[1], m[2], strings.Contains(script, "|| exit 0"), stderr), nil
	}
	if !strings.Contains(script, "LABCTL_MUTANT") {
		return e.fakeEnv.RunScript(ctx, script, stdout, stderr)
	}
	e.kubectl = append(e.kubectl, script)
	if e.conflicts > 0 {
		e.conflicts--
		fmt.Fprintln(stderr, "Error from server (Conflict): the object has been modified; please apply your changes to the latest version and try again")
		return 1, nil
	}
	e.writes++
	if e.failFrom > 0 && e.writes >= e.failFrom {
		fmt.Fprintln(stderr, "error: the server is gone")
		return 1, nil
	}
	if e.lying {
		return 0, nil
	}
	for _, m := range heredoc.FindAllStringSubmatch(script, -1) {
		var o mutant.Object
		if err := json.Unmarshal([]byte(m[2]), &o); err != nil {
			return 2, nil
		}
		if e.denied[mutant.Namespace(o)] {
			fmt.Fprintf(stderr, "Error from server (Forbidden): cannot write in namespace %s\n", mutant.Namespace(o))
			return 1, nil
		}
		k := mutant.Key(o)
		switch verb := m[1]; {
		case verb == "create":
			if e.objs[k] != nil {
				fmt.Fprintln(stderr, "AlreadyExists")
				return 1, nil
			}
			e.objs[k] = o
		case e.objs[k] == nil:
			fmt.Fprintln(stderr, "Error from server (NotFound)")
			return 1, nil
		case verb == "replace":
			e.objs[k] = o
		case strings.HasPrefix(verb, "delete"):
			delete(e.objs, k)
		default:
			return 2, nil
		}
	}
	return 0, nil
}

var podsLabelled = regexp.MustCompile(`(?s)get pods -l '([^']*)'.*\nkubectl -n 'ns' label --overwrite \$pods ([^\n]*)\n`)

// label runs kubectl label on the Pods of ns that selector selects: args
// are 'k=v' to set and 'k-' to remove. With no Pod to label it fails
// unless back.
func (e *objEnv) label(selector, args string, back bool, stderr io.Writer) int {
	var names []string
	for name, labels := range e.pods {
		match := true
		for _, kv := range strings.Split(selector, ",") {
			k, v, _ := strings.Cut(kv, "=")
			if labels[k] != v {
				match = false
			}
		}
		if match {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		if back {
			return 0
		}
		fmt.Fprintln(stderr, "no Pod to label")
		return 1
	}
	for _, name := range names {
		for _, a := range strings.Fields(args) {
			a = strings.Trim(a, "'")
			if k, ok := strings.CutSuffix(a, "-"); ok {
				delete(e.pods[name], k)
				continue
			}
			k, v, _ := strings.Cut(a, "=")
			e.pods[name][k] = v
		}
	}
	e.labelled = time.Now()
	return 0
}

func (e *objEnv) RunChecks(_ context.Context, round checks.Round) ([]checks.Result, error) {
	e.log = append(e.log, "checks")
	out := make([]checks.Result, len(round.Checks))
	if e.errorAt > 0 && e.writes == e.errorAt {
		e.errorAt = 0
		for i, c := range round.Checks {
			out[i] = checks.Result{Name: c.Name, Points: c.Points, Status: checks.Error, Message: "could not judge"}
		}
		return out, nil
	}
	for i, c := range round.Checks {
		r := checks.Result{Name: c.Name, Points: c.Points, Status: checks.Pass}
		if c.Audit != nil {
			// No Pod labelled by hand within the check's window.
			var since time.Time
			if i < len(round.Windows.Since) {
				since = round.Windows.Since[i]
			}
			if !e.labelled.IsZero() && !e.labelled.Before(since) {
				r.Status, r.Message = checks.Fail, "a Pod was labelled"
			}
			out[i] = r
			continue
		}
		k := c.Kube
		o := e.objs[mutant.Key(mutant.Object{"apiVersion": k.APIVersion, "kind": k.Kind, "metadata": map[string]any{"namespace": k.Namespace, "name": k.Name}})]
		switch {
		case o == nil:
			r.Status, r.Message = checks.Fail, "not found"
		case k.Field != nil:
			j, _ := json.Marshal(o[k.Field.Path])
			if !regexp.MustCompile(k.Field.Matches).Match(j) {
				r.Status, r.Message = checks.Fail, string(j)+" does not match"
			}
		}
		out[i] = r
	}
	return out, nil
}

const deployerRole = `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"deployer","namespace":"ns"},` +
	`"rules":[{"apiGroups":[""],"resources":["configmaps"],"resourceNames":["web-config"],"verbs":["get"]}]}`

// roleLab has one step whose solve makes a Role and whose check is
// matches against its rules.
func roleLab(matches string, alts ...lab.Alternative) *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "demo"},
		Cluster:  lab.Cluster{Namespaces: []string{"ns", "other"}},
		Steps: []lab.Step{{
			ID: "rbac",
			Checks: []lab.Check{{Name: "role", Points: 1, Kube: &lab.KubeCheck{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role",
				Namespace: "ns", Name: "deployer", Field: &lab.FieldAssert{Path: "rules", Assert: lab.Assert{Matches: matches}}}}},
			Solve:        "object " + deployerRole,
			Alternatives: alts,
		}},
	}
}

// looseCheck asks only that the Role's verbs be get: it misses every
// widening of the resources, the API groups and the names.
const looseCheck = `"verbs":\["get"\]`

// strictCheck asks for the rules exactly.
const strictCheck = `^\[\{"apiGroups":\[""\],"resourceNames":\["web-config"\],"resources":\["configmaps"\],"verbs":\["get"\]\}\]$`

var widenings = []string{
	"Role ns/deployer: rules[0].resources → [*]",
	"Role ns/deployer: rules[0].apiGroups → [*]",
	"Role ns/deployer: rules[0].resourceNames → (dropped)",
}

func runMutate(t *testing.T, l *lab.Lab, env Environment, mutate bool) (*Report, *recorder) {
	t.Helper()
	rec := &recorder{}
	rep, err := Run(context.Background(), env, Options{Lab: l, Store: progress.NewStore(t.TempDir()), Step: "rbac",
		Pause: time.Millisecond, Mutate: mutate, Status: rec})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep, rec
}

func mutatePhase(t *testing.T, rep *Report) Phase {
	t.Helper()
	for _, p := range rep.Phases {
		if p.Kind == Mutate {
			return p
		}
	}
	t.Fatalf("no mutate phase among %v", kinds(rep))
	return Phase{}
}

func TestMutateReportsTheWideningsACheckMisses(t *testing.T) {
	env := newObjEnv()
	env.denied["other"] = true
	rep, rec := runMutate(t, roleLab(looseCheck), env, true)
	if rep.Passed {
		t.Fatal("a lab whose check misses three widenings passed --mutate")
	}
	p := mutatePhase(t, rep)
	m := p.Mutants
	// verbs → *, the three widenings, +5 verbs, the rule removed, moved to other, deleted.
	if m.Generated != 12 || m.Applied != 11 || m.NotApplicable != 1 || m.Survivors != 3 || m.Killed != 8 {
		t.Errorf("counts %s", m)
	}
	var failed []string
	for _, f := range p.Failures {
		failed = append(failed, strings.TrimPrefix(f.Script, "mutant "))
		if !strings.Contains(f.Message, "probable misgrade") || !strings.Contains(f.Message, "\n- ") {
			t.Errorf("failure without its diff: %s", f)
		}
	}
	if strings.Join(failed, "\n") != strings.Join(widenings, "\n") {
		t.Errorf("survivors reported:\n%s\nwant:\n%s", strings.Join(failed, "\n"), strings.Join(widenings, "\n"))
	}
	if !strings.Contains(p.Failures[0].Message, `+   - '*'`) || !strings.Contains(p.Failures[0].Message, "-   - configmaps") {
		t.Errorf("the diff does not show the widened line: %s", p.Failures[0].Message)
	}
	// Every mutant was undone: the Role is as the solve left it.
	var want mutant.Object
	_ = json.Unmarshal([]byte(deployerRole), &want)
	got, _ := json.Marshal(env.objs[mutant.Key(want)])
	if wantJSON, _ := json.Marshal(want); string(got) != string(wantJSON) || len(env.objs) != 1 {
		t.Errorf("after the mutants the lab holds %v", env.objs)
	}
	if status := strings.Join(rec.lines, "\n"); !strings.Contains(status, "FAILED Step 1/1 rbac: mutants: 12 generated, 11 applied, 8 killed, 3 survivors, 1 not applicable") {
		t.Errorf("status lines:\n%s", status)
	}
	var js strings.Builder
	_ = WriteJSON(&js, rep)
	for _, want := range []string{`"mutants": {`, `"generated": 12`, `"notApplicable": 1`, `"eachMs": `, `"roundMs": `, `"id": "Role ns/deployer: rules[0].resources → [*]"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("JSON report lacks %s:\n%s", want, js.String())
		}
	}
	var b strings.Builder
	_ = WriteText(&b, rep)
	if !strings.Contains(b.String(), "not applicable: Role ns/deployer: metadata.namespace → other: Error from server (Forbidden)") {
		t.Errorf("text report:\n%s", b.String())
	}
}

func TestMutateStrictCheckKillsEveryMutant(t *testing.T) {
	rep, _ := runMutate(t, roleLab(strictCheck), newObjEnv(), true)
	if !rep.Passed {
		t.Fatalf("failures: %v", rep.Failures())
	}
	if m := mutatePhase(t, rep).Mutants; m.Survivors != 0 || m.Killed != m.Generated || m.Generated != 12 {
		t.Errorf("counts %s", m)
	}
}

func declare(ids ...string) []lab.Alternative {
	var out []lab.Alternative
	for i, id := range ids {
		out = append(out, lab.Alternative{Name: fmt.Sprintf("alt%d", i), Mutant: id, Why: "right"})
	}
	return out
}

func TestMutateDeclaredSurvivorsPass(t *testing.T) {
	rep, _ := runMutate(t, roleLab(looseCheck, declare(widenings...)...), newObjEnv(), true)
	if !rep.Passed {
		t.Fatalf("declared survivors fail: %v", rep.Failures())
	}
	m := mutatePhase(t, rep).Mutants
	if m.Survivors != 3 || len(m.Survived) != 3 || m.Survived[0].Alternative != "alt0" {
		t.Errorf("survivors %+v", m.Survived)
	}
	var b strings.Builder
	_ = WriteText(&b, rep)
	if !strings.Contains(b.String(), "3 survivors (3 declared right)") || !strings.Contains(b.String(), "survivor declared right by alternative alt1: Role ns/deployer: rules[0].apiGroups → [*]") {
		t.Errorf("text report:\n%s", b.String())
	}
}

func TestMutateDeclaredMutantThatNoLongerSurvives(t *testing.T) {
	gone := "Role ns/deployer: rules[0].verbs → +watch"
	killed := "Role ns/deployer: rules[0].verbs → [*]"
	rep, _ := runMutate(t, roleLab(strictCheck, declare(gone, killed)...), newObjEnv(), true)
	if rep.Passed {
		t.Fatal("declared mutants that do not survive passed")
	}
	got := fmt.Sprint(mutatePhase(t, rep).Failures)
	for _, want := range []string{
		`alternative alt0: declares mutant "` + gone + `" right, but --mutate no longer makes it from the solve; remove the alternative`,
		`alternative alt1: declares mutant "` + killed + `" right, but it is killed now`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("failures %s\nwant one with %q", got, want)
		}
	}
}

func TestMutateStopsWhenAnUndoFails(t *testing.T) {
	env := newObjEnv()
	env.failFrom = 2 // the first mutant applies; its undo fails
	rep, _ := runMutate(t, roleLab(looseCheck), env, true)
	p := mutatePhase(t, rep)
	if rep.Passed || len(env.kubectl) != 2 || len(p.Failures) != 1 || !strings.Contains(p.Failures[0].Message, "undoing it failed") {
		t.Fatalf("after a failed undo: %d kubectl scripts, failures %v", len(env.kubectl), p.Failures)
	}

	// An undo that says it worked but did not: the checks after the
	// mutants find it.
	env = newObjEnv()
	env.lying = true
	// The first mutant (verbs → *) is "applied" without effect, then the
	// solve's Role is taken away behind labctl's back.
	rep, _ = runMutate(t, roleLab(looseCheck), &objEnvDropping{env}, true)
	got := fmt.Sprint(mutatePhase(t, rep).Failures)
	if rep.Passed || !strings.Contains(got, "after every mutant was undone, the check does not pass as after the solve, so undoing them failed; stopping") {
		t.Errorf("failures %s", got)
	}
}

// objEnvDropping deletes every object once the last mutant is undone.
type objEnvDropping struct{ *objEnv }

func (e *objEnvDropping) RunScript(ctx context.Context, script string, stdout, stderr io.Writer) (int, error) {
	code, err := e.objEnv.RunScript(ctx, script, stdout, stderr)
	if strings.Contains(script, "LABCTL_MUTANT") && e.writes == 2*12 {
		e.objs = map[string]mutant.Object{}
	}
	return code, err
}

func TestMutantAlternativeSkippedWithoutMutate(t *testing.T) {
	rep, rec := runMutate(t, roleLab(looseCheck, declare(widenings[0])...), newObjEnv(), false)
	if !rep.Passed {
		t.Fatalf("failures %v", rep.Failures())
	}
	var skipped bool
	for _, p := range rep.Phases {
		if p.Kind == Alternative {
			skipped = p.Skipped
		}
		if p.Kind == Mutate {
			t.Error("a mutate phase without --mutate")
		}
	}
	if !skipped || !strings.Contains(strings.Join(rec.lines, "\n"), "alternative alt0 (mutant "+widenings[0]+") is judged only with --mutate: skipped") {
		t.Errorf("skipped %t, status %q", skipped, rec.lines)
	}
	var b strings.Builder
	_ = WriteText(&b, rep)
	if !strings.Contains(b.String(), "- rbac  alternative alt0 skipped: a mutant, judged only with --mutate") {
		t.Errorf("text report:\n%s", b.String())
	}
}

func TestMutateNeedsTheSolveAndAnEnvironmentThatLists(t *testing.T) {
	l := roleLab(looseCheck, lab.Alternative{Name: "a", Script: "object " + deployerRole})
	_, err := Run(context.Background(), newObjEnv(), Options{Lab: l, Store: progress.NewStore(t.TempDir()), Step: "rbac", Only: "a", Mutate: true})
	if err == nil || !strings.Contains(err.Error(), "--mutate makes its mutants from the step's solve") {
		t.Errorf("--mutate with --only: %v", err)
	}
	// The plain fake cannot list objects: the phase says so.
	l = goodLab()
	rep2, err := Run(context.Background(), newFakeEnv(), Options{Lab: l, Store: progress.NewStore(t.TempDir()), Step: "files", Pause: time.Millisecond, Mutate: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(mutatePhase(t, rep2).Failures); !strings.Contains(got, "this environment cannot list the lab's objects") {
		t.Errorf("failures %s", got)
	}
}

// TestMutateComparesWithTheStartBeforeTheSolve: a reset to the step's start
// (after an alternative) makes the namespaces' objects anew, a Service
// with another address; that Service is not the solve's to mutate.
func TestMutateComparesWithTheStartBeforeTheSolve(t *testing.T) {
	const svc = `object {"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"ns"}}`
	l := roleLab(strictCheck, lab.Alternative{Name: "same", Script: "object " + deployerRole})
	l.Steps[0].Setup = svc
	env := newObjEnv()
	if code, _ := env.RunScript(context.Background(), svc, io.Discard, io.Discard); code != 0 {
		t.Fatal("the fake cannot make the Service")
	}
	rep, _ := runMutate(t, l, env, true)
	if !rep.Passed {
		t.Fatalf("failures %v", rep.Failures())
	}
	if m := mutatePhase(t, rep).Mutants; m.Generated != 12 {
		t.Errorf("%d mutants, want the Role's 12 alone: the Service remade by the reset is taken for the solve's", m.Generated)
	}
}

// RunScripts runs each script with objEnv's RunScript, as fakeEnv's does
// with its own.
func (e *objEnv) RunScripts(ctx context.Context, scripts []string, stdout, stderr io.Writer, started func(int)) (int, int, error) {
	for i, s := range scripts {
		started(i)
		code, err := e.RunScript(ctx, s, stdout, stderr)
		if err != nil || code != 0 {
			return i, code, err
		}
	}
	return -1, 0, nil
}

// TestMutatePartlyAppliedIsUndone: a mutant that moves the Role to a
// namespace the learner may not write in deletes it first; the refused
// create is not applicable, and the Role comes back before the next
// mutant (before, it stayed deleted and every later mutant judged a lab
// without it).
func TestMutatePartlyAppliedIsUndone(t *testing.T) {
	env := newObjEnv()
	env.denied["other"] = true
	rep, _ := runMutate(t, roleLab(strictCheck), env, true)
	if !rep.Passed {
		t.Fatalf("failures %v", rep.Failures())
	}
	m := mutatePhase(t, rep).Mutants
	if m.NotApplicable != 1 || m.Killed != 11 || len(m.NotApplied) != 1 || !strings.Contains(m.NotApplied[0].ID, "metadata.namespace → other") {
		t.Errorf("counts %s, not applied %+v", m, m.NotApplied)
	}
	if len(env.objs) != 1 {
		t.Errorf("after the mutants the lab holds %v", env.objs)
	}
}

// TestMutateJudgedAgainWhenACheckCouldNotJudge: a round whose check could
// not judge the mutant (a prober made anew) is run again after a pause; the
// widening it missed is still a survivor, not a mutant killed.
func TestMutateJudgedAgainWhenACheckCouldNotJudge(t *testing.T) {
	env := newObjEnv()
	env.errorAt = 3 // the round of the second mutant, rules[0].resources → [*]
	rep, _ := runMutate(t, roleLab(looseCheck), env, true)
	if m := mutatePhase(t, rep).Mutants; m.Survivors != 3 || m.Killed != 9 || env.errorAt != 0 {
		t.Errorf("counts %s (error given: %t)", m, env.errorAt == 0)
	}
}

// TestMutateWaitsForRolloutsOfRunningWorkloadsOnly: a Deployment's mutant
// waits for its rollout, but in a lab whose workloads are only declared.
func TestMutateWaitsForRolloutsOfRunningWorkloadsOnly(t *testing.T) {
	const web = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns"},"spec":{"replicas":1}}`
	for _, workloads := range []string{"run", "declare"} {
		l := roleLab(`.`)
		l.Cluster.Workloads = workloads
		l.Steps[0].Checks[0].Kube = &lab.KubeCheck{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "web",
			Field: &lab.FieldAssert{Path: "spec", Assert: lab.Assert{Matches: `"replicas":1`}}}
		l.Steps[0].Solve = "object " + web
		env := newObjEnv()
		runMutate(t, l, env, true)
		waited := strings.Contains(strings.Join(env.kubectl, "\n"), "rollout status --timeout=30s deployment/web")
		if waited != (workloads == "run") {
			t.Errorf("workloads: %s: waited for the rollout: %t", workloads, waited)
		}
	}
}

// TestMutateWriteRetriedOnConflict: a write that met a controller's is
// tried again, not taken for one the learner may not make.
func TestMutateWriteRetriedOnConflict(t *testing.T) {
	env := newObjEnv()
	env.conflicts = 2
	rep, _ := runMutate(t, roleLab(strictCheck), env, true)
	if m := mutatePhase(t, rep).Mutants; !rep.Passed || m.NotApplicable != 0 || m.Killed != 12 {
		t.Errorf("counts %s, failures %v", m, rep.Failures())
	}
}

// podsLab has one step whose solve changes the Service web's selector to
// app=web, the label of the Pods of the Deployment web, from Sam's
// app.kubernetes.io/name=web; its checks ask for the solve's selector and
// that no Pod was labelled by hand in the step.
func podsLab() *lab.Lab {
	const web = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"ns"},` +
		`"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web","version":"3"}}}}}`
	svc := func(selector string) string {
		return `object {"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"ns"},"spec":{"selector":` + selector + `}}`
	}
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "demo"},
		Cluster:  lab.Cluster{Namespaces: []string{"ns"}},
		Steps: []lab.Step{{
			ID:    "rbac",
			Setup: "object " + web + "\n" + svc(`{"app.kubernetes.io/name":"web"}`),
			Checks: []lab.Check{
				{Name: "selector", Points: 1, Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "web",
					Field: &lab.FieldAssert{Path: "spec", Assert: lab.Assert{Matches: `^\{"clusterIP":"[0-9.]+","selector":\{"app":"web"\}\}$`}}}},
				{Name: "pods-untouched", Points: 1, Audit: &lab.AuditCheck{Absent: true,
					AuditSelector: lab.AuditSelector{Verbs: []string{"patch"}, Resource: "pods", Namespace: "ns"}}},
			},
			Solve: svc(`{"app":"web"}`),
		}},
	}
}

// TestMutateLabelsPodsInsteadOfTheSelector: the learner who labels the
// running Pods so that the Service's old selector reaches them is a mutant
// of a solve that changes the selector. It is applied with kubectl label
// and taken back, the Pods' labels as they were; the record of it does not
// fail the checks of the mutants after it, nor those after every undo, nor
// the grade of the whole lab.
func TestMutateLabelsPodsInsteadOfTheSelector(t *testing.T) {
	env := newObjEnv()
	env.pods = map[string]map[string]string{"web-1": {"app": "web", "version": "3", "pod-template-hash": "abc"}}
	l := podsLab()
	// The environment comes up with the first step's setup run.
	if code, _ := env.RunScript(context.Background(), l.Steps[0].Setup, io.Discard, io.Discard); code != 0 {
		t.Fatal("the fake cannot make the Deployment and the Service")
	}
	// The whole lab: its grade at the end, too, judges the step's audit
	// check from the last undo on.
	rep, err := Run(context.Background(), env, Options{Lab: l, Store: progress.NewStore(t.TempDir()),
		Pause: time.Millisecond, Mutate: true, Status: &recorder{}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !rep.Passed || !rep.Graded || rep.Score != rep.MaxScore {
		t.Fatalf("graded %t, %d of %d, failures %v", rep.Graded, rep.Score, rep.MaxScore, rep.Failures())
	}
	m := mutatePhase(t, rep).Mutants
	if m.Killed != m.Generated || m.Applied != m.Generated {
		t.Errorf("counts %s, want every mutant applied and killed", m)
	}
	script := strings.Join(env.kubectl, "\n")
	for _, want := range []string{
		"kubectl -n 'ns' label --overwrite $pods 'app.kubernetes.io/name=web'",
		"kubectl -n 'ns' label --overwrite $pods 'app.kubernetes.io/name-'",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("no %q among the mutants' writes:\n%s", want, script)
		}
	}
	if got := env.pods["web-1"]; len(got) != 3 || got["app.kubernetes.io/name"] != "" {
		t.Errorf("after the mutants the Pod is labelled %v", got)
	}
}
