package shell

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
)

const (
	prompt  = "\x1b]133;A\a$ "
	command = "\x1b]133;C\a"
)

func done(code string) string { return "\x1b]133;D;" + code + "\a" }

func request(verb, nonce string) string { return "\x1b]7707;labctl;" + verb + ";" + nonce + "\a" }

func TestWelcomeShowsTheCurrentStep(t *testing.T) {
	h := start(t, newFakeChecker(false), nil)
	screen := h.waitScreen(t, "Step 1/2: First things")
	for _, want := range []string{"  Create the file.\r\n  Then commit it.", "lab check"} {
		if !strings.Contains(screen, want) {
			t.Errorf("welcome lacks %q:\n%q", want, screen)
		}
	}
	if strings.Contains(strings.ReplaceAll(screen, "\r\n", ""), "\n") {
		t.Errorf("a bare \\n on a raw terminal: %q", screen)
	}
}

func TestPassingStepIsConfirmedThenCompletedAtThePrompt(t *testing.T) {
	h := start(t, newFakeChecker(true, true), nil)
	h.shell.print(t, prompt+command+"created\r\n"+done("0")+prompt)
	screen := h.waitScreen(t, "Next, step 2/2: Second things")
	if got := h.checker.count(); got != 2 {
		t.Errorf("a pass was declared after %d rounds, want 2 (a confirming round)", got)
	}
	if got := h.prog.recorded(); !reflect.DeepEqual(got, []string{"one:pass"}) {
		t.Errorf("recorded %v, want [one:pass]", got)
	}
	for _, want := range []string{"✓ Step passed: First things", "  Deploy 日本語 안녕."} {
		if !strings.Contains(screen, want) {
			t.Errorf("banner lacks %q:\n%q", want, screen)
		}
	}
	// The banner comes after the prompt on a line of its own, and the shell
	// is asked to redraw its prompt.
	if i, j := strings.LastIndex(screen, "$ "), strings.Index(screen, "✓ Step passed"); j < i {
		t.Errorf("banner before the prompt it follows:\n%q", screen)
	}
	h.waitTyped(t, RedrawKey)
}

func TestFlappingStateDoesNotPass(t *testing.T) {
	h := start(t, newFakeChecker(true, false, false), nil)
	h.shell.print(t, command+done("0")+prompt)
	h.checker.waitCall(t, 2)
	h.shell.print(t, command+done("0")+prompt)
	h.checker.waitCall(t, 3)
	if got := h.prog.recorded(); len(got) != 0 {
		t.Errorf("a pass that did not hold was recorded: %v", got)
	}
	if strings.Contains(h.term.screen.String(), "Step passed") {
		t.Errorf("a pass that did not hold was announced")
	}
}

func TestFailingRoundsSayNothing(t *testing.T) {
	h := start(t, newFakeChecker(false), nil)
	h.shell.print(t, command+done("1")+prompt)
	h.checker.waitCall(t, 1)
	h.shell.print(t, request("status", "s1"))
	h.waitTyped(t, "s1\a")
	if got := h.checker.count(); got != 1 {
		t.Errorf("a failing round was confirmed: %d rounds", got)
	}
	if s := h.term.screen.String(); strings.Contains(s, "✗") || strings.Contains(s, "passed") {
		t.Errorf("a failing automatic round printed something:\n%q", s)
	}
}

