package app

import (
	"context"
	"time"

	"github.com/labctl/labctl/checks"
	"github.com/labctl/labctl/grading"
	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
	"github.com/labctl/labctl/provision/class"
)

// classCluster is a class on its Kubernetes cluster as the class commands use
// it: one lab per learner, each learner's lab a liveLab once it is up.
// provision/class's *Class is the real one (through realClass).
type classCluster interface {
	// Learners lists the class's learners as the cluster reports them.
	Learners(ctx context.Context) ([]class.LearnerInfo, error)
	// Up creates or repairs a learner's lab and waits until it is ready.
	Up(ctx context.Context, learner string) error
	// Connect reaches a learner's lab that is up (class.ErrNoLearner,
	// provision.ErrNotUp).
	Connect(ctx context.Context, learner string) (liveLab, error)
	// Down removes a learner's lab.
	Down(ctx context.Context, learner string) error
	// Capacity is what the cluster can still schedule, and one learner's cost.
	Capacity(ctx context.Context) (class.Capacity, error)
	// Invite is a kubeconfig that reaches the learner's sandbox only, for
	// ttl, and when it expires.
	Invite(ctx context.Context, learner string, ttl time.Duration) ([]byte, time.Time, error)
	// CheckIsolation tries the learner's network wall
	// (class.ErrOpenNetwork when the cluster ignores it).
	CheckIsolation(ctx context.Context, learner string) error
	// Caveats says what the class cluster does not enforce.
	Caveats(ctx context.Context) []string
	// Outdated names the learners whose Pods run from other settings
	// than class up makes now.
	Outdated(ctx context.Context, names []string) []string
	// Renew stops the learner's Pods that run from other settings, so
	// that Up makes them anew (their /root and cluster's data kept).
	Renew(ctx context.Context, learner string) error
	// RevokeInvites ends every invite written for the learner.
	RevokeInvites(ctx context.Context, learner string) error
	Close() error
}

func (provisioned) OpenClass(ctx context.Context, cfg class.Config) (classCluster, error) {
	c, err := class.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return realClass{c}, nil
}

// realClass is a class on its cluster; its learners are liveLabs.
type realClass struct{ *class.Class }

func (c realClass) Connect(ctx context.Context, learner string) (liveLab, error) {
	l, err := c.Class.Connect(ctx, learner)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return l, nil
}

// invitedLab is a learner's own sandbox reached with an invite: the
// learner's shell and feedback checks; what only the instructor's labctl
// does fails with provision.ErrInstructorOnly.
type invitedLab interface {
	liveLab
	// Learner and LabName are whom and which lab the invite is for.
	Learner() string
	LabName() string
	// UseLab gives the lab the learner works on, once it is loaded.
	UseLab(l *lab.Lab)
}

func (provisioned) OpenInvite(ctx context.Context, kubeconfig []byte) (invitedLab, error) {
	v, err := class.OpenInvite(ctx, kubeconfig)
	if err != nil {
		return nil, err
	}
	// The lab is the invite's once it is loaded (UseLab); till then, one
	// with the defaults every lab has.
	l := &lab.Lab{}
	l.Default()
	return realInvite{Live: v.Live(l), invite: v}, nil
}

// realInvite is the live lab an invite reaches, with whom and which lab the
// invite is for.
type realInvite struct {
	*provision.Live
	invite *class.Invite
}

// RunChecks runs the checks the learner's sandbox can judge, for their own
// feedback; each that only the instructor's grade judges is an error that
// says so (grading.PracticeChecker).
func (v realInvite) RunChecks(ctx context.Context, r checks.Round) ([]checks.Result, error) {
	return grading.PracticeChecker{Checker: v.Live}.RunChecks(ctx, r)
}

func (v realInvite) Learner() string   { return v.invite.Learner() }
func (v realInvite) LabName() string   { return v.invite.LabName() }
func (v realInvite) UseLab(l *lab.Lab) { v.Live.Lab = l }
