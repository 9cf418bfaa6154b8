package class

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/podexec"
	"github.com/labctl/labctl/internal/textsafe"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// learnerPods reaches the processes of one learner's Pods through the
// class cluster's exec API: every process labctl starts there, but the
// interactive shell, runs through run.
type learnerPods struct {
	cfg *rest.Config
	cs  kubernetes.Interface
	ns  string
	// learner names the learner in messages.
	learner string
	// start runs x; nil is x.Run through cfg and cs.
	start func(ctx context.Context, x podexec.Exec) (int, error)
	// wait, when set, replaces the deadline of every command that has one.
	wait time.Duration
}

// podCommand is one process labctl starts in a learner's Pod.
type podCommand struct {
	pod, container string
	cmd            []string
	stdin          io.Reader
	// stdout and stderr, when set, receive the process's output as it
	// comes, and their owner bounds what it keeps; a stream left nil goes
	// to the output run returns.
	stdout, stderr io.Writer
	// wait bounds the process. Zero leaves it to ctx: a lab's script or a
	// checker round, which run as long as their own deadlines allow.
	wait time.Duration
}

// run starts c and waits for it, at most c.wait; it returns its exit code
// and the output it kept. A process past its deadline is stopped, with an
// error (wrapping context.DeadlineExceeded) that says why that may be and
// what to do; an error of ctx's own is returned as it is.
func (p learnerPods) run(ctx context.Context, c podCommand) (int, *keptOutput, error) {
	kept := &keptOutput{}
	x := podexec.Exec{Namespace: p.ns, Pod: c.pod, Container: c.container, Cmd: c.cmd, Stdin: c.stdin,
		Stdout: c.stdout, Stderr: c.stderr}
	if x.Stdout == nil {
		x.Stdout = kept
	}
	if x.Stderr == nil {
		x.Stderr = kept
	}
	start := p.start
	if start == nil {
		start = func(ctx context.Context, x podexec.Exec) (int, error) { return x.Run(ctx, p.cfg, p.cs) }
	}
	wait := c.wait
	if wait <= 0 {
		code, err := start(ctx, x)
		return code, kept, err
	}
	if p.wait > 0 {
		wait = p.wait
	}
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	code, err := start(rctx, x)
	if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return -1, kept, p.overran(c, wait)
	}
	return code, kept, err
}

// overran is the error of c stopped at its deadline wait.
func (p learnerPods) overran(c podCommand, wait time.Duration) error {
	if c.container == containerSandbox {
		return fmt.Errorf("stopped after %v (%w): the sandbox of learner %s is overloaded, or a program labctl runs there "+
			"was replaced (the learner is root in it); `labctl class reset %s` gives them a new sandbox, their /root saved first",
			wait, context.DeadlineExceeded, p.learner, p.learner)
	}
	hint := ""
	if c.container == containerAdmin {
		// It works over the learner's /root: seeding, wiping or saving it.
		hint = ", or their /root holds more than it can go through in that time (ask them to delete what they do not need)"
	}
	return fmt.Errorf("stopped after %v (%w): pod %s of learner %s is overloaded%s; see `kubectl -n %s describe pod %s`",
		wait, context.DeadlineExceeded, c.pod, p.learner, hint, p.ns, c.pod)
}

// maxKept is how much of a process's output labctl keeps for its messages.
const maxKept = 64 << 10

// keptOutput keeps the first max bytes (maxKept when 0) written to it and
// counts the rest, which it drops: what a process in a learner's Pod
// printed, with memory bounded whatever it prints. Its text is escaped
// (textsafe) as it is read: the learner may have written it, to steer the
// instructor's terminal. It is safe for concurrent use.
type keptOutput struct {
	mu      sync.Mutex
	max     int
	b       []byte
	dropped int64
}

func (k *keptOutput) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	limit := k.max
	if limit <= 0 {
		limit = maxKept
	}
	n := min(len(p), limit-len(k.b))
	k.b = append(k.b, p[:n]...)
	k.dropped += int64(len(p) - n)
	return len(p), nil
}

// Bytes is the output kept, as the process wrote it, for a reader that
// parses it; messages quote it through lastLines or firstLine.
func (k *keptOutput) Bytes() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]byte(nil), k.b...)
}

// cut says whether output was dropped.
func (k *keptOutput) cut() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.dropped > 0
}

// lastLines is the last n lines kept, escaped, each at most
// maxQuotedLine bytes, and a note when output was dropped.
func (k *keptOutput) lastLines(n int) string {
	lines := strings.Split(provision.LastLines(string(k.Bytes()), n), "\n")
	for i, l := range lines {
		lines[i] = quotedLine(l)
	}
	return strings.Join(lines, "\n") + k.cutNote()
}

// firstLine is the first line kept that is not blank, escaped, and a note
// when output was dropped.
func (k *keptOutput) firstLine() string {
	for _, l := range strings.Split(string(k.Bytes()), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return quotedLine(l) + k.cutNote()
		}
	}
	return "(it printed nothing)"
}

// text is all that was kept, escaped, and a note when output was dropped.
func (k *keptOutput) text() string {
	return textsafe.Escape(string(k.Bytes())) + k.cutNote()
}

func (k *keptOutput) cutNote() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dropped == 0 {
		return ""
	}
	return fmt.Sprintf(" (output cut: labctl kept its first %d KiB and dropped %d bytes more)", len(k.b)>>10, k.dropped)
}

// newAnswer keeps a checker's answer: as much as checks.ReadResponse
// reads.
func newAnswer() *keptOutput { return &keptOutput{max: checks.MaxAnswer} }

// readAnswer reads the checker's answer to cs that answer kept.
func readAnswer(cs []lab.Check, answer *keptOutput) ([]checks.Result, error) {
	if answer.cut() {
		return nil, fmt.Errorf("the checker's answer is more than the %d bytes an answer can be", checks.MaxAnswer)
	}
	return checks.ReadResponse(cs, answer.Bytes())
}

// maxQuotedLine bounds a line of output a message quotes.
const maxQuotedLine = 300

// quotedLine is a line of a process's output as a message quotes it:
// escaped, and cut to maxQuotedLine bytes.
func quotedLine(l string) string {
	if len(l) <= maxQuotedLine {
		return textsafe.EscapeLine(l)
	}
	cut := maxQuotedLine
	for i := cut; i > cut-utf8.UTFMax; i-- {
		if utf8.RuneStart(l[i]) {
			cut = i
			break
		}
	}
	return textsafe.EscapeLine(l[:cut]) + "…"
}

// Deadlines of the processes labctl runs for itself in a learner's Pods.
const (
	// fileWait bounds writing a small file.
	fileWait = time.Minute
	// copyWait bounds copying the checker into a Pod.
	copyWait = 2 * time.Minute
	// homeWait bounds work over the whole of a learner's /root: seeding,
	// wiping and backing it up (up to reset.MaxBackup).
	homeWait = 10 * time.Minute
)

// pods reaches the Pods in namespace ns, a learner's.
func (c *Class) pods(ns string) learnerPods {
	return learnerPods{cfg: c.rest, cs: c.cs, ns: ns, learner: strings.TrimPrefix(ns, c.cfg.Prefix)}
}