func TestMarksAreCoalesced(t *testing.T) {
	s, err := New(Config{Lab: testLab(), Shell: newFakeShell(), Terminal: newFakeTerminal(),
		Check: newFakeChecker(false).check, Progress: &fakeProgress{lab: testLab()}, Debounce: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		s.onMark(context.Background(), Mark{Kind: CommandDone})
	}
	if n := len(s.trigger); n != 1 {
		t.Fatalf("5 marks left %d triggers, want 1", n)
	}
	if !s.settle(context.Background()) {
		t.Fatal("settle gave up")
	}
	if n := len(s.trigger); n != 0 {
		t.Fatalf("settle left %d triggers", n)
	}
}

func TestBurstOfPromptsGivesOneRound(t *testing.T) {
	h := start(t, newFakeChecker(false), nil)
	h.shell.print(t, strings.Repeat(done("0")+prompt, 5))
	h.checker.waitCall(t, 1)
	h.shell.print(t, request("status", "s1"))
	h.waitTyped(t, "s1\a")
	h.shell.out.Close()
	<-h.done
	h.done <- nil
	if got := h.checker.count(); got != 1 {
		t.Errorf("a burst of 5 prompts gave %d rounds, want 1", got)
	}
}

func TestMarksDuringARoundGiveOneMoreRound(t *testing.T) {
	c := newFakeChecker(false)
	c.gate = make(chan struct{})
	h := start(t, c, nil)
	h.shell.print(t, done("0")+prompt)
	c.waitCall(t, 1)
	for i := 0; i < 5; i++ {
		h.shell.print(t, done("0")+prompt)
	}
	h.shell.print(t, request("status", "s1"))
	h.waitTyped(t, "s1\a")
	close(c.gate)
	c.waitCall(t, 2)
	h.shell.print(t, request("status", "s2"))
	h.waitTyped(t, "s2\a")
	h.shell.out.Close()
	<-h.done
	h.done <- nil
	if got := c.count(); got != 2 {
		t.Errorf("5 prompts during a round gave %d rounds in all, want 2", got)
	}
}

func TestBannerWaitsForThePromptWhileACommandRuns(t *testing.T) {
	s, err := New(Config{Lab: testLab(), Shell: newFakeShell(), Terminal: newFakeTerminal(),
		Check: newFakeChecker(false).check, Progress: &fakeProgress{lab: testLab()}})
	if err != nil {
		t.Fatal(err)
	}
	term := s.cfg.Terminal.(*fakeTerminal)
	pass := func(p []byte) { term.Write(p) }
	s.scan.Feed([]byte(command+"running"), pass, func(m Mark) { s.onMark(context.Background(), m) })
	s.notices <- "BANNER\n"
	s.takeNotices()
	if s.atPrompt || len(s.pending) != 1 {
		t.Fatalf("atPrompt=%v pending=%d", s.atPrompt, len(s.pending))
	}
	s.scan.Feed([]byte(" output\r\n"+done("0")+prompt), pass, func(m Mark) { s.onMark(context.Background(), m) })
	want := command + "running output\r\n" + done("0") + "\r\nBANNER\r\n" + prompt
	if got := term.screen.String(); got != want {
		t.Fatalf("screen\n%q\nwant\n%q", got, want)
	}
}

func TestRequestsAreAnsweredAndAcknowledged(t *testing.T) {
	h := start(t, newFakeChecker(false), nil)
	h.waitScreen(t, "Step 1/2")
	h.shell.print(t, "x"+request("hint", "n1")+"y")
	h.waitTyped(t, "n1\a")
	screen := h.waitScreen(t, "Hint 1/2: Use touch.")
	if strings.Contains(screen, "7707") {
		t.Errorf("a request reached the terminal: %q", screen)
	}
	h.shell.print(t, request("hint", "n2"))
	h.waitTyped(t, "n2\a")
	h.waitScreen(t, "Hint 2/2: Use git commit.")
	h.shell.print(t, request("hint", "n3"))
	h.waitTyped(t, "n3\a")
	h.waitScreen(t, "That was the last hint")

	h.shell.print(t, request("check", "n4"))
	h.waitTyped(t, "n4\a")
	screen = h.waitScreen(t, "✗ one-file\r\n      expected a file, found nothing")
	if !strings.Contains(screen, "Step not done yet: First things (1 of 1") {
		t.Errorf("check answer lacks the summary:\n%q", screen)
	}
	if got := h.prog.recorded(); !reflect.DeepEqual(got, []string{"one:fail"}) {
		t.Errorf("recorded %v, want [one:fail]", got)
	}

	h.shell.print(t, request("step", "n5")+request("status", "n6"))
	h.waitTyped(t, "n6\a")
	screen = h.waitScreen(t, "→ 1. First things")
	if strings.Count(screen, "Step 1/2: First things") != 2 {
		t.Errorf("lab step did not show the step again:\n%q", screen)
	}

	// A forged claim is only an unknown request: nothing is recorded.
	h.shell.print(t, request("passed", "n7"))
	h.waitTyped(t, "n7\a")
	h.waitScreen(t, `unknown request "passed"`)
	if got := h.prog.recorded(); !reflect.DeepEqual(got, []string{"one:fail"}) {
		t.Errorf("a forged request changed progress: %v", got)
	}
	if got := h.shell.typed.String(); got != "n1\an2\an3\an4\an5\an6\an7\a" {
		t.Errorf("shell input %q: only acknowledgements expected", got)
	}
}

func TestNextMovesOnOnlyWhenTheStepPasses(t *testing.T) {
	c := newFakeChecker(false, true)
	h := start(t, c, nil)
	h.shell.print(t, request("next", "a1"))
	h.waitTyped(t, "a1\a")
	h.waitScreen(t, "Step not done yet")
	if st, _ := h.prog.State(); st.Current.ID != "one" {
		t.Fatalf("next moved on from a failing step to %s", st.Current.ID)
	}
	h.shell.print(t, request("next", "a2"))
	h.waitTyped(t, "a2\a")
	h.waitScreen(t, "Next, step 2/2: Second things")
	if st, _ := h.prog.State(); st.Current == nil || st.Current.ID != "two" {
		t.Fatalf("next did not move on from a passing step")
	}
}

func TestCtrlCAbandonsARequest(t *testing.T) {
	c := newFakeChecker(true)
	c.gate = make(chan struct{})
	h := start(t, c, nil)
	h.shell.print(t, request("check", "k1"))
	c.waitCall(t, 1)
	if _, err := h.term.keys.Write([]byte("ls\x03")); err != nil {
		t.Fatal(err)
	}
	h.waitTyped(t, "ls\x03")
	if got := h.shell.typed.String(); got != "ls\x03" {
		t.Errorf("shell input %q: an abandoned request must not be acknowledged", got)
	}
	if got := h.prog.recorded(); len(got) != 0 {
		t.Errorf("an abandoned check recorded %v", got)
	}
}

func TestKeysWaitWhileARequestIsAnswered(t *testing.T) {
	c := newFakeChecker(false)
	c.gate = make(chan struct{})
	h := start(t, c, nil)
	h.shell.print(t, request("check", "w1"))
	c.waitCall(t, 1)
	go h.term.keys.Write([]byte("typed"))
	close(c.gate)
	got := h.waitTyped(t, "typed")
	if got != "w1\atyped" {
		t.Errorf("shell input %q, want the acknowledgement before the keys", got)
	}
}

func TestFirstResizeIsRetried(t *testing.T) {
	h := start(t, newFakeChecker(false), nil)
	h.shell.mu.Lock()
	h.shell.failing = 2
	h.shell.mu.Unlock()
	h.term.sizes <- Size{Rows: 40, Cols: 120}
	h.term.sizes <- Size{Rows: 50, Cols: 100}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.shell.mu.Lock()
		got := append([]Size(nil), h.shell.resizes...)
		h.shell.mu.Unlock()
		if len(got) == 2 {
			if !reflect.DeepEqual(got, []Size{{40, 120}, {50, 100}}) {
				t.Fatalf("resizes %v", got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("resizes %v, want the first one retried and both applied", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestGuardRestoresTheTerminalOnPanic(t *testing.T) {
	term := newFakeTerminal()
	s, err := New(Config{Lab: testLab(), Shell: newFakeShell(), Terminal: term,
		Check: newFakeChecker(false).check, Progress: &fakeProgress{lab: testLab()}})
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		defer s.guard()
		panic("boom")
	}()
	if term.restored != 1 {
		t.Fatalf("terminal restored %d times, want 1", term.restored)
	}
	func() { defer s.guard() }()
	if term.restored != 1 {
		t.Fatalf("guard restored the terminal without a panic")
	}
}

func TestNewRejectsAnIncompleteConfig(t *testing.T) {
	if _, err := New(Config{Lab: testLab()}); err == nil {
		t.Fatal("New accepted a config without a shell")
	}
}

func TestJapaneseBanner(t *testing.T) {
	h := start(t, newFakeChecker(true), func(c *Config) { c.Catalog = msg.New(msg.Japanese) })
	h.waitScreen(t, "ステップ 1/2: First things")
	h.shell.print(t, done("0")+prompt)
	h.waitScreen(t, "ステップ完了: First things")
	h.waitScreen(t, "次はステップ 2/2: Second things")
}

// scripts records the scripts it runs and fails with code.
type scripts struct {
	ran  []string
	code int
}

func (f *scripts) RunScript(_ context.Context, script string, stdout, _ io.Writer) (int, error) {
	f.ran = append(f.ran, script)
	io.WriteString(stdout, "setup output\n")
	return f.code, nil
}

func results(st checks.Status) []checks.Result {
	return []checks.Result{{Name: "c", Status: st, Points: 1}}
}

func TestStoreProgressKeepsStateOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	l := testLab()
	l.Steps[1].Setup = "kubectl apply -f /opt/lab/fixtures/x.yaml"
	run := &scripts{}
	p := &StoreProgress{Store: progress.NewStore(dir), Lab: l, Scripts: run}
	ctx := context.Background()
	st, err := p.State()
	if err != nil || st.Current == nil || st.Current.ID != "one" {
		t.Fatalf("fresh state %+v, %v; want step one", st, err)
	}
	var moved bool
	if st, moved, err = p.Record(ctx, "one", results(checks.Fail)); err != nil || moved || st.Current.ID != "one" {
		t.Fatalf("a failed round moved on: %+v, %t, %v", st, moved, err)
	}
	if st, moved, err = p.Record(ctx, "one", results(checks.Error)); err != nil || moved || st.Current.ID != "one" {
		t.Fatalf("a round that could not run moved on: %+v, %t, %v", st, moved, err)
	}
	if len(run.ran) != 0 {
		t.Fatalf("setup ran without moving on: %v", run.ran)
	}
	if st, moved, err = p.Record(ctx, "one", results(checks.Pass)); err != nil || !moved || st.Current == nil || st.Current.ID != "two" {
		t.Fatalf("a passed round did not move on: %+v, %t, %v", st, moved, err)
	}
	if len(run.ran) != 1 || run.ran[0] != l.Steps[1].Setup {
		t.Fatalf("the next step's setup ran %v", run.ran)
	}
	again := &StoreProgress{Store: progress.NewStore(dir), Lab: l}
	st, err = again.State()
	if err != nil || st.Current == nil || st.Current.ID != "two" || !st.Passed["one"] || st.Passed["two"] {
		t.Fatalf("reloaded state %+v, %v", st, err)
	}
	pr, err := progress.NewStore(dir).Load("demo")
	if err != nil || pr.Attempts["one"] != 2 {
		t.Fatalf("attempts %v, %v; want 2 (the round that could not run does not count)", pr.Attempts, err)
	}
}

func TestStoreProgressReportsAFailedSetup(t *testing.T) {
	l := testLab()
	l.Steps[1].Setup = "false"
	p := &StoreProgress{Store: progress.NewStore(t.TempDir()), Lab: l, Scripts: &scripts{code: 3}}
	st, _, err := p.Record(context.Background(), "one", results(checks.Pass))
	var setupErr *grading.ScriptError
	if !errors.As(err, &setupErr) || setupErr.Step != "two" || setupErr.Code != 3 || !strings.Contains(err.Error(), "status 3") {
		t.Fatalf("err = %v, want a ScriptError of step two with the status", err)
	}
	if st.Current == nil || st.Current.ID != "two" {
		t.Fatalf("the pass was not recorded: %+v", st)
	}
	if !strings.Contains(err.Error(), "labctl reset --to two") {
		t.Errorf("err = %v, want labctl reset's retry", err)
	}

	// A class's learner is reset by the class's command.
	p = &StoreProgress{Store: progress.NewStore(t.TempDir()), Lab: l, Scripts: &scripts{code: 3}, Situation: grading.InClass("ada")}
	if _, _, err := p.Record(context.Background(), "one", results(checks.Pass)); err == nil || !strings.Contains(err.Error(), "`labctl class reset ada --to two` starts the step over") {
		t.Errorf("err = %v, want the class's retry", err)
	}

	// An invited learner cannot reset their lab: they ask their instructor.
	p = &StoreProgress{Store: progress.NewStore(t.TempDir()), Lab: l, Scripts: &scripts{code: 3}, Situation: grading.Invited("ada")}
	if _, _, err := p.Record(context.Background(), "one", results(checks.Pass)); err == nil || !strings.Contains(err.Error(), "ask your instructor to run `labctl class reset ada --to two`") {
		t.Errorf("err = %v, want the instructor asked", err)
	}
}
