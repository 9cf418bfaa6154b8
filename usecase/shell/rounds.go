package shell

import (
	"context"
	"errors"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
)

// rounds runs the current step's checks after commands: each trigger is
// debounced, a passing round is confirmed by a second one after a pause,
// and a confirmed pass completes the step.
func (s *Session) rounds(ctx context.Context) {
	failedBefore := false // the last round could not run: say so only once
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.trigger:
		}
		if !s.settle(ctx) {
			return
		}
		text, couldNotRun := s.autoRound(ctx)
		if couldNotRun && failedBefore {
			text = ""
		}
		failedBefore = couldNotRun
		if text != "" {
			select {
			case s.notices <- text:
			case <-ctx.Done():
				return
			}
		}
	}
}

// settle waits until no trigger came for the debounce time. It reports
// false when ctx is done.
func (s *Session) settle(ctx context.Context) bool {
	t := time.NewTimer(s.cfg.Debounce)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-s.trigger:
			t.Reset(s.cfg.Debounce)
		case <-t.C:
			return true
		}
	}
}

// autoRound checks the current step and, when it passes twice, completes it.
// It returns the text to show (empty for nothing) and whether the checks
// could not run. The progress is read once: both rounds and the completion
// take what they need from that reading.
func (s *Session) autoRound(ctx context.Context) (string, bool) {
	st, err := s.state()
	if err != nil {
		return s.couldNotRunText(err), true
	}
	step := st.Current
	// A step with a probe passes only when the learner asks (lab check):
	// its probe changes the cluster, and its checks judge the probe's run.
	if step == nil || len(step.Checks) == 0 || step.Probe != nil {
		return "", false
	}
	results, err := s.round(ctx, st)
	if err != nil {
		if ctx.Err() != nil {
			return "", false
		}
		return s.couldNotRunText(err), true
	}
	if !checks.StepPassed(results) {
		return "", false
	}
	select {
	case <-ctx.Done():
		return "", false
	case <-time.After(s.cfg.Recheck):
	}
	results, err = s.round(ctx, st)
	if err != nil || !checks.StepPassed(results) {
		return "", false
	}
	text, err := s.complete(ctx, st, results)
	if err != nil {
		return s.couldNotRunText(err), true
	}
	return text, false
}

// round runs the checks of st's current step once (checks.RunRound: its
// deadline, its answer verified), with the audit windows st gives them.
func (s *Session) round(ctx context.Context, st State) ([]checks.Result, error) {
	return checks.RunRound(ctx, checks.Round{Checks: st.Current.Checks, Windows: st.Step, Lang: s.catalog().Lang}, s.cfg.Check)
}

// askedRound runs the checks of st's current step when the learner asks:
// through the step's probe when it has one (grading.RunStep).
func (s *Session) askedRound(ctx context.Context, st State) ([]checks.Result, error) {
	return grading.RunStep(ctx, s.cfg.Check, s.cfg.Probe, st.Current, st.Step, s.catalog(), nil)
}

// complete records that st's current step passed and returns the banner
// saying so, with the next step's text. A step that is no longer current
// (completed meanwhile by a request, or in another terminal) gives no
// banner: Record says whether this round moved the learner on.
func (s *Session) complete(ctx context.Context, st State, results []checks.Result) (string, error) {
	s.stepMu.Lock()
	defer s.stepMu.Unlock()
	step := *st.Current
	after, moved, err := s.cfg.Progress.Record(ctx, step.ID, results)
	after = s.inText(after)
	var setupErr *grading.ScriptError
	if errors.As(err, &setupErr) {
		return s.passedBanner(step, after) + s.couldNotRunText(err), nil
	}
	if err != nil {
		return "", err
	}
	if !moved {
		return "", nil
	}
	return s.passedBanner(step, after), nil
}
