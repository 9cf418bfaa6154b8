package classroom

import (
	"context"
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
// *NoLearnerError, a *NotReadyError (with the problem the class reports of
// the learner), or err itself.
func (s *Session[L]) Explain(ctx context.Context, learner string, err error) error {
	return Explain(ctx, s.Class, s.Prefix, learner, err)
}

// Explain is Session.Explain for the class r, whose namespaces are prefix
// and the learner's name.
func Explain(ctx context.Context, r Roll, prefix, learner string, err error) error {
	switch {
	case errors.Is(err, class.ErrNoLearner):
		return &NoLearnerError{Learner: learner, Namespace: prefix + learner, Err: err}
	case errors.Is(err, provision.ErrNotUp):
		e := &NotReadyError{Learner: learner, Err: err}
		if infos, lerr := r.Learners(ctx); lerr == nil {
			for _, info := range infos {
				if info.Name == learner {
					e.Problem = info.Problem
				}
			}
		}
		return e
	}
	return err
}
