package shell

import (
	"strings"
	"testing"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// withGoalAndWhy gives the test lab a goal, a why for each step and
// Markdown in the instructions.
func withGoalAndWhy(c *Config) {
	c.Lab.Metadata.Goal = "Catch **drift** with `kubectl diff`."
	c.Lab.Steps[0].Why = "A commit is the *record*."
	c.Lab.Steps[0].Instructions = "Create the file with `touch`.\n\n- **then** commit it"
}

func TestGoalAndWhyAreShown(t *testing.T) {
	h := start(t, newFakeChecker(true, true), withGoalAndWhy)
	screen := h.waitScreen(t, "Step 1/2: First things")
	for _, want := range []string{"Goal\r\n  Catch drift with kubectl diff.", "  Create the file with touch.", "  - then commit it", "lab why"} {
		if !strings.Contains(screen, want) {
			t.Errorf("welcome lacks %q:\n%q", want, screen)
		}
	}
	for _, mark := range []string{"**", "`touch`", "*record*"} {
		if strings.Contains(screen, mark) {
			t.Errorf("Markdown mark %q left in plain text:\n%q", mark, screen)
		}
	}

	h.shell.print(t, request("why", "w1"))
	h.waitTyped(t, "w1\a")
	h.waitScreen(t, "Why this step matters: First things\r\n  A commit is the record.")

	h.shell.print(t, request("status", "w2"))
	h.waitTyped(t, "w2\a")
	h.waitScreen(t, "Demo lab: 0 of 2 steps done\r\n  Catch drift with kubectl diff.")

	// After the step passes, the banner says why it mattered.
	h.shell.print(t, prompt+command+"created\r\n"+done("0")+prompt)
	screen = h.waitScreen(t, "Next, step 2/2: Second things")
	pass := strings.Index(screen, "✓ Step passed: First things")
	why := strings.LastIndex(screen, "A commit is the record.")
	next := strings.Index(screen, "Next, step 2/2")
	if pass < 0 || why < pass || next < why {
		t.Errorf("banner is not pass, why, next:\n%q", screen)
	}
}

// TestLabWhy: the lab's own reason (metadata.why) follows the step's in
// lab why, and closes the banner of the last step; before the end, no
// banner repeats it.
func TestLabWhy(t *testing.T) {
	h := start(t, newFakeChecker(true), func(c *Config) {
		withGoalAndWhy(c)
		c.Lab.Metadata.Why = "Rollbacks become `git revert`."
	})
	h.waitScreen(t, "Step 1/2: First things")
	h.shell.print(t, request("why", "w1"))
	h.waitTyped(t, "w1\a")
	screen := h.waitScreen(t, "Why this lab matters\r\n  Rollbacks become git revert.")
	if step, labWhy := strings.Index(screen, "A commit is the record."), strings.Index(screen, "Why this lab matters"); step < 0 || labWhy < step {
		t.Errorf("lab why: want the step's reason, then the lab's:\n%q", screen)
	}

	h.shell.print(t, prompt+command+"created\r\n"+done("0")+prompt)
	screen = h.waitScreen(t, "Next, step 2/2: Second things")
	if n := strings.Count(screen, "Why this lab matters"); n != 1 {
		t.Errorf("the lab's reason shown %d times before the end, want once (for lab why):\n%q", n, screen)
	}
	h.shell.print(t, prompt+command+"created\r\n"+done("0")+prompt)
	screen = h.waitScreen(t, "All 2 steps are done.")
	end := strings.LastIndex(screen, "All 2 steps are done.")
	if labWhy := strings.LastIndex(screen, "Why this lab matters\r\n  Rollbacks become git revert."); labWhy < end {
		t.Errorf("the last banner does not end with the lab's reason:\n%q", screen[end:])
	}

	h.shell.print(t, request("why", "w2"))
	h.waitTyped(t, "w2\a")
	for deadline := time.Now().Add(10 * time.Second); strings.Count(h.term.screen.String(), "Rollbacks become git revert.") < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("lab why after the last step does not show the lab's reason:\n%q", h.term.screen.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWhyWithoutText(t *testing.T) {
	h := start(t, newFakeChecker(false), func(c *Config) { c.Catalog = msg.New(msg.Japanese) })
	h.waitScreen(t, "ステップ 1/2")
	h.shell.print(t, request("why", "w1"))
	h.waitTyped(t, "w1\a")
	h.waitScreen(t, "First things について、ラボに説明はありません。")
}

func TestMarkdownInColourIsStyled(t *testing.T) {
	got := NewMarkdown(true).Render("Use **kubectl** `diff`.")
	if !strings.Contains(got, "\x1b[") || strings.Contains(got, "**") || strings.Contains(got, "`") {
		t.Errorf("colour rendering %q: want ANSI styles and no Markdown marks", got)
	}
	if strings.HasSuffix(strings.TrimSuffix(got, "\x1b[0m"), " ") {
		t.Errorf("trailing padding left: %q", got)
	}
	plain := NewMarkdown(false).Render("# Title\n\nUse **kubectl** `diff`.\n\n```\nkubectl diff -f x\n```")
	if strings.Contains(plain, "\x1b") || strings.ContainsAny(plain, "*`#") {
		t.Errorf("plain rendering %q: want no escapes and no Markdown marks", plain)
	}
	for _, want := range []string{"Title", "Use kubectl diff.", "kubectl diff -f x"} {
		if !strings.Contains(plain, want) {
			t.Errorf("plain rendering lost %q: %q", want, plain)
		}
	}
}

// TestShellNamesTheLikelyMistake: the shell's check answer names the
// declared mistake the failing checks are exactly, with its explanation.
func TestShellNamesTheLikelyMistake(t *testing.T) {
	s, err := New(Config{Lab: testLab(), Shell: newFakeShell(), Terminal: newFakeTerminal(),
		Check: newFakeChecker(false).check, Progress: &fakeProgress{lab: testLab()}, Catalog: msg.New(msg.Japanese)})
	if err != nil {
		t.Fatal(err)
	}
	step := s.cfg.Lab.Steps[0]
	step.Mistakes = []lab.Mistake{{Name: "no-file", Description: "ファイルを作っていない", Fails: []string{"one-file"}, Explain: "touch で作りましょう。"}}
	got := s.resultsText(step, []checks.Result{{Name: "one-file", Status: checks.Fail, Message: "x"}}, nil)
	if !strings.Contains(got, "よくある間違いのようです: ファイルを作っていない\n    touch で作りましょう。") {
		t.Errorf("results lack the mistake:\n%s", got)
	}
	got = s.resultsText(step, []checks.Result{{Name: "one-file", Status: checks.Error, Message: "x"}}, nil)
	if strings.Contains(got, "よくある間違い") {
		t.Errorf("a check that could not run must not suggest a mistake:\n%s", got)
	}
}

// TestMarkdownPlainKeepsStructure: headings, emphasis, code, links, lists,
// quotes and code blocks lose their marks and keep their words and shape.
func TestMarkdownPlainKeepsStructure(t *testing.T) {
	src := "# Title\n\nUse **kubectl** `diff` and *see*.\nSecond line [docs](https://x.y) <https://a.b>\n\n" +
		"1. one\n2. two\n   - nested\n\n> quoted\n> more\n\n```sh\nkubectl apply -f x\nkubectl diff\n```\n\n---\n\n    indented code\n"
	want := "Title\n\nUse kubectl diff and see.\nSecond line docs (https://x.y) https://a.b\n\n1. one\n2. two\n   - nested\n\n" +
		"│ quoted\n│ more\n\n  kubectl apply -f x\n  kubectl diff\n\n────────\n\n  indented code"
	if got := NewMarkdown(false).Render(src); got != want {
		t.Errorf("plain rendering:\n%q\nwant\n%q", got, want)
	}
	if got := (*Markdown)(nil).Render("**a**"); got != "a" {
		t.Errorf("a nil renderer: %q", got)
	}
}
