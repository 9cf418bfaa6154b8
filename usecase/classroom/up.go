package classroom

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/provision/class"
)

// Room is a class's cluster as `class up` works on it.
type Room interface {
	Cluster
	Upper
	// Renew stops the learner's Pods that run from other settings, so
	// that Up makes them anew.
	Renew(ctx context.Context, learner string) error
	// Outdated names those of names whose Pods run from other settings.
	Outdated(ctx context.Context, names []string) []string
	// CheckIsolation tries the learner's network wall
	// (class.ErrOpenNetwork when the cluster ignores it).
	CheckIsolation(ctx context.Context, learner string) error
	// Caveats says what the class cluster does not enforce.
	Caveats(ctx context.Context) []string
}

// UpOptions is one `class up`.
type UpOptions struct {
	// Lab is the lab's name, for the status lines.
	Lab      string
	Learners []string
	// Parallel learners come up at once.
	Parallel int
	// RenewOutdated makes anew the Pods of learners that run from other
	// settings before they come up.
	RenewOutdated bool
	// Images, when set, makes the lab's images present (a lab whose
	// learners have nodes), as the first step.
	Images func(context.Context) error
	// Status says each step; nil says nothing.
	Status *statusline.Logger
}

// UpResult is what a class up did.
type UpResult struct {
	Run
	// Renewed are the learners whose Pods were made anew.
	Renewed []string
	// Outdated are learners up whose Pods run from other settings, left
	// as they are (without RenewOutdated).
	Outdated []string
	// Open is the problem with the learners' network walls ("" when they
	// hold or were not tried); OpenNetwork is set when the cluster
	// ignores them, rather than the try failing.
	Open        string
	OpenNetwork bool
	// Caveats are what the class cluster does not enforce.
	Caveats []string
}

// Up brings a class up as a checklist, one status line a step: the lab's
// images, the room for the learners not yet up, the learners (each one's
// outcome a line of its own), their network wall and what the cluster does
// not enforce. It fails with a *RoomError without room, and with ctx's
// error when interrupted (what is up stays up); learners that failed are
// in the result's Failed, not an error.
func Up(ctx context.Context, r Room, o UpOptions) (*UpResult, error) {
	st := o.Status
	if st == nil {
		st = statusline.Discard()
	}
	res := &UpResult{}
	if o.Images != nil {
		st.Start("Making the lab's images present")
		if err := o.Images(ctx); err != nil {
			st.End(false)
			return res, err
		}
	}
	st.Start(fmt.Sprintf("Checking the cluster's room for %d learner(s)", len(o.Learners)))
	waiting := func(nodes []string) {
		st.Update(fmt.Sprintf("waiting up to %v for node(s) %s to be Ready", NodeWait, strings.Join(nodes, ", ")))
	}
	if err := CheckRoom(ctx, r, o.Learners, waiting); err != nil {
		st.End(false)
		return res, err
	}
	var upper Upper = r
	if o.RenewOutdated {
		if old := r.Outdated(ctx, o.Learners); len(old) > 0 {
			res.Renewed = old
			upper = renewing{r, old}
		}
	}
	st.Start(fmt.Sprintf("Bringing up %d learner(s) of lab %s, %d at a time", len(o.Learners), o.Lab, o.Parallel))
	if len(res.Renewed) > 0 {
		st.Printf("Making anew the Pods of %s, which run from other settings: their shells end; their /root and their cluster's objects are kept.",
			strings.Join(res.Renewed, ", "))
	}
	res.Run = UpAll(ctx, upper, o.Learners, o.Parallel, func(out Outcome) {
		switch {
		case out.Err == nil:
			st.Printf("✓ %s ready (%s)", out.Learner, statusline.Elapsed(out.Took))
		case !out.Interrupted:
			st.Printf("✗ %s: %v", out.Learner, out.Err)
		}
		st.Update(fmt.Sprintf("%d of %d ready", out.Done, len(o.Learners)))
	})
	st.End(res.Done == len(o.Learners))
	if err := ctx.Err(); err != nil {
		return res, err
	}
	up := slices.DeleteFunc(slices.Clone(o.Learners), func(n string) bool { return slices.Contains(res.Failed, n) })
	if len(up) > 0 {
		st.Start("Trying the learners' network walls from " + up[0])
		err := r.CheckIsolation(ctx, up[0])
		switch {
		case err == nil:
			st.Printf("✓ The learners are walled off from each other: from %s's Pods the class cluster's API server is out of reach.", up[0])
		case errors.Is(err, class.ErrOpenNetwork):
			res.Open, res.OpenNetwork = err.Error(), true
			st.Printf("⚠ WARNING: the learners are not walled off from each other. %v.", err)
		default:
			res.Open = err.Error()
			st.Printf("⚠ Could not try the learners' network walls: %v", err)
		}
		st.End(err == nil)
	}
	st.Start("Reading what the class cluster enforces")
	res.Caveats = r.Caveats(ctx)
	for _, c := range res.Caveats {
		st.Printf("⚠ Not enforced by the class cluster: %s.", c)
	}
	st.End(true)
	if !o.RenewOutdated {
		res.Outdated = r.Outdated(ctx, up)
	}
	return res, ctx.Err()
}

// renewing brings learners up as class up does, first stopping the Pods
// of those in old that run from other settings (Room.Renew).
type renewing struct {
	Room
	old []string
}

func (r renewing) Up(ctx context.Context, learner string) error {
	if slices.Contains(r.old, learner) {
		if err := r.Renew(ctx, learner); err != nil {
			return err
		}
	}
	return r.Room.Up(ctx, learner)
}
