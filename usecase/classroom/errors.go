package classroom

import (
	"errors"
	"fmt"

	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/class"
)

// NoLearnerError says the class has no learner by that name.
type NoLearnerError struct {
	Learner, Namespace string
	Err                error
}

func (e *NoLearnerError) Error() string {
	return fmt.Sprintf("the class has no learner %s (namespace %s): `labctl class status` lists the learners", e.Learner, e.Namespace)
}

func (e *NoLearnerError) Unwrap() error { return e.Err }

// NotReadyError says a learner's lab is not ready, and what is wrong with
// it when the class says.
type NotReadyError struct {
	Learner string
	// Problem is what the class reports of the learner's lab ("" when it
	// says nothing).
	Problem string
	Err     error
}

func (e *NotReadyError) Error() string {
	what := "learner " + e.Learner
	if e.Problem != "" {
		what += ": " + e.Problem
	}
	return what + ": the learner's lab is not ready: `labctl class up` repairs it"
}

func (e *NotReadyError) Unwrap() error { return e.Err }

// EmptyError says the class has no learner on its cluster.
type EmptyError struct{ Prefix string }

func (e *EmptyError) Error() string {
	return fmt.Sprintf("the class has no learner on this cluster (prefix %s): `labctl class up` makes them", e.Prefix)
}

// Explain says what err, from the class about learner, means: a
// *NoLearnerError, a *NotReadyError (with the problem the class's
// *class.NotReadyError carries), or err itself.
func (s *Session[L]) Explain(learner string, err error) error {
	return Explain(s.Prefix, learner, err)
}

// Explain is Session.Explain for a class whose namespaces are prefix and
// the learner's name.
func Explain(prefix, learner string, err error) error {
	var notReady *class.NotReadyError
	switch {
	case errors.Is(err, class.ErrNoLearner):
		return &NoLearnerError{Learner: learner, Namespace: prefix + learner, Err: err}
	case errors.As(err, &notReady):
		return &NotReadyError{Learner: learner, Problem: notReady.Problem, Err: err}
	case errors.Is(err, provision.ErrNotUp):
		return &NotReadyError{Learner: learner, Err: err}
	}
	return err
}
