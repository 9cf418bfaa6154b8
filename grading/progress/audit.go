package progress

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/labctl/labctl/lab"
)

// AuditWindows gives each audit check of cs the start of its step's
// window (StepStart), by position in cs; other checks get the zero time. A
// check (a step's, or its mistakes' evidence) is found in l by its content; one that several steps share takes
// the current step's window when that is one of them, else the first's.
// It is nil when no check has a window, and for nil progress (none read):
// audit checks then judge the whole log.
func (p *Progress) AuditWindows(l *lab.Lab, cs []lab.Check) []time.Time {
	if p == nil {
		return nil
	}
	out := make([]time.Time, len(cs))
	set := false
	for i := range cs {
		if cs[i].Audit == nil {
			continue
		}
		if step := p.stepOf(l, &cs[i]); step != "" {
			out[i] = p.StepStart(step)
			set = set || !out[i].IsZero()
		}
	}
	if !set {
		return nil
	}
	return out
}

// MarkSteps gives each audit check of cs whose step has no recorded start
// (Started: the progress did not see it become current, as for a learner
// who advances through an invite on their own machine) that step, by
// position in cs: the checker then begins its window at the step's
// earliest mark in the log at or after its AuditWindows time
// (checks.MarkStep). Other checks get "". It is nil when no check needs a
// mark, and for nil progress.
func (p *Progress) MarkSteps(l *lab.Lab, cs []lab.Check) []string {
	if p == nil {
		return nil
	}
	var out []string
	for i := range cs {
		if cs[i].Audit == nil {
			continue
		}
		step := p.stepOf(l, &cs[i])
		if _, seen := p.Started[step]; step == "" || seen {
			continue
		}
		if out == nil {
			out = make([]string, len(cs))
		}
		out[i] = step
	}
	return out
}

// stepOf is the step of l that c belongs to (one of its checks, or of its
// mistakes' evidence), found by content: of several, the current step
// when it is one of them, else the first; "" for none.
func (p *Progress) stepOf(l *lab.Lab, c *lab.Check) string {
	cur, _ := p.CurrentStep(l)
	step := ""
	for _, s := range l.Steps {
		s.EveryCheck(func(o *lab.Check) {
			if o.Name != c.Name || !reflect.DeepEqual(*o, *c) {
				return
			}
			if step == "" || (cur != nil && s.ID == cur.ID) {
				step = s.ID
			}
		})
	}
	return step
}

// StepHeads gives each git check of cs that counts commits since its step
// began (since: step) the commit its repository was at then (SetHead), by
// position in cs; "" where the progress does not say (the step was not
// seen to begin), and for other checks. It is nil when cs has no such
// check, and for nil progress. See StepStarts.
func (p *Progress) StepHeads(l *lab.Lab, cs []lab.Check) []string {
	heads, _ := p.StepStarts(l, cs)
	return heads
}

// StepStarts is StepHeads, with late saying, by position, which heads were
// noted late (SetLateHead): the learner's commits for the step may be in
// them. A step's start in a repository is where it was as the earliest
// step of its run began (runStart), else as a later one of the run did.
func (p *Progress) StepStarts(l *lab.Lab, cs []lab.Check) (heads []string, late []bool) {
	if p == nil {
		return nil, nil
	}
	for i := range cs {
		g := cs[i].Git
		if g == nil || g.Since != lab.SinceStep {
			continue
		}
		if heads == nil {
			heads, late = make([]string, len(cs)), make([]bool, len(cs))
		}
		if step := p.stepOf(l, &cs[i]); step != "" {
			heads[i], late[i] = p.startHead(l, step, g.Repo)
		}
	}
	return heads, late
}

// startHead is where repo was as step id's work in it could begin, and
// whether that was noted late; "" when the progress does not say.
func (p *Progress) startHead(l *lab.Lab, id, repo string) (string, bool) {
	s := Index(l, id)
	for k := runStart(l, s, repo); k <= s; k++ {
		k := l.Steps[k].ID
		if h, ok := p.Heads[k][repo]; ok {
			return h, p.LateHeads[k][repo]
		}
	}
	return "", false
}

// runStart is the first of the steps before step s (by index in l) that
// do no work in repo, up to s: the steps from it to s-1 have no check that
// looks at repo (worksIn), so every commit in repo after the step before
// it passed is s's work, done early or not. A learner who works ahead of
// labctl, as through labctl exec, makes step s's commit before labctl sees
// step s-1 pass; a commit made before the step before the run passed is
// never counted, as it may be that step's work.
func runStart(l *lab.Lab, s int, repo string) int {
	for s > 0 && !worksIn(&l.Steps[s-1], repo) {
		s--
	}
	return s
}

// worksIn says whether any check of step (its mistakes' evidence
// included) looks at repo: a git check of it, a commit of it an audit
// check times, a value read from it, a command that names it. A git check
// that only holds the cluster to a file at HEAD (holdsClusterTo) reads
// the repository without asking for work in it: a step that applies the
// repository and judges the cluster whole against it does not make the
// next step's commits its own.
func worksIn(step *lab.Step, repo string) bool {
	q, err := json.Marshal(repo)
	if err != nil {
		return true
	}
	ref, _ := json.Marshal("git:" + repo + "@")
	ref = ref[:len(ref)-1]
	found := false
	step.EveryCheck(func(c *lab.Check) {
		if holdsClusterTo(c, repo) {
			return
		}
		b, err := json.Marshal(c)
		if err != nil {
			found = true
			return
		}
		found = found || bytes.Contains(b, append([]byte(`"repo":`), q...)) || bytes.Contains(b, ref)
		if c.Command != nil {
			cmd, err := json.Marshal(c.Command)
			found = found || err != nil || bytes.Contains(cmd, q[1:len(q)-1])
		}
	})
	return found
}

// holdsClusterTo says whether c is a git check of repo whose one
// assertion compares a field of a file at HEAD with a cluster object's
// (a kube: reference), and nothing else: it judges the cluster.
func holdsClusterTo(c *lab.Check, repo string) bool {
	g := c.Git
	if g == nil || g.Repo != repo || g.Field == nil || (g.Exists != nil && !*g.Exists) || len(g.Config) > 0 || g.Commits != nil ||
		g.Since != "" || g.ReportHead || g.Clean != nil || len(g.Tracked) > 0 || g.Message != nil {
		return false
	}
	refs := 0
	for _, v := range g.Field.Operands() {
		if v == nil {
			continue
		}
		if !strings.HasPrefix(v.Ref, "kube:") {
			return false
		}
		refs++
	}
	return refs > 0
}

// StartRepos are the repositories whose heads the host notes as step id
// of l begins (grading.NoteStart), each once: those its checks count
// commits from (lab.Step.HeadRepos), then those of later steps whose runs
// (runStart) begin with it.
func StartRepos(l *lab.Lab, id string) []string {
	s := Index(l, id)
	if s < 0 {
		return nil
	}
	out := l.Steps[s].HeadRepos()
	for t := s + 1; t < len(l.Steps); t++ {
		for _, r := range l.Steps[t].HeadRepos() {
			if !slices.Contains(out, r) && runStart(l, t, r) <= s {
				out = append(out, r)
			}
		}
	}
	return out
}
