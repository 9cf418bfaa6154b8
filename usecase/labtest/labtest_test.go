package labtest

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/lab"
)

func fileCheck(name, path string) lab.Check {
	return lab.Check{Name: name, Points: 1, File: &lab.FileCheck{Path: path}}
}

func kubeCheck(name, object string) lab.Check {
	return lab.Check{Name: name, Points: 1, Kube: &lab.KubeCheck{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: object}}
}

// goodLab is a two-step lab whose every promise holds on the fake.
func goodLab() *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "demo"},
		Steps: []lab.Step{
			{
				ID:     "files",
				Checks: []lab.Check{fileCheck("has-x", "/root/x"), fileCheck("has-y", "/root/y")},
				Solve:  "touch /root/x\ntouch /root/y",
				Mistakes: []lab.Mistake{
					{Name: "only-x", Script: "touch /root/x", Fails: []string{"has-y"}},
					{Name: "nothing", Script: "touch /root/z", Fails: []string{"has-x", "has-y"}},
				},
			},
			{
				ID:     "cluster",
				Setup:  "touch /root/setup-done",
				Checks: []lab.Check{kubeCheck("web", "web"), fileCheck("setup-kept", "/root/setup-done")},
				Solve:  "apply web",
				Mistakes: []lab.Mistake{
					{Name: "wrong-name", Script: "apply api", Fails: []string{"web"}},
				},
			},
		},
	}
}

// recorder is a Status that keeps its lines.
type recorder struct{ lines []string }

func (r *recorder) Start(msg string) { r.lines = append(r.lines, msg) }
func (r *recorder) End(ok bool) {
	if !ok {
		r.lines[len(r.lines)-1] = "FAILED " + r.lines[len(r.lines)-1]
	}
}

