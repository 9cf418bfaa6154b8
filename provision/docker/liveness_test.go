package docker

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/docker/docker/api/types/container"
)

func TestStateReason(t *testing.T) {
	for _, tc := range []struct {
		state *container.State
		want  string
	}{
		{&container.State{Running: true}, ""},
		{&container.State{Running: true, Paused: true}, "it is paused"},
		{&container.State{Running: true, Restarting: true}, "it is restarting"},
		{&container.State{OOMKilled: true}, "it was killed for lack of memory"},
		{&container.State{Dead: true}, "it is dead"},
		{&container.State{Status: "exited"}, "it is stopped"},
		{nil, "its state is unknown"},
	} {
		if got := stateReason(tc.state); got != tc.want {
			t.Errorf("stateReason(%+v) = %q, want %q", tc.state, got, tc.want)
		}
	}
}

func TestProbeFirstLine(t *testing.T) {
	if got := probeReason(0, errors.New("\n OCI runtime exec failed: fork: resource temporarily unavailable\ngoroutine 1 [running]:\n"), "", ""); got != "it cannot start a process: OCI runtime exec failed: fork: resource temporarily unavailable" {
		t.Errorf("probeReason = %q", got)
	}
}

func TestPidsReason(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{"12\n512\n", ""},
		{"480\n512\n", ""},
		{"481\n512\n", "its processes use 481 of its 512 pids"},
		{"512\n512\n", "its processes use 512 of its 512 pids"},
		{"40\nmax\n", ""},
		{"", ""},
		{"7\n", ""},
	} {
		if got := pidsReason(tc.out); got != tc.want {
			t.Errorf("pidsReason(%q) = %q, want %q", tc.out, got, tc.want)
		}
	}
}

func TestProbeReason(t *testing.T) {
	for _, tc := range []struct {
		code        int
		err         error
		out, errOut string
		want        string
	}{
		{0, nil, "12\n512\n", "", ""},
		// cgroup v1: v2's files are missing, cat says so and exits 1.
		{1, nil, "12\n512\n", "cat: /sys/fs/cgroup/pids.current: No such file or directory\n", ""},
		{1, nil, "500\n512\n", "cat: /sys/fs/cgroup/pids.current: No such file or directory\n", "its processes use 500 of its 512 pids"},
		// The runtime could not start cat: the engine reports it as an exit
		// code with the complaint as output, not as an error.
		{126, nil, "OCI runtime exec failed: exec failed: unable to start container process: read init-p: connection reset by peer: unknown\n", "",
			"it cannot start a process: OCI runtime exec failed: exec failed: unable to start container process: read init-p: connection reset by peer: unknown"},
		{126, nil, "", "", "it cannot start a process: exit code 126"},
		// A cat of the learner's that exits 126 shows its words, escaped.
		{126, nil, "\x1b]52;c;aGk=\a owned\n", "", "it cannot start a process: \\x1b]52;c;aGk=\\x07 owned"},
		{-1, errors.New("attaching to exec of cat in x: EOF"), "", "", "it cannot start a process: attaching to exec of cat in x: EOF"},
		{-1, fmt.Errorf("running cat in x: %w", context.DeadlineExceeded), "", "", "a command did not finish within " + ProbeTimeout.String()},
	} {
		if got := probeReason(tc.code, tc.err, tc.out, tc.errOut); got != tc.want {
			t.Errorf("probeReason(%d, %v, %q, %q) = %q, want %q", tc.code, tc.err, tc.out, tc.errOut, got, tc.want)
		}
	}
}
