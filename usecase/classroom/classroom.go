// Package classroom is the logic of running a class that holds for any
// runtime: one lab per learner, worked on for many learners at once
// (ForEach, UpAll, DownAll), the decision whether the cluster has room for
// more (CheckRoom), roster files (ParseRoster), what the class says of one
// learner (NoLearnerError, NotReadyError), and each learner's status and
// grade gathered into one document (Session.Status, Session.Grade, whose
// report grading/report renders).
//
// It reaches no cluster itself: the runtime is given as small interfaces,
// which provision/class implements.
package classroom

import (
	"context"
	"io"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision/class"
)

// Parallel bounds how many learners status, grade and down work on at
// once.
const Parallel = 8

// Roll lists a class's learners as its cluster reports them.
type Roll interface {
	Learners(ctx context.Context) ([]class.LearnerInfo, error)
}

// Lab is one learner's live lab as the class checks and grades it: the
// checker (a grading.Prober too when the lab runs probes) and the
// learner's scripts.
type Lab interface {
	grading.Checker
	grading.ScriptRunner
	io.Closer
}

// Class reaches the labs of a class's learners: Connect fails with
// class.ErrNoLearner or a *class.NotReadyError, which Session.Explain
// words for the class.
type Class[L Lab] interface {
	Roll
	Connect(ctx context.Context, learner string) (L, error)
}

// Session is a class opened for one lab: the lab and how each learner's
// lab is reached and recorded.
type Session[L Lab] struct {
	Class Class[L]
	// Prefix is the learners' namespace prefix.
	Prefix  string
	Lab     *lab.Lab
	Digest  string
	Catalog *msg.Catalog
	// Store is the progress store of a learner.
	Store func(learner string) (*progress.Store, error)
}

// Connect reaches a learner's lab, or says why it cannot (Explain).
func (s *Session[L]) Connect(ctx context.Context, learner string) (L, error) {
	env, err := s.Class.Connect(ctx, learner)
	if err != nil {
		var none L
		return none, s.Explain(learner, err)
	}
	return env, nil
}

// Learners lists the class's learners; a class without any is an
// *EmptyError.
func (s *Session[L]) Learners(ctx context.Context) ([]class.LearnerInfo, error) {
	infos, err := s.Class.Learners(ctx)
	if err != nil {
		return nil, err
	}
	if len(infos) == 0 {
		return nil, &EmptyError{Prefix: s.Prefix}
	}
	return infos, nil
}
