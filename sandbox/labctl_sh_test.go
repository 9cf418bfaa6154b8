package sandbox

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// bashInPTY runs an interactive bash in a PTY with the shell integration
// sourced twice (as /etc/profile and /etc/bash.bashrc may both do) after an
// existing PROMPT_COMMAND. env is added to a minimal environment.
type bashInPTY struct {
	ptmx *os.File
	mu   sync.Mutex
	out  bytes.Buffer
}

func startBash(t *testing.T, env ...string) *bashInPTY {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("these tests run the shell integration in bash: %v", err)
	}
	script, err := filepath.Abs("../images/sandbox/labctl.sh")
	if err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(t.TempDir(), "rc")
	os.WriteFile(rc, []byte("PS1='$ '\nPROMPT_COMMAND='echo pc-old'\n. "+script+"\n. "+script+"\n"), 0o644)
	cmd := exec.Command(bash, "--noprofile", "--rcfile", rc, "-i")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERM=xterm"}, env...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	b := &bashInPTY{ptmx: ptmx}
	go io.Copy(b, ptmx)
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		ptmx.Close()
	})
	b.wait(t, "\x1b]133;A\a", 1)
	return b
}

func (b *bashInPTY) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.Write(p)
}

func (b *bashInPTY) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.String()
}

func (b *bashInPTY) send(t *testing.T, keys string) {
	t.Helper()
	if _, err := b.ptmx.WriteString(keys); err != nil {
		t.Fatal(err)
	}
}

// wait waits until the output holds want n times.
func (b *bashInPTY) wait(t *testing.T, want string, n int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s := b.String()
		if strings.Count(s, want) >= n {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("bash never wrote %q %d times; it wrote:\n%q", want, n, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestShellIntegrationMarksCommands(t *testing.T) {
	b := startBash(t)
	b.send(t, "false\r")
	out := b.wait(t, "\x1b]133;D;1\a\x1b]133;A\a", 1)
	if !strings.Contains(out, "\x1b]133;C\a") {
		t.Errorf("no OSC 133 C when the command started:\n%q", out)
	}
	if strings.Count(out, "\x1b]133;D;") != 1 {
		t.Errorf("the first prompt ran no command but got a D mark, or a mark was doubled:\n%q", out)
	}
	b.send(t, "true\r")
	b.wait(t, "\x1b]133;D;0\a\x1b]133;A\a", 1)
	b.wait(t, "pc-old", 3)
	b.send(t, "echo \"[$PROMPT_COMMAND]\"\r")
	// Sourced twice, yet extended once: a doubled entry would not match.
	b.wait(t, "[_labctl_prompt;echo pc-old]", 1)
}

func TestLabFunctionOutsideLabctlShell(t *testing.T) {
	b := startBash(t)
	b.send(t, "lab check; echo rc=$?\r")
	out := b.wait(t, "rc=2", 1)
	if !strings.Contains(out, "works only inside `labctl shell`") {
		t.Errorf("no explanation outside labctl shell:\n%q", out)
	}
	if strings.Contains(out, "7707") {
		t.Errorf("a request was sent outside labctl shell:\n%q", out)
	}
	b.send(t, "lab frobnicate; echo rc=$?\r")
	b.wait(t, "rc=2", 2)
	b.wait(t, "unknown command", 1)
}

// TestLabFunctionSpeaksTheLearnersLanguage: labctl shell sets LABCTL_LANG
// to the language of its messages; the lab function's help and errors are
// in it, and in English otherwise.
func TestLabFunctionSpeaksTheLearnersLanguage(t *testing.T) {
	for _, tc := range []struct {
		env        []string
		help, errs []string
	}{
		{[]string{"LABCTL_LANG=ja", "LANG=en_US.UTF-8"}, []string{"使い方: lab check", "今のステップの次のヒント"}, []string{"というコマンドはありません", "`labctl shell` の中でだけ使えます"}},
		{[]string{"LANG=ja_JP.UTF-8"}, []string{"使い方: lab check"}, []string{"というコマンドはありません", "の中でだけ使えます"}},
		{[]string{"LABCTL_LANG=en", "LANG=ja_JP.UTF-8"}, []string{"usage: lab check", "show the next hint"}, []string{"unknown command", "works only inside `labctl shell`"}},
	} {
		b := startBash(t, tc.env...)
		b.send(t, "lab help; echo rc=$?\r")
		out := b.wait(t, "rc=0", 1)
		b.send(t, "lab frobnicate; lab check; echo rc=$?\r")
		out2 := b.wait(t, "rc=2", 1)
		for _, w := range tc.help {
			if !strings.Contains(out, w) {
				t.Errorf("%v: lab help does not say %q:\n%s", tc.env, w, out)
			}
		}
		for _, w := range tc.errs {
			if !strings.Contains(out2, w) {
				t.Errorf("%v: lab's errors do not say %q:\n%s", tc.env, w, out2)
			}
		}
	}
}

func TestLabFunctionRequestAndAcknowledgement(t *testing.T) {
	b := startBash(t, "LABCTL_SHELL=1")
	request := regexp.MustCompile("\x1b\\]7707;labctl;hint;(lab[0-9]+)\a")

	b.send(t, "lab hint; echo rc=$?\r")
	nonce := waitMatch(t, b, request, 1)
	b.send(t, nonce+"\a")
	out := b.wait(t, "rc=0", 1)
	if strings.Count(out, nonce) != 1 { // in the request only
		t.Errorf("the acknowledgement was echoed:\n%q", out)
	}

	// A wrong acknowledgement is not taken for the answer.
	b.send(t, "lab hint; echo rc=$?\r")
	waitMatch(t, b, request, 2)
	b.send(t, "lab0\a")
	out = b.wait(t, "rc=1", 1)
	if !strings.Contains(out, "no answer from labctl") {
		t.Errorf("a wrong acknowledgement was not reported:\n%q", out)
	}

	// Echo is back on afterwards.
	b.send(t, "echo visible-typing\r")
	b.wait(t, "echo visible-typing", 1)
}

// waitMatch waits for the n-th match of re and returns its first group.
func waitMatch(t *testing.T, b *bashInPTY, re *regexp.Regexp, n int) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindAllStringSubmatch(b.String(), -1); len(m) >= n {
			return m[n-1][1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no request %d; bash wrote:\n%q", n, b.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
