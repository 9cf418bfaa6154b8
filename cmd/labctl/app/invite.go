package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/internal/statedir"
	"github.com/labctl/labctl/provision/class"
)

// An invited learner works in their own sandbox on the class cluster with
// the file `labctl class invite` wrote: `labctl shell --invite FILE` and
// `labctl ui --invite FILE`. Their labctl runs the checks their sandbox can
// judge, as feedback; the grade is the instructor's `labctl class grade`.

// openInvite reads the invite in file, loads the lab it is for (--lab when
// given, else the lab the invite names, built in or installed) and returns
// the state an invited session runs on: the practice lab
// (grading.Practice) and a progress of the learner's own, under the lab's
// state directory in invite/LEARNER, apart from a local `labctl up` of the
// same lab. It reaches nothing on the network. Its errors exit 2.
func (g *globals) openInvite(ctx context.Context, file string) (*labState, invitedLab, error) {
	fail := func(err error) (*labState, invitedLab, error) {
		return nil, nil, &ExitError{Code: exitError, Err: err}
	}
	kubeconfig, err := os.ReadFile(file)
	if err != nil {
		return fail(fmt.Errorf("reading the invite: %w", err))
	}
	inv, err := g.env.OpenInvite(ctx, kubeconfig)
	if err != nil {
		return fail(err)
	}
	fail = func(err error) (*labState, invitedLab, error) {
		inv.Close()
		return nil, nil, &ExitError{Code: exitError, Err: err}
	}
	name, learner := inv.LabName(), inv.Learner()
	if err := class.ValidLearnerName("", learner); err != nil || isLabPath(name) {
		return fail(fmt.Errorf("%s is not an invite labctl wrote: ask your instructor for the file `labctl class invite` writes", file))
	}
	given := g.labPath()
	if given == "" {
		g.cfg.Set("lab", name)
	}
	st, err := g.loadLabState()
	if err != nil {
		if given == "" {
			err = fmt.Errorf("the invite is for lab %s: %w", name, err)
		}
		return fail(err)
	}
	if st.lab.Metadata.Name != name {
		return fail(fmt.Errorf("the invite is for lab %s, but --lab %s is lab %s: give the lab %s, or leave --lab out",
			name, given, st.lab.Metadata.Name, name))
	}
	inv.UseLab(st.lab)
	dir, err := statedir.Dir(os.Getenv, name)
	if err != nil {
		return fail(err)
	}
	practice := *st
	practice.lab = grading.Practice(st.lab)
	practice.catalog = st.catalog.ForInvited()
	practice.store = progress.NewStore(filepath.Join(dir, "invite", learner))
	practice.situation = grading.Invited(learner)
	return &practice, inv, nil
}

// invitedLine is the status line before an invited session.
func (g *globals) invitedLine(st *labState, inv invitedLab) {
	if !g.quiet() {
		fmt.Fprintf(g.streams.Err, st.catalog.Invited+"\n", inv.Learner())
	}
}
