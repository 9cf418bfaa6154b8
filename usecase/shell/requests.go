package shell

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
)

// answer handles one request of the lab function: it writes the answer on
// the terminal, then the acknowledgement into the shell's input. Keystrokes
// wait meanwhile; a Ctrl-C abandons the request, and so does the
// acknowledgement deadline.
func (s *Session) answer(ctx context.Context, m Mark) {
	seen := time.Now()
	s.inMu.Lock()
	defer s.inMu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, AckDeadline)
	defer cancel()
	s.reqMu.Lock()
	s.reqCancel = cancel
	s.reqMu.Unlock()
	defer func() {
		s.reqMu.Lock()
		s.reqCancel = nil
		s.reqMu.Unlock()
	}()

	text := s.reply(ctx, m.Verb)
	if ctx.Err() != nil || time.Since(seen) >= AckDeadline {
		return
	}
	s.write(text)
	_, _ = io.WriteString(s.cfg.Shell, m.Nonce+"\a")
}

// abandonRequest cancels the request being answered, if any.
func (s *Session) abandonRequest() {
	s.reqMu.Lock()
	defer s.reqMu.Unlock()
	if s.reqCancel != nil {
		s.reqCancel()
	}
}

// reply computes the answer to verb.
func (s *Session) reply(ctx context.Context, verb string) string {
	st, err := s.state()
	if err != nil {
		return s.couldNotRunText(err)
	}
	switch verb {
	case VerbStatus:
		return s.statusText(st)
	case VerbCheck, VerbNext, VerbHint, VerbStep, VerbWhy:
	default:
		return fmt.Sprintf(s.catalog().UnknownRequest, verb) + "\n"
	}
	if st.Current == nil {
		done := fmt.Sprintf(s.catalog().AllDone, len(s.lab().Steps)) + "\n"
		if why := s.labWhyText(); verb == VerbWhy && why != "" {
			done += "\n" + why
		}
		return done
	}
	step := *st.Current
	switch verb {
	case VerbStep:
		heading := fmt.Sprintf(s.catalog().ShellStep, s.stepNumber(step.ID), len(s.lab().Steps), shown(step.Title))
		return s.stepText(heading, step)
	case VerbWhy:
		if why := s.labWhyText(); why != "" {
			return s.whyText(step) + "\n" + why
		}
		return s.whyText(step)
	case VerbHint:
		if len(step.Hints) == 0 {
			return s.catalog().NoHints + "\n"
		}
		i := s.hints[step.ID]
		if i >= len(step.Hints) {
			return s.catalog().NoMoreHints + "\n"
		}
		s.hints[step.ID] = i + 1
		hint := s.md.Render(step.Hints[i])
		if strings.Contains(hint, "\n") {
			hint = "\n" + indent(hint)
		}
		return fmt.Sprintf(s.catalog().Hint, i+1, len(step.Hints), hint) + "\n"
	}
	// check and next run the checks now, once: an explicit request is
	// answered at once, as `labctl check` is.
	results, err := s.askedRound(ctx, st)
	if err != nil {
		return s.couldNotRunText(err)
	}
	text := ""
	if verb == VerbCheck || !checks.StepPassed(results) {
		text = fmt.Sprintf(s.catalog().Checking, s.stepNumber(step.ID), len(s.lab().Steps), shown(step.Title)) + "\n" +
			s.resultsText(step, results, grading.Evidence(ctx, s.cfg.Check, &step, results, st.Windows, s.catalog()))
	}
	if !checks.StepPassed(results) {
		if _, _, err := s.cfg.Progress.Record(ctx, step.ID, results); err != nil {
			return text + s.couldNotRunText(err)
		}
		return text
	}
	banner, err := s.complete(ctx, st, results)
	if err != nil {
		return text + s.couldNotRunText(err)
	}
	return text + banner
}
