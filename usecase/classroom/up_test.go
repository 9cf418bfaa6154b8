package classroom

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/labctl/labctl/internal/statusline"
	"github.com/labctl/labctl/provision/class"
)

// upRoom is a fakeClass as class up works on it.
type upRoom struct {
	*fakeClass
	outdated  []string
	renewed   []string
	isolation error
	tried     []string
	caveats   []string
}

func (r *upRoom) Renew(_ context.Context, l string) error {
	r.renewed = append(r.renewed, l)
	return nil
}

func (r *upRoom) Outdated(_ context.Context, names []string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(r.outdated, n) && !slices.Contains(r.renewed, n) {
			out = append(out, n)
		}
	}
	return out
}

func (r *upRoom) CheckIsolation(_ context.Context, l string) error {
	r.tried = append(r.tried, l)
	return r.isolation
}

func (r *upRoom) Caveats(context.Context) []string { return r.caveats }

func roomFor(n int) class.Capacity {
	return class.Capacity{Nodes: 1, FreeMemory: int64(n) << 30, FreeMilliCPU: int64(n) * 1000, LearnerMemory: 1 << 30, LearnerMilliCPU: 1000}
}

// Class up is a checklist: a status line a step, in order, each learner's
// outcome under its step, the wall tried from a learner that came up.
func TestUpIsAChecklist(t *testing.T) {
	r := &upRoom{fakeClass: &fakeClass{capacity: roomFor(10), failUp: map[string]error{"learner-1": errors.New("ImagePullBackOff")}},
		caveats: []string{"StorageClass standard does not enforce a claim's size"}}
	var out bytes.Buffer
	imagesMade := false
	res, err := Up(context.Background(), r, UpOptions{Lab: "two", Learners: Numbered(3), Parallel: 1,
		Images: func(context.Context) error { imagesMade = true; return nil }, Status: statusline.New(&out, statusline.Options{NoColor: true})})
	if err != nil || !imagesMade {
		t.Fatalf("up: %v, images made %t", err, imagesMade)
	}
	lines := []string{
		"Making the lab's images present", "Checking the cluster's room for 3 learner(s)",
		"Bringing up 3 learner(s) of lab two, 1 at a time", "✗ learner-1: ImagePullBackOff", "✓ learner-3 ready",
		"Trying the learners' network walls from learner-2", "✓ The learners are walled off from each other",
		"Reading what the class cluster enforces", "⚠ Not enforced by the class cluster: StorageClass standard does not enforce a claim's size.",
	}
	at := 0
	for _, l := range lines {
		i := strings.Index(out.String()[at:], l)
		if i < 0 {
			t.Fatalf("no %q after the line before:\n%s", l, out.String())
		}
		at += i
	}
	if res.Done != 2 || !slices.Equal(res.Failed, []string{"learner-1"}) || !slices.Equal(r.tried, []string{"learner-2"}) || res.Open != "" {
		t.Errorf("result %+v, walls tried from %q", res, r.tried)
	}
}

// Without room nothing is brought up; an open network and the learners on
// other settings are in the result; with RenewOutdated they are renewed.
func TestUpRefusesAndReports(t *testing.T) {
	r := &upRoom{fakeClass: &fakeClass{capacity: roomFor(1)}}
	res, err := Up(context.Background(), r, UpOptions{Learners: Numbered(2), Parallel: 2})
	var room *RoomError
	if !errors.As(err, &room) || len(r.done) != 0 || res.Done != 0 {
		t.Fatalf("no room: %v, learners touched %q", err, r.done)
	}
	r.capacity = roomFor(5)
	r.outdated = []string{"learner-2"}
	r.isolation = fmt.Errorf("%w: reached", class.ErrOpenNetwork)
	res, err = Up(context.Background(), r, UpOptions{Learners: Numbered(2), Parallel: 2})
	if err != nil || !res.OpenNetwork || !strings.Contains(res.Open, "reached") || !slices.Equal(res.Outdated, []string{"learner-2"}) || len(r.renewed) != 0 {
		t.Errorf("open network, outdated: %+v, %v, renewed %q", res, err, r.renewed)
	}
	res, err = Up(context.Background(), r, UpOptions{Learners: Numbered(2), Parallel: 2, RenewOutdated: true})
	if err != nil || !slices.Equal(res.Renewed, []string{"learner-2"}) || !slices.Equal(r.renewed, []string{"learner-2"}) || len(res.Outdated) != 0 {
		t.Errorf("renew: %+v, %v, renewed %q", res, err, r.renewed)
	}
}
