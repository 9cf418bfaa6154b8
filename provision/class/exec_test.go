package class

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/internal/podexec"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

// hostile is what a learner's own `sh` (first in PATH in their sandbox)
// prints to take over the instructor's terminal: clear the screen, write
// the clipboard (OSC 52), and go back to the start of the line.
const hostile = "\x1b[2J\x1b]52;c;cHduZWQ=\x07over\rwritten"

// hostileShown is hostile as the instructor may read it.
const hostileShown = `\x1b[2J\x1b]52;c;cHduZWQ=\x07over\x0dwritten`

// printing answers every exec by writing out on the process's error
// output, then exiting with code.
func printing(out string, code int) func(context.Context, podexec.Exec) (int, error) {
	return func(_ context.Context, x podexec.Exec) (int, error) {
		if x.Stdin != nil {
			_, _ = io.Copy(io.Discard, x.Stdin)
		}
		_, _ = io.WriteString(x.Stderr, out)
		return code, nil
	}
}

// sleeping is a process that never ends: the exec returns once its
// context does, as podexec's does.
func sleeping(ctx context.Context, _ podexec.Exec) (int, error) {
	<-ctx.Done()
	return -1, ctx.Err()
}

func fakeLearner(start func(context.Context, podexec.Exec) (int, error), wait time.Duration) *learnerRuntime {
	pods := learnerPods{ns: "labctl-ada", learner: "ada", start: start, wait: wait}
	return &learnerRuntime{podSandbox: podSandbox{pods}, lab: testObjects().lab, learner: "ada"}
}

// withNodeAccess gives e a class whose cluster holds e's control-plane Pod
// with an address, as a node-access class's up finds it.
func withNodeAccess(e *learnerRuntime) *learnerRuntime {
	e.class, _ = fakeClass(corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: vcpPod, Namespace: e.ns}, Status: corev1.PodStatus{PodIP: "10.244.1.7"}})
	return e
}

// The processes labctl runs in a learner's Pods, each as a call that
// fails when the process exits non-zero, and what to do when one of them
// does not end.
var learnerExecs = []struct {
	what, todo string
	call       func(context.Context, *learnerRuntime) error
}{
	{"writing the kubeconfig", "`labctl class reset ada` gives them a new sandbox", func(ctx context.Context, e *learnerRuntime) error {
		return e.WriteFile(ctx, "/root/.kube/config", []byte("apiVersion: v1\n"))
	}},
	{"seeding /root", "`kubectl -n labctl-ada describe pod vcp`", func(ctx context.Context, e *learnerRuntime) error {
		return e.seedHome(ctx, false)
	}},
	{"wiping /root", "`kubectl -n labctl-ada describe pod vcp`", func(ctx context.Context, e *learnerRuntime) error {
		return e.seedHome(ctx, true)
	}},
	{"backing up /root", "`kubectl -n labctl-ada describe pod vcp`", func(ctx context.Context, e *learnerRuntime) error {
		return e.BackupHome(ctx, io.Discard)
	}},
	// In a node-access class: the listener in the learner's node, where
	// the learner is root and may have replaced sh, and the node command's
	// files in the sandbox.
	{"starting the node's listener", "the learner is root on their node", func(ctx context.Context, e *learnerRuntime) error {
		return withNodeAccess(e).startNodeListener(ctx)
	}},
	{"writing the node command's files", "`labctl class reset ada` gives them a new sandbox", func(ctx context.Context, e *learnerRuntime) error {
		e = withNodeAccess(e)
		if _, err := ensureNodeAccessCerts(ctx, e.class.cs, e.ns, time.Now()); err != nil {
			return err
		}
		return e.writeNodeAccess(ctx)
	}},
	// A checker round runs until its own deadline, which ctx carries.
	{"running the checks", "", func(ctx context.Context, e *learnerRuntime) error {
		_, err := provision.RunChecker(ctx, checks.Request{Checks: []lab.Check{{Name: "a"}}}, e.ExecChecker)
		return err
	}},
}

// What a process in a learner's Pod prints reaches the instructor's
// messages escaped: no byte of it steers their terminal.
func TestLearnerOutputIsEscaped(t *testing.T) {
	for _, x := range learnerExecs {
		err := x.call(context.Background(), fakeLearner(printing(hostile+"\n", 1), 0))
		if err == nil {
			t.Errorf("%s: no error for exit 1", x.what)
			continue
		}
		msg := err.Error()
		if strings.ContainsAny(msg, "\x1b\x07\r") {
			t.Errorf("%s: the error holds the learner's bytes raw: %q", x.what, msg)
		}
		if !strings.Contains(msg, hostileShown) {
			t.Errorf("%s: the error does not show the output escaped: %q", x.what, msg)
		}
	}
}

// A process that does not end keeps no command waiting: it is stopped at
// its deadline, and the message names the learner and what to do.
func TestLearnerExecHasADeadline(t *testing.T) {
	const wait = 200 * time.Millisecond
	for _, x := range learnerExecs {
		if x.todo == "" {
			continue
		}
		done := make(chan error, 1)
		began := time.Now()
		go func() { done <- x.call(context.Background(), fakeLearner(sleeping, wait)) }()
		select {
		case err := <-done:
			if err == nil {
				t.Fatalf("%s: no error from a process that never ended", x.what)
			}
			if took := time.Since(began); took > wait+time.Second {
				t.Errorf("%s: returned %v after a deadline of %v", x.what, took, wait)
			}
			for _, want := range []string{"learner ada", "stopped after " + wait.String(), x.todo} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %q does not say %q", x.what, err, want)
				}
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: %v is not a deadline", x.what, err)
			}
		case <-time.After(wait + 5*time.Second):
			t.Fatalf("%s: still waiting %v after the deadline", x.what, 5*time.Second)
		}
	}
}

// Interrupting the command is not the process's deadline.
func TestLearnerExecInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := fakeLearner(sleeping, time.Hour).WriteFile(ctx, "/root/.kube/config", nil)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "stopped after") {
		t.Errorf("an interrupted exec: %v", err)
	}
}

// A process that prints without end fills no memory: labctl keeps the
// first provision.MaxKept bytes, says it cut the rest, and quotes little of it.
func TestLearnerOutputIsCapped(t *testing.T) {
	const total = 64 << 20
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	flood := func(_ context.Context, x podexec.Exec) (int, error) {
		for range total / len(chunk) {
			if _, err := x.Stdout.Write(chunk); err != nil {
				return -1, err
			}
		}
		return 1, nil
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := fakeLearner(flood, 0).WriteFile(context.Background(), "/root/.kube/config", nil)
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 8<<20 {
		t.Errorf("%d MiB allocated for %d MiB of output", grown>>20, total>>20)
	}
	if err == nil {
		t.Fatal("no error for exit 1")
	}
	if msg := err.Error(); !strings.Contains(msg, "cut") || len(msg) > 4<<10 {
		t.Errorf("the error does not say the output was cut, or quotes too much of it (%d bytes): %.300q", len(msg), msg)
	}
}
