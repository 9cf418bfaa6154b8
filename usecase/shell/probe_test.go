package shell

import (
	"context"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/labctl/labctl/lab"
)

// fakeProber records the scripts a probe runs.
type fakeProber struct {
	mu  sync.Mutex
	log []string
}

func (f *fakeProber) RunAdminScript(_ context.Context, script string, _ io.Writer) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, "admin:"+script)
	return 0, nil
}

func (f *fakeProber) RunScript(_ context.Context, script string, _, _ io.Writer) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, "run:"+script)
	return 0, nil
}

func (f *fakeProber) ran() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

// A step with a probe is never checked after a command, even when its
// checks would pass: the probe changes the cluster and runs only when the
// learner asks, and then through the probe.
func TestProbeRunsOnlyOnRequest(t *testing.T) {
	p := &fakeProber{}
	c := newFakeChecker(true)
	h := start(t, c, func(cfg *Config) {
		cfg.Lab.Steps[0].Probe = &lab.Probe{Setup: "drift", Run: "/root/sync.sh", Restore: "undo", Timeout: lab.Duration{Duration: time.Second}}
		cfg.Probe = p
	})
	h.waitScreen(t, "Step 1/2")
	h.shell.print(t, prompt+command+"created\r\n"+done("0")+prompt)
	time.Sleep(200 * time.Millisecond)
	if n := c.count(); n != 0 || len(p.ran()) != 0 {
		t.Fatalf("a command ran %d rounds and the probe %v; a probe step waits for lab check", n, p.ran())
	}
	h.shell.print(t, request("check", "p1"))
	h.waitTyped(t, "p1\a")
	h.waitScreen(t, "Next, step 2/2: Second things")
	if got, want := p.ran(), []string{"admin:drift", "run:/root/sync.sh", "admin:undo"}; !reflect.DeepEqual(got, want) {
		t.Errorf("probe ran %v, want %v", got, want)
	}
	if got := h.prog.recorded(); !reflect.DeepEqual(got, []string{"one:pass"}) {
		t.Errorf("recorded %v, want [one:pass]", got)
	}
}
