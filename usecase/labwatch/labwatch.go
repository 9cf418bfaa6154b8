// Package labwatch reloads a lab's file while `labctl shell --watch` or
// `labctl ui --watch` runs on it: the author's edit reaches the running
// shell and page, and an edit that does not load, or that needs the
// environment rebuilt, keeps the last good lab and says what is wrong.
//
// Only what a running environment can take is reloaded: the steps (their
// texts, checks, setup, probes, mistakes) and the translations: their
// scripts run where they always do, in the sandbox or the probe's container
// with the identities `labctl up` made. An edit of the cluster, the sandbox
// or the learner's access, or one whose checks read more than the grader was
// granted at up (another object, an access or reach check, a first probe),
// needs `labctl up`, which asks again for what it must (the lab's risks);
// the fixtures are copied into the sandbox at up, so an edit of them needs
// it too.
package labwatch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/labctl/labctl/internal/labread"
	"github.com/labctl/labctl/lab"
)

// DefaultInterval is how often the lab's file is read.
const DefaultInterval = 200 * time.Millisecond

// Change is one edit of the lab's file as the watcher found it.
type Change struct {
	// Lab is the edited lab and Digest its digest (lab.Digest), when it
	// loaded and the running environment can take it; else nil.
	Lab    *lab.Lab
	Digest string
	// Err says why the edit was not taken: it does not load (with the
	// loader's message), or it needs `labctl up`.
	Err error
	// Warnings are the edited lab's lint warnings.
	Warnings []lab.Warning
}

// Watcher reads File every Interval and, when its bytes change, loads the
// lab with Load and compares it with Running, the lab the environment was
// brought up with.
type Watcher struct {
	File     string
	Load     func() (*lab.Lab, string, error)
	Running  *lab.Lab
	Interval time.Duration
	// Loaded is the sum (Sum) of the bytes Running was loaded from: an edit
	// made after that and before Run is seen too. Zero reads the file when
	// Run starts.
	Loaded [sha256.Size]byte
}

// Sum is the sum a Watcher compares the lab file's bytes by.
func Sum(b []byte) [sha256.Size]byte { return sha256.Sum256(b) }

// Run calls apply with each change until ctx ends: each time the file's
// bytes differ from the last read (the same bytes saved again are no
// change).
func (w *Watcher) Run(ctx context.Context, apply func(Change)) {
	interval := w.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	last := w.Loaded
	if last == ([sha256.Size]byte{}) {
		last = w.sum()
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		sum := w.sum()
		if sum == last || sum == ([sha256.Size]byte{}) {
			continue // unchanged, or missing for a moment (an editor's save)
		}
		last = sum
		apply(w.change())
	}
}

// sum is the digest of the file's bytes; zero when it cannot be read (as
// labread reads a lab file: a link, a FIFO or a device is not read).
func (w *Watcher) sum() [sha256.Size]byte {
	b, err := labread.ReadFile(w.File)
	if err != nil {
		return [sha256.Size]byte{}
	}
	return Sum(b)
}

func (w *Watcher) change() Change {
	l, digest, err := w.Load()
	if err != nil {
		return Change{Err: err}
	}
	if why := NeedsUp(w.Running, l); len(why) > 0 {
		return Change{Err: fmt.Errorf("this edit changes %s, which the running lab cannot take: run `labctl up` to rebuild it (your work in /root stays)", strings.Join(why, ", "))}
	}
	return Change{Lab: l, Digest: digest, Warnings: l.Lint()}
}

// NeedsUp names what next changes of running that only `labctl up` can
// bring to a live environment; none means the steps and texts alone changed.
func NeedsUp(running, next *lab.Lab) []string {
	var why []string
	if running.Metadata.Name != next.Metadata.Name {
		why = append(why, "metadata.name")
	}
	for _, part := range []struct {
		name string
		a, b any
	}{
		{"cluster", running.Cluster, next.Cluster},
		{"sandbox", running.Sandbox, next.Sandbox},
		{"access", running.Access, next.Access},
	} {
		if !sameJSON(part.a, part.b) {
			why = append(why, part.name)
		}
	}
	if !slices.Equal(riskKeys(running), riskKeys(next)) {
		why = append(why, "what it may do to this machine (its risks)")
	}
	// The grader's and the probe's identities were granted at up for what
	// the running lab's checks and probes needed: more needs an up.
	if reads := running.KubeReads(); slices.ContainsFunc(next.KubeReads(), func(r lab.KubeRead) bool { return !slices.Contains(reads, r) }) {
		why = append(why, "the objects its checks read")
	}
	if next.AsksAccess() && !running.AsksAccess() {
		why = append(why, "an access check (the grader's right to ask the API server)")
	}
	if ns := running.ReachNamespaces(); slices.ContainsFunc(next.ReachNamespaces(), func(n string) bool { return !slices.Contains(ns, n) }) {
		why = append(why, "the namespaces its reach checks start Pods in")
	}
	if ns := running.MatrixNamespaces(); slices.ContainsFunc(next.MatrixNamespaces(), func(n string) bool { return !slices.Contains(ns, n) }) {
		why = append(why, "the namespaces its matrix checks keep probers in")
	}
	if hasProbe(next) && !hasProbe(running) {
		why = append(why, "a probe (the probe's identity)")
	}
	return why
}

func hasProbe(l *lab.Lab) bool {
	return slices.ContainsFunc(l.Steps, func(s lab.Step) bool { return s.Probe != nil })
}

func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

func riskKeys(l *lab.Lab) []string {
	var keys []string
	for _, r := range l.Risks() {
		keys = append(keys, r.Key())
	}
	slices.Sort(keys)
	return keys
}
