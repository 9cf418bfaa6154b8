package checks

import (
	"os"
	"syscall"
	"time"
)

// changeTime is fi's inode change time, which the kernel sets whenever the
// file is written, linked, renamed or has its mode or owner changed, and
// which nothing the learner runs can set back.
func changeTime(fi os.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec)), true
}
