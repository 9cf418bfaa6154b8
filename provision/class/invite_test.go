package class

import (
	"context"
	"errors"
	"testing"

	"github.com/labctl/labctl/lab"
	"github.com/labctl/labctl/provision"
)

func TestInviteHasNoLearnerConfig(t *testing.T) {
	l := &lab.Lab{Metadata: lab.Metadata{Name: "shop"}}
	l.Cluster.Namespaces = []string{"shop"}
	live := provision.NewLive(l, &inviteRuntime{}, provision.Identity{}, provision.Identity{})
	if _, err := live.LearnerConfig(context.Background()); !errors.Is(err, provision.ErrInstructorOnly) {
		t.Errorf("an invite's LearnerConfig: %v, want ErrInstructorOnly", err)
	}
}
