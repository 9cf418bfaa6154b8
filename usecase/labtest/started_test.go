package labtest

import (
	"context"
	"testing"
	"time"

	"github.com/labctl/labctl/grading/progress"
)

func TestAStepStartsWhenTheTestReachesIt(t *testing.T) {
	store := progress.NewStore(t.TempDir())
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	l := goodLab()
	r := &runner{env: newFakeEnv(), o: Options{Lab: l, Store: store, Now: func() time.Time { return at }, Status: silent{}}, rep: &Report{}}
	r.stepStarted(context.Background(), &l.Steps[1])
	if r.stopped || len(r.rep.Phases) != 0 {
		t.Fatalf("stopped %v, phases %+v", r.stopped, r.rep.Phases)
	}
	p, err := store.Load(l.Metadata.Name)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.StepStart(l.Steps[1].ID); !got.Equal(at) {
		t.Errorf("step %s starts at %v, want %v", l.Steps[1].ID, got, at)
	}
	if got := p.StepStart(l.Steps[0].ID); !got.IsZero() {
		t.Errorf("step %s starts at %v, want no start", l.Steps[0].ID, got)
	}
}
