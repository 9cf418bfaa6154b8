package homebound

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Sandbox is what writes to the home: the warden asks whether it runs and
// stops it.
type Sandbox interface {
	// Running says whether a sandbox runs (exists and is not ending).
	Running(ctx context.Context) (bool, error)
	// Stop stops it, saying why, and returns once it has ended: what it
	// wrote while it ended is then on the disk.
	Stop(ctx context.Context, why string) error
}

// Warden watches one home.
type Warden struct {
	Dir     string
	Limit   Limit
	Sandbox Sandbox
	// Every is the least time between two looks; a look that takes long
	// makes the next wait three times as long (up to maxWait), so that a
	// home of many names costs the warden about a quarter of its CPU.
	Every time.Duration
	// Log receives one line per act and per error.
	Log io.Writer

	ratchet Ratchet
}

// maxWait is the longest wait between two looks, however long a look took.
const maxWait = 15 * time.Second

// Run looks until ctx ends.
func (w *Warden) Run(ctx context.Context) error {
	for {
		took := w.Look(ctx)
		wait := min(max(w.Every, 3*took), maxWait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Look measures the home once and acts on it; it returns how long the
// measure took.
func (w *Warden) Look(ctx context.Context) time.Duration {
	w.ratchet.Limit = w.Limit
	start := time.Now()
	u, err := Measure(w.Dir, w.Limit)
	took := time.Since(start)
	if err != nil {
		fmt.Fprintf(w.Log, "homebound: %v\n", err)
		return took
	}
	running, err := w.Sandbox.Running(ctx)
	if err != nil {
		fmt.Fprintf(w.Log, "homebound: %v\n", err)
		return took
	}
	if !running {
		w.ratchet.Settle(u)
		return took
	}
	if !w.ratchet.Judge(u) {
		return took
	}
	why := Reason(u, w.Limit)
	if err := w.Sandbox.Stop(ctx, why); err != nil {
		fmt.Fprintf(w.Log, "homebound: stopping the sandbox: %v\n", err)
		w.ratchet.Forget()
		return took
	}
	fmt.Fprintf(w.Log, "homebound: stopped the sandbox: %s\n", why)
	// A sandbox started again begins from what the home holds now, what
	// the stopped one wrote while it ended included.
	if u, err := Measure(w.Dir, w.Limit); err == nil {
		w.ratchet.Settle(u)
	}
	return took
}

// Reason says why a sandbox was stopped over usage u of its home.
func Reason(u Usage, l Limit) string {
	return fmt.Sprintf("/root holds %s, beyond its bound of %s: the sandbox was stopped. "+
		"Started again (labctl class up), it may shrink /root but not grow it until /root is back within its bound", u, l)
}
