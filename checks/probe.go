package checks

import (
	"io/fs"
	"time"

	"github.com/labctl/labctl/internal/msg"
)

// checkWrittenDuringProbe requires the file whose information is fi to have
// been modified since the step's probe started. Without a probe in this
// round the check fails: the file could only have been written by hand.
func checkWrittenDuringProbe(env Env, shown string, fi fs.FileInfo) error {
	if env.ProbeStart.IsZero() {
		return failf(msg.FileNoProbe, shown)
	}
	if fi.ModTime().Before(env.ProbeStart) {
		return failf(msg.FileExpectProbeRun, shown, stamp(env.ProbeStart), stamp(fi.ModTime()))
	}
	// No run writes a file in the future: a modification time set ahead by
	// hand (touch -d) would otherwise pass as written by every probe.
	if now := env.now(); fi.ModTime().After(now.Add(time.Second)) {
		return failf(msg.FileModifiedLater, shown, msg.DateTime(fi.ModTime()), msg.DateTime(now))
	}
	return nil
}

func stamp(t time.Time) msg.Clock { return msg.TimeOfDayMilli(t) }
