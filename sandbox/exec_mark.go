package sandbox

import (
	"crypto/rand"
	"encoding/hex"
)

// ExecMarkVar names the variable every exec's process in the sandbox gets,
// on either runtime, with a value of its own (NewExecMark), so that what
// the process started can be found and killed with it (KillMarkedCmd):
// children inherit it, in the process group or out of it (a port-forward a
// script left in the background, a setsid).
const ExecMarkVar = "LABCTL_EXEC"

// NewExecMark is a fresh value for ExecMarkVar.
func NewExecMark() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// KillMarkedCmd is the command that, run as root in the container, kills
// every process whose environment holds ExecMarkVar=mark.
func KillMarkedCmd(mark string) []string {
	return []string{"sh", "-c", killMarked, "sh", mark}
}

// killMarked stops, then kills, every process of the container whose
// environment holds the mark given as $1 ($$, the killer, has none). It
// looks three times before the kill, so that a process forked while it
// looked is stopped too.
const killMarked = `m="` + ExecMarkVar + `=$1"
found=
for _ in 1 2 3; do
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$$" ] && continue
    case " $found " in *" $p "*) continue ;; esac
    if tr '\0' '\n' < "$d/environ" 2> /dev/null | grep -qxF "$m"; then
      kill -STOP "$p" 2> /dev/null && found="$found $p"
    fi
  done
done
[ -z "$found" ] || kill -KILL $found 2> /dev/null
exit 0`
