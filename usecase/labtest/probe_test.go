package labtest

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/labctl/labctl/grading/progress"
	"github.com/labctl/labctl/lab"
)

// probeEnv is a fakeEnv that also runs probes' admin scripts.
type probeEnv struct {
	*fakeEnv
	admin []string
}

func (p *probeEnv) RunAdminScript(_ context.Context, script string, _ io.Writer) (int, error) {
	p.admin = append(p.admin, script)
	p.log = append(p.log, "admin "+script)
	return 0, nil
}

// probeLab has one step judged through a probe: the probe runs the
// learner's /root/sync, which the fake stands for by its run script.
func probeLab() *lab.Lab {
	return &lab.Lab{
		Metadata: lab.Metadata{Name: "demo"},
		Steps: []lab.Step{{
			ID:     "sync",
			Checks: []lab.Check{fileCheck("has-sync", "/root/sync"), fileCheck("ran", "/root/ran")},
			Solve:  "touch /root/sync",
			Probe: &lab.Probe{Setup: "drift", Run: "touch /root/ran", Restore: "undo",
				Timeout: lab.Duration{Duration: time.Minute}, Needs: []string{"has-sync"}},
			Mistakes: []lab.Mistake{{Name: "no-script", Script: "touch /root/other", Fails: []string{"has-sync", "ran", lab.ProbeResult}}},
			Alternatives: []lab.Alternative{
				{Name: "also-good", Script: "touch /root/sync\ntouch /root/extra"},
			},
		}},
	}
}

func TestProbeAndAlternativesPass(t *testing.T) {
	env := &probeEnv{fakeEnv: newFakeEnv()}
	rep, _ := run(t, probeLab(), env.fakeEnv, "")
	// Without a way to run probes, the probe's result is an error.
	if rep.Passed {
		t.Fatal("a probe step passed on an environment that cannot run probes")
	}

	env = &probeEnv{fakeEnv: newFakeEnv()}
	rep, err := Run(context.Background(), env, Options{Lab: probeLab(), Store: testStore(t), Pause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed {
		t.Fatalf("failures: %v", rep.Failures())
	}
	want := []string{"sync/before", "sync/mistake no-script", "sync/reset", "sync/alternative", "sync/reset", "sync/solve", "sync/again", "grade", "sync/final-reset"}
	if got := kinds(rep); !slices.Equal(got, want) {
		t.Errorf("phases:\n got %q\nwant %q", got, want)
	}
	// The probe ran (setup, run, restore) after the alternative, the solve,
	// the pause and in the grade; never while its needs failed.
	if got := len(env.admin); got != 8 {
		t.Errorf("%d admin scripts, want 8 (setup and restore of 4 probes): %q", got, env.admin)
	}
}

func TestFailingAlternativeFails(t *testing.T) {
	l := probeLab()
	l.Steps[0].Alternatives[0].Script = "touch /root/elsewhere"
	env := &probeEnv{fakeEnv: newFakeEnv()}
	rep, err := Run(context.Background(), env, Options{Lab: l, Store: testStore(t), Pause: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed {
		t.Fatal("a lab whose alternative fails passed")
	}
	if !hasFailure(rep, "sync", "alternative also-good", "has-sync", "failed") {
		t.Errorf("no failure names the alternative and its failing check: %v", rep.Failures())
	}
}

func testStore(t *testing.T) *progress.Store { return progress.NewStore(t.TempDir()) }