func run(t *testing.T, l *lab.Lab, env *fakeEnv, step string) (*Report, string) {
	t.Helper()
	dir := t.TempDir()
	rep, err := Run(context.Background(), env, Options{
		Lab:   l,
		Store: progress.NewStore(dir),
		Step:  step,
		Pause: time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep, dir
}

func kinds(r *Report) []string {
	var out []string
	for _, p := range r.Phases {
		s := string(p.Kind)
		if p.Step != "" {
			s = p.Step + "/" + s
		}
		if p.Kind == Mistake {
			s += " " + strings.TrimPrefix(p.Script, "mistake ")
		}
		out = append(out, s)
	}
	return out
}

func hasFailure(r *Report, step, script, check, contains string) bool {
	for _, f := range r.Failures() {
		if f.Step == step && f.Script == script && f.Check == check && strings.Contains(f.Message, contains) {
			return true
		}
	}
	return false
}

func TestGoodLabPasses(t *testing.T) {
	env := newFakeEnv()
	env.home["/root/setup-0"] = true // what up's setup of the first step left
	st := &recorder{}
	dir := t.TempDir()
	rep, err := Run(context.Background(), env, Options{Lab: goodLab(), Store: progress.NewStore(dir), Pause: time.Millisecond, Status: st})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed {
		t.Fatalf("a lab whose promises hold failed: %v", rep.Failures())
	}
	want := []string{
		"files/before", "files/mistake only-x", "files/reset", "files/mistake nothing", "files/reset", "files/solve", "files/again",
		"cluster/setup", "cluster/before", "cluster/mistake wrong-name", "cluster/reset", "cluster/solve", "cluster/again",
		"grade", "files/final-reset",
	}
	if got := kinds(rep); !slices.Equal(got, want) {
		t.Errorf("phases:\n got %q\nwant %q", got, want)
	}
	if len(st.lines) != len(want) {
		t.Errorf("%d status lines for %d phases: %q", len(st.lines), len(want), st.lines)
	}
	if !rep.Graded || rep.Score != 4 || rep.MaxScore != 4 {
		t.Errorf("grade %d/%d (graded %t), want 4/4", rep.Score, rep.MaxScore, rep.Graded)
	}
	if rep.Resets != 4 {
		t.Errorf("%d resets, want 4 (one per mistake and the final one)", rep.Resets)
	}
	for _, part := range []string{"sandbox", "namespaces", "scripts"} {
		if _, ok := rep.ResetParts[part]; !ok {
			t.Errorf("the resets' time has no part %q: %v", part, rep.ResetParts)
		}
	}
	if _, ok := rep.ResetParts["cluster"]; ok {
		t.Error("a test reset recreated the cluster")
	}
	// The reset after the second step's mistake replays the first step's
	// solve and the second step's setup, as `labctl reset --to` does.
	i := slices.Index(env.log, "script apply api")
	if i < 0 {
		t.Fatalf("the mistake never ran: %q", env.log)
	}
	after := env.log[i:]
	wantAfter := []string{"script apply api", "checks", "recreate-sandbox", "reset-namespaces",
		"script touch /root/x", "script touch /root/setup-done", "script apply web"}
	if !slices.Equal(after[:len(wantAfter)], wantAfter) {
		t.Errorf("after the mistake:\n got %q\nwant %q", after[:len(wantAfter)], wantAfter)
	}
	// The test's throwaway home is never saved.
	if slices.Contains(env.log, "backup") {
		t.Errorf("a reset saved the test's home: %q", env.log)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "backups", "*.tar"))
	if len(left) != 0 {
		t.Errorf("backups left behind: %q", left)
	}
}

// TestResetsGoBackToTheStepsStart: on an environment that keeps step
// starts, a reset after a mistake that changed only the home goes back to
// the step's start (the next mistake then runs from it, or it would not be
// caught), and one after a mistake that changed the namespaces replays, then
// keeps the start again.
func TestResetsGoBackToTheStepsStart(t *testing.T) {
	env := &keepingEnv{fakeEnv: newFakeEnv(), kept: map[string][2]map[string]bool{}}
	rep, err := Run(context.Background(), env, Options{Lab: goodLab(), Store: progress.NewStore(t.TempDir()), Pause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed {
		t.Fatalf("a lab whose promises hold failed: %v", rep.Failures())
	}
	if rep.Resets != 4 || rep.StepStartsRestored != 2 {
		t.Errorf("%d resets, %d going back to the step's start; want 4 and 2 (the first step's two mistakes)", rep.Resets, rep.StepStartsRestored)
	}
	i := slices.Index(env.log, "script apply api")
	if i < 0 {
		t.Fatalf("the mistake never ran: %q", env.log)
	}
	want := []string{"script apply api", "checks", "recreate-sandbox", "reset-namespaces",
		"script touch /root/x", "script touch /root/setup-done", "checkpoint cluster", "script apply web"}
	if got := env.log[i : i+len(want)]; !slices.Equal(got, want) {
		t.Errorf("after the mistake that changed the namespaces:\n got %q\nwant %q", got, want)
	}
	if n := strings.Count(strings.Join(env.log, "\n"), "back-to files"); n != 2 {
		t.Errorf("went back to the first step's start %d times, want 2: %q", n, env.log)
	}
}

func TestUncaughtMistakeFails(t *testing.T) {
	l := goodLab()
	l.Steps[0].Mistakes[0].Script = "touch /root/x\ntouch /root/y"
	rep, _ := run(t, l, newFakeEnv(), "")
	if rep.Passed {
		t.Fatal("a lab with an uncaught mistake passed")
	}
	if !hasFailure(rep, "files", "mistake only-x", "has-y", "not caught") {
		t.Errorf("no failure names step files, mistake only-x, check has-y: %v", rep.Failures())
	}
	if n := len(rep.Failures()); n != 1 {
		t.Errorf("%d failures, want 1: %v", n, rep.Failures())
	}
}

// A mistake's way back (recover) runs after it, and every check of the step
// must pass then; one that does not lead back fails the lab, named.
func TestMistakeWayBack(t *testing.T) {
	l := goodLab()
	l.Steps[0].Mistakes[0].Recover = "touch /root/y"
	env := newFakeEnv()
	rep, _ := run(t, l, env, "")
	if !rep.Passed {
		t.Fatalf("a way back that leads back failed: %v", rep.Failures())
	}
	if !slices.Contains(env.log, "script touch /root/y") {
		t.Errorf("the way back did not run: %q", env.log)
	}
	l.Steps[0].Mistakes[0].Recover = "touch /root/z"
	rep, _ = run(t, l, newFakeEnv(), "")
	if rep.Passed || !hasFailure(rep, "files", "mistake only-x recover", "has-y", "") {
		t.Errorf("a way back that does not lead back: passed %v, %v", rep.Passed, rep.Failures())
	}
}

// Two mistakes that fail the same checks: without evidence the learner
// who makes either is told both, which fails the lab; evidence that holds
// only after its own mistake tells them apart; evidence that does not hold
// after its mistake fails the lab, named.
func TestMistakesToldApartByEvidence(t *testing.T) {
	l := goodLab()
	l.Steps[0].Mistakes = append(l.Steps[0].Mistakes, lab.Mistake{Name: "x-and-w", Script: "touch /root/x\ntouch /root/w", Fails: []string{"has-y"}})
	rep, _ := run(t, l, newFakeEnv(), "")
	if rep.Passed || !hasFailure(rep, "files", "mistake only-x", "", "also told mistake x-and-w") ||
		!hasFailure(rep, "files", "mistake x-and-w", "", "also told mistake only-x") {
		t.Fatalf("mistakes that look alike: passed %v, %v", rep.Passed, rep.Failures())
	}

	no := false
	w := fileCheck("w-written", "/root/w")
	noW := fileCheck("no-w", "/root/w")
	noW.File.Exists = &no
	l.Steps[0].Mistakes[0].Evidence = []lab.Check{noW}
	l.Steps[0].Mistakes[2].Evidence = []lab.Check{w}
	if rep, _ = run(t, l, newFakeEnv(), ""); !rep.Passed {
		t.Fatalf("mistakes told apart by evidence: %v", rep.Failures())
	}

	l.Steps[0].Mistakes[2].Evidence = []lab.Check{fileCheck("v-written", "/root/v")}
	rep, _ = run(t, l, newFakeEnv(), "")
	if rep.Passed || !hasFailure(rep, "files", "mistake x-and-w", "v-written", "evidence of mistake x-and-w did not hold") {
		t.Errorf("evidence that does not hold: passed %v, %v", rep.Passed, rep.Failures())
	}
}

func TestMistakeFailingAnUnnamedCheckFails(t *testing.T) {
	l := goodLab()
	l.Steps[0].Mistakes[1].Fails = []string{"has-y"} // has-x fails too
	rep, _ := run(t, l, newFakeEnv(), "")
	if rep.Passed {
		t.Fatal("a mistake that fails an unnamed check passed")
	}
	if !hasFailure(rep, "files", "mistake nothing", "has-x", "does not name it") {
		t.Errorf("no failure names the unnamed check: %v", rep.Failures())
	}
}

func TestCheckThatNeverPassesFails(t *testing.T) {
	l := goodLab()
	l.Steps[1].Checks = append(l.Steps[1].Checks, fileCheck("impossible", "/root/never"))
	rep, _ := run(t, l, newFakeEnv(), "")
	if rep.Passed {
		t.Fatal("a lab with a check that never passes passed")
	}
	for _, want := range []struct{ script, msg string }{{"solve", "failed: "}, {"", "failed: "}} {
		if !hasFailure(rep, "cluster", want.script, "impossible", want.msg) {
			t.Errorf("no failure (script %q, %q) for check impossible: %v", want.script, want.msg, rep.Failures())
		}
	}
	// After the mistake (which does not name it), after the solve and in
	// the grade: not once more after the pause.
	if n := len(rep.Failures()); n != 3 {
		t.Errorf("%d failures, want 3: %v", n, rep.Failures())
	}
	if rep.Score != 4 || rep.MaxScore != 5 {
		t.Errorf("grade %d/%d, want 4/5", rep.Score, rep.MaxScore)
	}
}

func TestStepCompleteBeforeSolveFails(t *testing.T) {
	l := goodLab()
	no := false
	l.Steps[1].Checks = []lab.Check{{Name: "no-junk", Points: 1, File: &lab.FileCheck{Path: "/root/junk", Exists: &no}}}
	l.Steps[1].Mistakes = []lab.Mistake{{Name: "junk", Script: "touch /root/junk", Fails: []string{"no-junk"}}}
	l.Steps[1].Solve = "rm /root/junk"
	rep, _ := run(t, l, newFakeEnv(), "")
	if !hasFailure(rep, "cluster", "", "", "complete without any work") || rep.Passed {
		t.Errorf("a step complete before its solve was not reported: %v", rep.Failures())
	}

	l.Steps[1].PassesInitially = true
	rep, _ = run(t, l, newFakeEnv(), "")
	if !rep.Passed {
		t.Errorf("a step declaring passesInitially failed: %v", rep.Failures())
	}
}

// TestScriptFailureStops: a solve or a step's setup that exits non-zero
// is a failure that carries the status and the output, and nothing runs
// after it.
func TestScriptFailureStops(t *testing.T) {
	solve := goodLab()
	solve.Steps[0].Solve = "touch /root/x\nexit 3"
	setup := goodLab()
	setup.Steps[1].Setup = "touch /root/setup-done\nexit 4"
	for _, c := range []struct {
		lab        *lab.Lab
		step, kind string
		want       string
		lastPhase  Kind
	}{
		{solve, "files", "solve", "status 3:\n+ touch /root/x\n+ exit 3\nexiting with 3", Solve},
		{setup, "cluster", "setup", "status 4:\n+ touch /root/setup-done\n+ exit 4\nexiting with 4", Setup},
	} {
		rep, _ := run(t, c.lab, newFakeEnv(), "")
		if rep.Passed {
			t.Fatalf("a lab whose %s fails passed", c.kind)
		}
		if !hasFailure(rep, c.step, c.kind, "", c.want) {
			t.Errorf("the %s's failure does not carry the status and the output: %v", c.kind, rep.Failures())
		}
		if last := rep.Phases[len(rep.Phases)-1]; last.Kind != c.lastPhase {
			t.Errorf("the run went on after the %s failed, to %s", c.kind, last.Kind)
		}
	}
	// A setup fails a fast-forward too.
	rep, _ := run(t, setup, newFakeEnv(), "cluster")
	if rep.Passed || !hasFailure(rep, "cluster", "setup", "", "status 4") || len(rep.Phases) != 1 {
		t.Errorf("a failing setup did not stop the fast-forward: %q %v", kinds(rep), rep.Failures())
	}
}

func TestChecksThatStopPassingFail(t *testing.T) {
	l := goodLab()
	l.Steps[0].Solve = "flash /root/x\ntouch /root/y"
	rep, _ := run(t, l, newFakeEnv(), "")
	if !hasFailure(rep, "files", "solve", "has-x", "passed right after the solve but not 1ms later") {
		t.Errorf("a check passing only once was not reported: %v", rep.Failures())
	}
	for _, f := range rep.Failures() {
		if f.Check == "has-x" && f.Script == "solve" && strings.HasPrefix(f.Message, "failed") {
			t.Errorf("has-x was reported failing right after the solve: %v", f)
		}
	}
}

func TestResetThatKeepsWorkFails(t *testing.T) {
	l := goodLab()
	l.Steps[0].Checks = l.Steps[0].Checks[:1]
	l.Steps[0].Solve = "keep /root/x"
	l.Steps[0].Mistakes = nil
	rep, _ := run(t, l, newFakeEnv(), "")
	if !hasFailure(rep, "files", "", "", "still passes after a reset") {
		t.Errorf("work surviving a reset was not reported: %v", rep.Failures())
	}
	if rep.Passed {
		t.Error("the run passed")
	}
}

func TestOneStepFastForwards(t *testing.T) {
	env := newFakeEnv()
	rep, _ := run(t, goodLab(), env, "cluster")
	if !rep.Passed {
		t.Fatalf("testing step cluster failed: %v", rep.Failures())
	}
	want := []string{"cluster/fast-forward", "cluster/before", "cluster/mistake wrong-name", "cluster/reset", "cluster/solve", "cluster/again"}
	if got := kinds(rep); !slices.Equal(got, want) {
		t.Errorf("phases:\n got %q\nwant %q", got, want)
	}
	if !slices.Equal(env.log[:2], []string{"script touch /root/x", "script touch /root/setup-done"}) {
		t.Errorf("fast-forward did not solve step files and set up step cluster first: %q", env.log)
	}
	if rep.Graded {
		t.Error("a one-step run graded the whole lab")
	}
}

func TestOnlyOneMistake(t *testing.T) {
	env := newFakeEnv()
	rep, err := Run(context.Background(), env, Options{Lab: goodLab(), Store: progress.NewStore(t.TempDir()),
		Step: "files", Only: "nothing", Pause: time.Millisecond})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !rep.Passed {
		t.Fatalf("testing one mistake failed: %v", rep.Failures())
	}
	want := []string{"files/before", "files/mistake nothing", "files/reset"}
	if got := kinds(rep); !slices.Equal(got, want) {
		t.Errorf("phases:\n got %q\nwant %q", got, want)
	}
	if slices.Contains(env.log, "script touch /root/x") {
		t.Errorf("the other mistake or the solve ran: %q", env.log)
	}
	var out strings.Builder
	if err := WriteText(&out, rep); err != nil || !strings.Contains(out.String(), "PASS: lab demo step files (only nothing) proves itself") {
		t.Errorf("the report does not say only one mistake was tested (%v):\n%s", err, out.String())
	}
}

func TestOnlyAlternativesOrMistakes(t *testing.T) {
	l := goodLab()
	l.Steps[0].Alternatives = []lab.Alternative{{Name: "y-then-x", Script: "touch /root/y\ntouch /root/x"}}
	for _, c := range []struct {
		mistakes, alternatives bool
		want                   []string
	}{
		{true, false, []string{"files/before", "files/mistake only-x", "files/reset", "files/mistake nothing", "files/reset"}},
		{false, true, []string{"files/before", "files/alternative", "files/reset"}},
		{true, true, []string{"files/before", "files/mistake only-x", "files/reset", "files/mistake nothing", "files/reset", "files/alternative", "files/reset"}},
	} {
		rep, err := Run(context.Background(), newFakeEnv(), Options{Lab: l, Store: progress.NewStore(t.TempDir()),
			Step: "files", Mistakes: c.mistakes, Alternatives: c.alternatives, Pause: time.Millisecond})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := kinds(rep); !rep.Passed || !slices.Equal(got, c.want) {
			t.Errorf("mistakes %v alternatives %v: passed %v, phases\n got %q\nwant %q", c.mistakes, c.alternatives, rep.Passed, got, c.want)
		}
	}
	if _, err := Run(context.Background(), newFakeEnv(), Options{Lab: l, Store: progress.NewStore(t.TempDir()), Mistakes: true}); err == nil {
		t.Error("mistakes without a step gave no error")
	}
}

func TestOnlyUnknownName(t *testing.T) {
	for _, c := range []struct{ step, only, want string }{
		{"files", "nope", "only-x, nothing"},
		{"", "only-x", "needs --step"},
		{"nope", "only-x", "nope"},
	} {
		err := CheckOnly(goodLab(), c.step, c.only)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckOnly(%q, %q) = %v, want an error with %q", c.step, c.only, err, c.want)
		}
		if _, err := Run(context.Background(), newFakeEnv(), Options{Lab: goodLab(), Store: progress.NewStore(t.TempDir()), Step: c.step, Only: c.only}); err == nil {
			t.Errorf("Run with step %q only %q gave no error", c.step, c.only)
		}
	}
	if err := CheckOnly(goodLab(), "cluster", "wrong-name"); err != nil {
		t.Errorf("a mistake of the step: %v", err)
	}
	l := goodLab()
	l.Steps[1].Mistakes = nil
	if err := CheckOnly(l, "cluster", "x"); err == nil || !strings.Contains(err.Error(), "no mistakes or alternatives") {
		t.Errorf("a step without mistakes: %v", err)
	}
}

func TestBrokenFastForwardStops(t *testing.T) {
	l := goodLab()
	l.Steps[0].Solve = "exit 1"
	rep, _ := run(t, l, newFakeEnv(), "cluster")
	if rep.Passed || !hasFailure(rep, "files", "solve", "", "status 1") || len(rep.Phases) != 1 {
		t.Errorf("a failing earlier solve did not stop the run: %q %v", kinds(rep), rep.Failures())
	}
}

func TestBadOptions(t *testing.T) {
	_, err := Run(context.Background(), newFakeEnv(), Options{Lab: goodLab(), Store: progress.NewStore(t.TempDir()), Step: "nope"})
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown step gave %v, want an error naming it", err)
	}
	if _, err := Run(context.Background(), newFakeEnv(), Options{Lab: goodLab()}); err == nil {
		t.Error("no store gave no error")
	}
	if _, err := Run(context.Background(), newFakeEnv(), Options{Lab: goodLab(), Store: progress.NewStore(t.TempDir()), Step: "files", Pause: time.Millisecond}); err != nil {
		t.Errorf("a known step gave %v", err)
	}
}

func TestCheckerRoundFailureStops(t *testing.T) {
	env := newFakeEnv()
	env.roundErr = errors.New("sandbox gone")
	rep, _ := run(t, goodLab(), env, "")
	if rep.Passed || !hasFailure(rep, "files", "", "", "sandbox gone") {
		t.Errorf("a failing checker round was not reported: %v", rep.Failures())
	}
	if len(rep.Phases) != 1 {
		t.Errorf("the run went on after the checker failed: %q", kinds(rep))
	}
}

func TestCheckThatCannotRunFails(t *testing.T) {
	l := goodLab()
	l.Steps[0].Checks = append(l.Steps[0].Checks, lab.Check{Name: "cmd", Points: 1, Command: &lab.CommandCheck{Run: []string{"true"}}})
	rep, _ := run(t, l, newFakeEnv(), "")
	if rep.Passed || !hasFailure(rep, "files", "", "cmd", "could not run") || !hasFailure(rep, "files", "mistake only-x", "cmd", "could not run") {
		t.Errorf("a check that cannot run was not reported in every phase: %v", rep.Failures())
	}
}

func TestResetReplayFailureNamesTheScript(t *testing.T) {
	l := goodLab()
	// The first step's solve works once; replayed by the reset after the
	// second step's mistake, it fails.
	l.Steps[0].Solve = "touch /root/x\ntouch /root/y\nfail-if /solved-once\nkeep /solved-once"
	rep, _ := run(t, l, newFakeEnv(), "")
	if rep.Passed || !hasFailure(rep, "files", "solve", "", "replaying it in a reset: the script exited with status 1") {
		t.Errorf("a failing replay was not reported: %v", rep.Failures())
	}
	if last := rep.Phases[len(rep.Phases)-1]; last.Kind != Reset || last.Step != "cluster" {
		t.Errorf("the run did not stop at the failed reset: %q", kinds(rep))
	}
}

func TestForTest(t *testing.T) {
	l := goodLab()
	c := ForTest(l)
	if c.Metadata.Name != "demo-test" || l.Metadata.Name != "demo" {
		t.Errorf("ForTest named the copy %q and left the lab %q", c.Metadata.Name, l.Metadata.Name)
	}
	l.Metadata.Name = strings.Repeat("a", 34) + "-bcdef"
	if got := ForTest(l).Metadata.Name; got != strings.Repeat("a", 34)+"-test" {
		t.Errorf("long name became %q", got)
	}
	if len(ForTest(l).Metadata.Name) > maxLabName {
		t.Error("the test name is too long")
	}
}
