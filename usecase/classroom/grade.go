package classroom

import (
	"context"
	"io"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/report"
	"github.com/labctl/labctl/provision/class"
)

// Grade grades every learner as `labctl grade` does, Parallel at a time,
// each into their own history (Session.Store), into one class report. A
// class without learners is an *EmptyError.
func (s *Session[L]) Grade(ctx context.Context) (*report.Class, error) {
	infos, err := s.Learners(ctx)
	if err != nil {
		return nil, err
	}
	rep := &report.Class{Lab: s.Lab.Metadata.Name, Learners: make([]report.ClassLearner, len(infos))}
	ForEach(len(infos), Parallel, func(i int) {
		rep.Learners[i] = s.gradeLearner(ctx, infos[i])
	})
	return rep, nil
}

// gradeLearner is one learner's grade, or why they could not be graded.
func (s *Session[L]) gradeLearner(ctx context.Context, info class.LearnerInfo) report.ClassLearner {
	lg := report.ClassLearner{Name: info.Name}
	if !info.Ready && !info.Settling {
		lg.Error = "the learner's lab is not ready: " + info.Problem
		return lg
	}
	env, err := s.Connect(ctx, info.Name)
	if err != nil {
		lg.Error = err.Error()
		return lg
	}
	defer env.Close()
	store, err := s.Store(info.Name)
	if err != nil {
		lg.Error = err.Error()
		return lg
	}
	gr := &grading.Grader{Lab: s.Lab, Digest: s.Digest, Store: store, Checker: env, Scripts: env,
		Catalog: s.Catalog, Out: io.Discard, Err: io.Discard}
	r, _, err := gr.Grade(ctx)
	if err != nil {
		lg.Error = err.Error()
		return lg
	}
	lg.Report = r
	return lg
}
