package class

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/labctl/labctl/internal/podexec"
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
func (p learnerPods) run(ctx context.Context, c podCommand) (int, *provision.KeptOutput, error) {
	kept := provision.NewKeptOutput(0)
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
	if c.container == containerNode {
		return fmt.Errorf("stopped after %v (%w): the node of learner %s is overloaded, or a program labctl runs there was replaced "+
			"(the learner is root on their node); see `kubectl -n %s describe pod %s`, and `labctl class reset --hard %s` makes their node anew, their /root saved first",
			wait, context.DeadlineExceeded, p.learner, p.ns, c.pod, p.learner)
	}
	hint := ""
	if c.container == containerAdmin {
		// It works over the learner's /root: seeding, wiping or saving it.
		hint = ", or their /root holds more than it can go through in that time (ask them to delete what they do not need)"
	}
	return fmt.Errorf("stopped after %v (%w): pod %s of learner %s is overloaded%s; see `kubectl -n %s describe pod %s`",
		wait, context.DeadlineExceeded, c.pod, p.learner, hint, p.ns, c.pod)
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
