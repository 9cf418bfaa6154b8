package class

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// rawBytes says whether s holds a byte that would steer a terminal.
func rawBytes(s string) bool { return strings.ContainsAny(s, "\x1b\x07\r\n") }

// A container's termination message is the learner's to write (root in
// the sandbox writes /dev/termination-log and ends it): the problem
// `class up` and `class status` report quotes it escaped, on one line.
func TestPodProblemEscapesTerminationMessage(t *testing.T) {
	p := testObjects().sandboxPod()
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{
		Name:                 containerSandbox,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off\r" + hostile}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: hostile + "\nlabctl: every learner is ready"}},
	}}
	got := podProblem(p)
	if rawBytes(got) {
		t.Errorf("the problem holds the learner's bytes raw: %q", got)
	}
	for _, want := range []string{"keeps failing", hostileShown + `\x0alabctl: every learner is ready`, `back-off\x0d`} {
		if !strings.Contains(got, want) {
			t.Errorf("%q does not say %q", got, want)
		}
	}
}

// The learner is admin of their own control plane: what it answers (an
// admission webhook of theirs words its own denials) reaches `class up`
// escaped.
func TestSetUpEscapesTheControlPlanesAnswers(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "namespaces", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New(`admission webhook "deny.ada" denied the request: ` + hostile)
	})
	e := fakeLearner(printing("", 0), 0)
	e.adminCS, e.admin = cs, &rest.Config{}
	err := e.setUp(context.Background())
	if err == nil {
		t.Fatal("set up despite the denial")
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\x1b\x07\r") || !strings.Contains(msg, hostileShown) {
		t.Errorf("the error does not show the denial escaped: %q", msg)
	}
}
