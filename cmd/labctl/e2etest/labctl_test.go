package e2etest

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRunStopsAtTheLimitAsCtrlCDoes: at its time limit the program is
// asked to stop (SIGTERM), and what it does then, its output and exit
// status, is what Run reports; a program that ends on its own is not
// signalled.
func TestRunStopsAtTheLimitAsCtrlCDoes(t *testing.T) {
	r := &Labctl{T: t, Bin: "/bin/bash"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	code, out, _ := r.Run(ctx, "-c", `trap 'echo cleaning up; exit 3' TERM; while :; do sleep 0.1; done`)
	if code != 3 || !strings.Contains(out, "cleaning up") {
		t.Errorf("at the limit: exit %d, output %q; want 3 after cleaning up", code, out)
	}
	code, out, _ = r.Run(context.Background(), "-c", `trap 'echo signalled' TERM; echo done; exit 4`)
	if code != 4 || out != "done\n" {
		t.Errorf("ending on its own: exit %d, output %q", code, out)
	}
}
