package homebound

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/labctl/labctl/internal/countio"
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
	// Poll, when set, is how often the warden asks, between two looks, how
	// much of the file system that holds Dir is used (statfs: one system
	// call, whatever the home holds). When it grew since the last look by
	// more than the home may still take, whoever grew it, the warden looks
	// at once: one allocation (fallocate) that takes a home past its bound
	// is seen within Poll and a walk, not at the next look. Growth of a
	// neighbour's on the same file system costs only a look.
	Poll time.Duration
	// Log receives one line per act and per error.
	Log io.Writer

	ratchet Ratchet
	// held is what the home held at the last look (-1: unknown).
	held int64
	// base is how much of the file system was used when the last look
	// began (-1: unknown): growth is counted from there, so that what is
	// written while a look measures is not missed.
	base int64
}

// maxWait is the longest wait between two looks, however long a look took.
const maxWait = 15 * time.Second

// Run looks until ctx ends.
func (w *Warden) Run(ctx context.Context) error {
	w.held = -1
	for {
		took := w.Look(ctx)
		wait := min(max(w.Every, 3*took), maxWait)
		if !w.wait(ctx, wait, took) {
			return nil
		}
	}
}

// wait waits d, or less when the file system that holds the home grew by
// more than the home may still take (Poll), but not less than 3*took, so
// that looks keep to about a quarter of the warden's CPU; it returns false
// when ctx ended.
func (w *Warden) wait(ctx context.Context, d, took time.Duration) bool {
	start := time.Now()
	deadline, earliest := start.Add(d), start.Add(min(3*took, d))
	base := w.base
	room := int64(-1)
	if w.held >= 0 && base >= 0 {
		room = max(w.Limit.Bytes-w.held, 0)
	}
	for {
		next := time.Until(deadline)
		if w.Poll > 0 && room >= 0 {
			next = min(next, w.Poll)
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(next):
		}
		now := time.Now()
		if !now.Before(deadline) {
			return true
		}
		used, uerr := usedSpace(w.Dir)
		if uerr == nil && used-base > room && !now.Before(earliest) {
			fmt.Fprintf(w.Log, "homebound: the file system of %s grew by %s since the last look, more than the home may still take (%s): looking now\n",
				w.Dir, countio.Size(used-base), countio.Size(room))
			return true
		}
	}
}

// Look measures the home once and acts on it; it returns how long the
// measure took.
func (w *Warden) Look(ctx context.Context) time.Duration {
	w.ratchet.Limit = w.Limit
	w.base = -1
	if used, err := usedSpace(w.Dir); err == nil {
		w.base = used
	}
	start := time.Now()
	u, err := Measure(w.Dir, w.Limit)
	took := time.Since(start)
	if err != nil {
		fmt.Fprintf(w.Log, "homebound: %v\n", err)
		w.held = -1
		return took
	}
	w.held = u.Bytes
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
